package pbfleet

// Taking and keeping leases: claim-next, claim by id, heartbeat and renew.

import (
	"context"
	"encoding/json"
	"net/http"
)

// ClaimNextRequest asks for the next due jobs, in claim order.
type ClaimNextRequest struct {
	WorkerID       string
	LeaseSeconds   int // 0: the server's default (30)
	Limit          int // 1 to 100; 0: 1
	ProbeKeyPrefix string
	Queues         []string // none: every queue the client may take
}

// ClaimedJob is a won job and the lease token of that claim.
type ClaimedJob struct {
	Job        QueueJob `json:"job"`
	LeaseToken string   `json:"leaseToken"`
}

// ClaimNext claims up to Limit due jobs.
func (c *Client) ClaimNext(ctx context.Context, r ClaimNextRequest) ([]ClaimedJob, error) {
	const op = "claimNext"
	if err := checkWorkerID(op, r.WorkerID); err != nil {
		return nil, err
	}
	body, err := claimFields(op, r)
	if err != nil {
		return nil, err
	}
	body["workerId"] = r.WorkerID
	var answer struct {
		Jobs *[]ClaimedJob `json:"jobs"`
	}
	if err := c.call(ctx, op, http.MethodPost, "/api/fleet/claim-next", body, &answer); err != nil {
		return nil, err
	}
	if answer.Jobs == nil {
		return nil, &ProtocolError{Op: op, Message: "answer has no `jobs`"}
	}
	if err := checkClaimed(op, *answer.Jobs); err != nil {
		return nil, err
	}
	return *answer.Jobs, nil
}

// claimFields checks a claim's fields (ClaimNext's, and CompleteAndClaim's
// claimNext) and gives them as the server reads them, without the worker id.
func claimFields(op string, r ClaimNextRequest) (map[string]any, error) {
	if err := checkLease(op, r.LeaseSeconds); err != nil {
		return nil, err
	}
	if r.Limit < 0 || r.Limit > 100 {
		return nil, argErr(op, "Limit must be 1 to 100 (0: 1; got %d)", r.Limit)
	}
	if len(r.ProbeKeyPrefix) > maxProbeKeyBytes {
		return nil, argErr(op, "ProbeKeyPrefix must be at most %d bytes", maxProbeKeyBytes)
	}
	if err := checkQueues(op, r.Queues); err != nil {
		return nil, err
	}
	body := map[string]any{}
	if r.LeaseSeconds != 0 {
		body["leaseSeconds"] = r.LeaseSeconds
	}
	if r.Limit != 0 {
		body["limit"] = r.Limit
	}
	if r.ProbeKeyPrefix != "" {
		body["probeKeyPrefix"] = r.ProbeKeyPrefix
	}
	if len(r.Queues) == 1 {
		body["queue"] = r.Queues[0]
	} else if len(r.Queues) > 1 {
		body["queue"] = r.Queues
	}
	return body, nil
}

func checkClaimed(op string, jobs []ClaimedJob) error {
	for _, j := range jobs {
		if j.Job.ID == "" {
			return &ProtocolError{Op: op, Message: "a claimed job has no id"}
		}
	}
	return nil
}

// HeartbeatLease is one lease to renew, with the handler's latest progress.
type HeartbeatLease struct {
	JobID      string          `json:"jobId"`
	LeaseToken string          `json:"leaseToken,omitempty"`
	Progress   json.RawMessage `json:"progress,omitempty"`
}

// RenewResult is one renew's answer; Reason "timed_out" when refused past the job's deadline.
type RenewResult struct {
	JobID   string   `json:"jobId"`
	Renewed bool     `json:"renewed"`
	Reason  string   `json:"reason,omitempty"`
	Job     *JobView `json:"job,omitempty"`
}

// Heartbeat renews many leases of one holder, MaxBatchItems per call (each
// call one transaction). Results are in the order of leases.
func (c *Client) Heartbeat(ctx context.Context, workerID string, leaseSeconds int, leases []HeartbeatLease) ([]RenewResult, error) {
	const op = "heartbeat"
	if err := checkWorkerID(op, workerID); err != nil {
		return nil, err
	}
	if err := checkLease(op, leaseSeconds); err != nil {
		return nil, err
	}
	if len(leases) == 0 {
		return nil, argErr(op, "no leases to renew")
	}
	for i, l := range leases {
		if err := checkIDs(op, l.JobID, workerID); err != nil {
			return nil, argErr(op, "leases[%d]: %s", i, err.(*ArgumentError).Message)
		}
		if l.Progress != nil && (len(l.Progress) > MaxProgressBytes || !json.Valid(l.Progress)) {
			return nil, argErr(op, "leases[%d].Progress must be valid JSON of at most %d bytes", i, MaxProgressBytes)
		}
	}
	out := make([]RenewResult, 0, len(leases))
	for start := 0; start < len(leases); start += MaxBatchItems {
		chunk := leases[start:min(start+MaxBatchItems, len(leases))]
		body := map[string]any{"workerId": workerID, "leases": chunk}
		if leaseSeconds != 0 {
			body["leaseSeconds"] = leaseSeconds
		}
		var answer struct {
			Results []RenewResult `json:"results"`
		}
		if err := c.call(ctx, op, http.MethodPost, "/api/fleet/heartbeat", body, &answer); err != nil {
			return out, err
		}
		if err := matchResults(op, len(chunk), len(answer.Results), func(i int) bool { return answer.Results[i].JobID == chunk[i].JobID }); err != nil {
			return out, err
		}
		out = append(out, answer.Results...)
	}
	return out, nil
}

// ClaimResult is a claim by id's answer. AlreadyHeld: the caller already
// held this live lease (a retry after a lost answer). Reason: why a job the
// claim would win was held back (queue_not_allowed, paused, ...).
type ClaimResult struct {
	Claimed     bool     `json:"claimed"`
	AlreadyHeld bool     `json:"alreadyHeld"`
	LeaseToken  string   `json:"leaseToken"`
	Reason      string   `json:"reason"`
	Job         *JobView `json:"job"`
}

// Claim claims one job by id.
func (c *Client) Claim(ctx context.Context, jobID, workerID string, leaseSeconds int) (ClaimResult, error) {
	const op = "claim"
	if err := checkIDs(op, jobID, workerID); err != nil {
		return ClaimResult{}, err
	}
	if err := checkLease(op, leaseSeconds); err != nil {
		return ClaimResult{}, err
	}
	body := map[string]any{"jobId": jobID, "workerId": workerID}
	if leaseSeconds != 0 {
		body["leaseSeconds"] = leaseSeconds
	}
	var answer ClaimResult
	err := c.call(ctx, op, http.MethodPost, "/api/fleet/claim", body, &answer)
	return answer, err
}

// RenewRequest renews one lease; Progress (any JSON, at most 4096 bytes) is
// stored when the renew succeeds.
type RenewRequest struct {
	JobID, WorkerID string
	LeaseSeconds    int
	LeaseToken      string
	Progress        any
}

// Renew renews one lease.
func (c *Client) Renew(ctx context.Context, r RenewRequest) (RenewResult, error) {
	const op = "renew"
	if err := checkIDs(op, r.JobID, r.WorkerID); err != nil {
		return RenewResult{}, err
	}
	if err := checkLease(op, r.LeaseSeconds); err != nil {
		return RenewResult{}, err
	}
	body := map[string]any{"jobId": r.JobID, "workerId": r.WorkerID}
	if r.LeaseSeconds != 0 {
		body["leaseSeconds"] = r.LeaseSeconds
	}
	if r.LeaseToken != "" {
		body["leaseToken"] = r.LeaseToken
	}
	if r.Progress != nil {
		raw, err := jsonOf(r.Progress, MaxProgressBytes)
		if err != nil {
			return RenewResult{}, argErr(op, "Progress %v", err)
		}
		body["progress"] = raw
	}
	var answer RenewResult
	if err := c.call(ctx, op, http.MethodPost, "/api/fleet/renew", body, &answer); err != nil {
		return RenewResult{}, err
	}
	answer.JobID = r.JobID
	return answer, nil
}
