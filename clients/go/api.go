package pbfleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"unicode"
	"unicode/utf8"
)

// The server's limits (openapi.json), checked before any request.
const (
	MaxBatchItems        = 100     // heartbeat leases and complete releases per call
	MaxEnqueuePerCall    = 1000    // enqueue jobs per call
	MaxClaimQueues       = 16      // claim-next's queue list
	MaxResultBytes       = 1 << 20 // a release's result, serialized
	MaxPayloadBytes      = 1 << 20 // an enqueued payload, serialized
	MaxProgressBytes     = 4096    // a renew's progress, serialized
	MaxErrorBytes        = 65536   // a release's error text
	MaxRateLimitedFor    = 86400   // seconds
	MinLeaseSeconds      = 1
	MaxLeaseSeconds      = 3600
	maxJobIDBytes        = 255
	maxWorkerIDBytes     = 256
	maxProbeKeyBytes     = 1024
	maxTimeoutSeconds    = 86400
	maxStartWithinSecond = 2592000
)

var queueNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)

// JobView is the lease protocol's view of a job.
type JobView struct {
	ID             string `json:"id"`
	ProbeKey       string `json:"probe_key"`
	Status         string `json:"status"`
	ClaimedBy      string `json:"claimed_by"`
	LeaseExpiresAt string `json:"lease_expires_at"`
	Version        int64  `json:"version"`
}

// QueueJob is a job as claim-next, cancel and retry answer it.
type QueueJob struct {
	JobView
	Queue          string          `json:"queue"`
	Payload        json.RawMessage `json:"payload"`
	Priority       int             `json:"priority"`
	RunAt          string          `json:"run_at"`
	Attempts       int             `json:"attempts"`
	MaxAttempts    int             `json:"max_attempts"`
	LastError      string          `json:"last_error"`
	DeadLetteredAt string          `json:"dead_lettered_at"`
	UniqueKey      string          `json:"unique_key"`
	Progress       json.RawMessage `json:"progress"`
	GroupKey       string          `json:"group_key"`
	TimeoutSeconds int             `json:"timeout_seconds"`
	Deadline       *string         `json:"deadline"`
}

// EnqueueItem is one job to enqueue. Zero values mean "not given".
type EnqueueItem struct {
	ProbeKey string
	Payload  any // any JSON value; nil: none
	// RunAt: ISO-8601 with a zone, or PocketBase's text form. Not with DelaySeconds.
	RunAt        string
	DelaySeconds float64
	Priority     int
	// MaxAttempts: nil for the server's default (25); 0 means no cap.
	MaxAttempts        *int
	UniqueKey          string
	Queue              string
	Group              string
	TimeoutSeconds     int
	StartWithinSeconds int
}

// EnqueuedJob is enqueue's answer for one item; Created false: its UniqueKey
// matched a live job, whose id this is.
type EnqueuedJob struct {
	ID       string `json:"id"`
	ProbeKey string `json:"probeKey"`
	Created  bool   `json:"created"`
}

type enqueueWire struct {
	ProbeKey           string          `json:"probeKey"`
	Payload            json.RawMessage `json:"payload,omitempty"`
	RunAt              string          `json:"runAt,omitempty"`
	DelaySeconds       *float64        `json:"delaySeconds,omitempty"`
	Priority           int             `json:"priority,omitempty"`
	MaxAttempts        *int            `json:"maxAttempts,omitempty"`
	UniqueKey          string          `json:"uniqueKey,omitempty"`
	Queue              string          `json:"queue,omitempty"`
	Group              string          `json:"group,omitempty"`
	TimeoutSeconds     int             `json:"timeoutSeconds,omitempty"`
	StartWithinSeconds int             `json:"startWithinSeconds,omitempty"`
}

func checkEnqueueItem(op string, i int, it EnqueueItem) (enqueueWire, error) {
	at := fmt.Sprintf("jobs[%d]", i)
	w := enqueueWire{ProbeKey: it.ProbeKey, RunAt: it.RunAt, Priority: it.Priority, MaxAttempts: it.MaxAttempts,
		UniqueKey: it.UniqueKey, Queue: it.Queue, Group: it.Group, TimeoutSeconds: it.TimeoutSeconds, StartWithinSeconds: it.StartWithinSeconds}
	switch {
	case it.ProbeKey == "" || len(it.ProbeKey) > maxProbeKeyBytes:
		return w, argErr(op, "%s.ProbeKey must be 1 to %d bytes (got %d)", at, maxProbeKeyBytes, len(it.ProbeKey))
	case it.RunAt != "" && it.DelaySeconds != 0:
		return w, argErr(op, "%s: give RunAt or DelaySeconds, not both", at)
	case it.DelaySeconds < 0 || it.DelaySeconds > 3153600000:
		return w, argErr(op, "%s.DelaySeconds must be 0 to 3153600000 (got %v)", at, it.DelaySeconds)
	case it.Priority < -1000 || it.Priority > 1000:
		return w, argErr(op, "%s.Priority must be an integer -1000 to 1000 (got %d)", at, it.Priority)
	case it.MaxAttempts != nil && (*it.MaxAttempts < 0 || *it.MaxAttempts > 1000):
		return w, argErr(op, "%s.MaxAttempts must be 0 (no cap) to 1000 (got %d)", at, *it.MaxAttempts)
	case len(it.UniqueKey) > maxProbeKeyBytes:
		return w, argErr(op, "%s.UniqueKey must be at most %d bytes", at, maxProbeKeyBytes)
	case it.Queue != "" && !queueNamePattern.MatchString(it.Queue):
		return w, argErr(op, "%s.Queue %q is not a queue name (1 to 64 of letters, digits, _ . : -, starting with a letter or digit)", at, it.Queue)
	case it.TimeoutSeconds < 0 || it.TimeoutSeconds > maxTimeoutSeconds:
		return w, argErr(op, "%s.TimeoutSeconds must be 1 to %d (0: none; got %d)", at, maxTimeoutSeconds, it.TimeoutSeconds)
	case it.StartWithinSeconds < 0 || it.StartWithinSeconds > maxStartWithinSecond:
		return w, argErr(op, "%s.StartWithinSeconds must be 1 to %d (0: none; got %d)", at, maxStartWithinSecond, it.StartWithinSeconds)
	}
	if problem := groupProblem(it.Group); problem != "" {
		return w, argErr(op, "%s.Group %s", at, problem)
	}
	if it.DelaySeconds > 0 {
		d := it.DelaySeconds
		w.DelaySeconds = &d
	}
	if it.Payload != nil {
		raw, err := jsonOf(it.Payload, MaxPayloadBytes)
		if err != nil {
			return w, argErr(op, "%s.Payload %v", at, err)
		}
		w.Payload = raw
	}
	return w, nil
}

func groupProblem(group string) string {
	if group == "" {
		return ""
	}
	if !utf8.ValidString(group) || utf8.RuneCountInString(group) > 200 {
		return "must be 1 to 200 characters of valid UTF-8"
	}
	for _, r := range group {
		if unicode.IsControl(r) {
			return "must not contain control characters"
		}
	}
	return ""
}

// jsonOf serializes v, refusing what is not JSON or larger than max bytes.
func jsonOf(v any, max int) (json.RawMessage, error) {
	var raw []byte
	if r, ok := v.(json.RawMessage); ok {
		if !json.Valid(r) {
			return nil, fmt.Errorf("is not valid JSON")
		}
		raw = r
	} else {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("is not JSON-serializable: %v", err)
		}
	}
	if len(raw) > max {
		return nil, fmt.Errorf("is %d bytes serialized, more than %d", len(raw), max)
	}
	return raw, nil
}

// Enqueue adds one job.
func (c *Client) Enqueue(ctx context.Context, item EnqueueItem) (EnqueuedJob, error) {
	jobs, err := c.EnqueueMany(ctx, []EnqueueItem{item})
	if err != nil {
		return EnqueuedJob{}, err
	}
	return jobs[0], nil
}

// EnqueueMany adds jobs, MaxEnqueuePerCall per call (each call one
// transaction: all of a call or nothing). Answers are in request order.
func (c *Client) EnqueueMany(ctx context.Context, items []EnqueueItem) ([]EnqueuedJob, error) {
	const op = "enqueue"
	if len(items) == 0 {
		return nil, argErr(op, "no jobs to enqueue")
	}
	wire := make([]enqueueWire, len(items))
	for i, it := range items {
		w, err := checkEnqueueItem(op, i, it)
		if err != nil {
			return nil, err
		}
		wire[i] = w
	}
	out := make([]EnqueuedJob, 0, len(items))
	for start := 0; start < len(wire); start += MaxEnqueuePerCall {
		chunk := wire[start:min(start+MaxEnqueuePerCall, len(wire))]
		var answer struct {
			Jobs []EnqueuedJob `json:"jobs"`
		}
		if err := c.call(ctx, op, http.MethodPost, "/api/fleet/enqueue", map[string]any{"jobs": chunk}, &answer); err != nil {
			return out, err
		}
		if len(answer.Jobs) != len(chunk) {
			return out, &ProtocolError{Op: op, Message: fmt.Sprintf("answered %d jobs for %d", len(answer.Jobs), len(chunk))}
		}
		out = append(out, answer.Jobs...)
	}
	return out, nil
}

func checkIDs(op, jobID, workerID string) error {
	if jobID == "" || len(jobID) > maxJobIDBytes {
		return argErr(op, "jobID must be 1 to %d bytes (got %d)", maxJobIDBytes, len(jobID))
	}
	return checkWorkerID(op, workerID)
}

func checkWorkerID(op, workerID string) error {
	if workerID == "" || len(workerID) > maxWorkerIDBytes {
		return argErr(op, "workerID must be 1 to %d bytes (got %d)", maxWorkerIDBytes, len(workerID))
	}
	return nil
}

func checkLease(op string, seconds int) error {
	if seconds != 0 && (seconds < MinLeaseSeconds || seconds > MaxLeaseSeconds) {
		return argErr(op, "leaseSeconds must be %d to %d (0: the server's default, 30; got %d)", MinLeaseSeconds, MaxLeaseSeconds, seconds)
	}
	return nil
}

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
	body := map[string]any{"workerId": r.WorkerID}
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
	var answer struct {
		Jobs *[]ClaimedJob `json:"jobs"`
	}
	if err := c.call(ctx, op, http.MethodPost, "/api/fleet/claim-next", body, &answer); err != nil {
		return nil, err
	}
	if answer.Jobs == nil {
		return nil, &ProtocolError{Op: op, Message: "answer has no `jobs`"}
	}
	for _, j := range *answer.Jobs {
		if j.Job.ID == "" {
			return nil, &ProtocolError{Op: op, Message: "a claimed job has no id"}
		}
	}
	return *answer.Jobs, nil
}

func checkQueues(op string, queues []string) error {
	if len(queues) > MaxClaimQueues {
		return argErr(op, "at most %d queues (got %d)", MaxClaimQueues, len(queues))
	}
	for _, q := range queues {
		if !queueNamePattern.MatchString(q) {
			return argErr(op, "%q is not a queue name (1 to 64 of letters, digits, _ . : -, starting with a letter or digit)", q)
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

func matchResults(op string, sent, got int, same func(int) bool) error {
	if sent != got {
		return &ProtocolError{Op: op, Message: fmt.Sprintf("answered %d results for %d items", got, sent)}
	}
	for i := 0; i < sent; i++ {
		if !same(i) {
			return &ProtocolError{Op: op, Message: fmt.Sprintf("result %d is of another job", i)}
		}
	}
	return nil
}

// Release targets.
const (
	StatusDone    = "done"
	StatusFailed  = "failed"
	StatusPending = "pending"
	StatusRetry   = "retry"
)

// Release is one release of a held job: Status done, failed, pending or retry.
type Release struct {
	JobID      string
	Status     string
	LeaseToken string
	Result     any // any JSON (json.RawMessage as is); nil: none
	Error      string
	// RateLimitedFor: only with retry, 1 to 86400 seconds (0: not given).
	RateLimitedFor int
}

type releaseWire struct {
	JobID          string          `json:"jobId"`
	WorkerID       string          `json:"workerId,omitempty"`
	Status         string          `json:"status"`
	LeaseToken     string          `json:"leaseToken,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          string          `json:"error,omitempty"`
	RateLimitedFor int             `json:"rateLimitedFor,omitempty"`
}

func checkRelease(op, workerID string, r Release) (releaseWire, error) {
	w := releaseWire{JobID: r.JobID, Status: r.Status, LeaseToken: r.LeaseToken, Error: r.Error, RateLimitedFor: r.RateLimitedFor}
	if err := checkIDs(op, r.JobID, workerID); err != nil {
		return w, err
	}
	switch r.Status {
	case StatusDone, StatusFailed, StatusPending, StatusRetry:
	default:
		return w, argErr(op, "Status must be done, failed, pending or retry (got %q)", r.Status)
	}
	if r.RateLimitedFor != 0 && (r.Status != StatusRetry || r.RateLimitedFor < 1 || r.RateLimitedFor > MaxRateLimitedFor) {
		return w, argErr(op, "RateLimitedFor goes only with status retry, 1 to %d seconds (got %d with %s)", MaxRateLimitedFor, r.RateLimitedFor, r.Status)
	}
	if len(r.Error) > MaxErrorBytes {
		return w, argErr(op, "Error must be at most %d bytes (got %d)", MaxErrorBytes, len(r.Error))
	}
	if r.Result != nil {
		raw, err := jsonOf(r.Result, MaxResultBytes)
		if err != nil {
			return w, argErr(op, "Result %v", err)
		}
		w.Result = raw
	}
	return w, nil
}

// ReleaseResult is one release's answer: Released, or refused with Reason
// (refused_terminal_same_holder: the caller's own earlier release committed).
type ReleaseResult struct {
	JobID    string   `json:"jobId"`
	Released bool     `json:"released"`
	Reason   string   `json:"reason,omitempty"`
	Job      *JobView `json:"job,omitempty"`
}

// Committed says whether the release is in the row: released now, or by
// this holder's earlier call whose answer was lost.
func (r ReleaseResult) Committed() bool {
	return r.Released || r.Reason == "refused_terminal_same_holder"
}

// Complete releases many jobs of one holder, MaxBatchItems per call (each
// call one transaction). Results are in the order of releases.
func (c *Client) Complete(ctx context.Context, workerID string, releases []Release) ([]ReleaseResult, error) {
	const op = "complete"
	if len(releases) == 0 {
		return nil, argErr(op, "no releases")
	}
	wire := make([]releaseWire, len(releases))
	for i, r := range releases {
		w, err := checkRelease(op, workerID, r)
		if err != nil {
			return nil, argErr(op, "releases[%d]: %s", i, err.(*ArgumentError).Message)
		}
		wire[i] = w
	}
	return c.completeWire(ctx, workerID, wire)
}

func (c *Client) completeWire(ctx context.Context, workerID string, wire []releaseWire) ([]ReleaseResult, error) {
	const op = "complete"
	out := make([]ReleaseResult, 0, len(wire))
	for start := 0; start < len(wire); start += MaxBatchItems {
		chunk := wire[start:min(start+MaxBatchItems, len(wire))]
		var answer struct {
			Results []ReleaseResult `json:"results"`
		}
		if err := c.call(ctx, op, http.MethodPost, "/api/fleet/complete", map[string]any{"workerId": workerID, "releases": chunk}, &answer); err != nil {
			return out, err
		}
		if err := matchResults(op, len(chunk), len(answer.Results), func(i int) bool { return answer.Results[i].JobID == chunk[i].JobID }); err != nil {
			return out, err
		}
		out = append(out, answer.Results...)
	}
	return out, nil
}

// Release releases one held job.
func (c *Client) Release(ctx context.Context, workerID string, r Release) (ReleaseResult, error) {
	const op = "release"
	w, err := checkRelease(op, workerID, r)
	if err != nil {
		return ReleaseResult{}, err
	}
	w.WorkerID = workerID
	var answer ReleaseResult
	if err := c.call(ctx, op, http.MethodPost, "/api/fleet/release", w, &answer); err != nil {
		return ReleaseResult{}, err
	}
	answer.JobID = r.JobID
	return answer, nil
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

// CancelResult: Cancelled true for a job that was pending, claimed or running.
type CancelResult struct {
	Cancelled bool      `json:"cancelled"`
	Job       *QueueJob `json:"job"`
}

// Cancel cancels a job (admin only): its holder's next renew is refused.
func (c *Client) Cancel(ctx context.Context, jobID string) (CancelResult, error) {
	const op = "cancel"
	if jobID == "" || len(jobID) > maxJobIDBytes {
		return CancelResult{}, argErr(op, "jobID must be 1 to %d bytes", maxJobIDBytes)
	}
	var answer CancelResult
	err := c.call(ctx, op, http.MethodPost, "/api/fleet/cancel", map[string]string{"jobId": jobID}, &answer)
	return answer, err
}

// RetryResult: Retried true when a failed or cancelled job went back to
// pending; Reason "unique_key_taken" when another live job holds its key.
type RetryResult struct {
	Retried bool      `json:"retried"`
	Reason  string    `json:"reason"`
	Job     *QueueJob `json:"job"`
}

// Retry puts a failed or cancelled job back to pending, due now (admin only).
func (c *Client) Retry(ctx context.Context, jobID string) (RetryResult, error) {
	const op = "retry"
	if jobID == "" || len(jobID) > maxJobIDBytes {
		return RetryResult{}, argErr(op, "jobID must be 1 to %d bytes", maxJobIDBytes)
	}
	var answer RetryResult
	err := c.call(ctx, op, http.MethodPost, "/api/fleet/retry", map[string]string{"jobId": jobID}, &answer)
	return answer, err
}

// StatsFilter narrows Stats; empty: every job.
type StatsFilter struct {
	Queue          string
	ProbeKeyPrefix string
}

// Stats is GET /api/fleet/stats's answer.
type Stats struct {
	Counts struct {
		Pending   int `json:"pending"`
		Claimed   int `json:"claimed"`
		Running   int `json:"running"`
		Done      int `json:"done"`
		Failed    int `json:"failed"`
		Cancelled int `json:"cancelled"`
	} `json:"counts"`
	Total                   int      `json:"total"`
	Scheduled               int      `json:"scheduled"`
	Retrying                int      `json:"retrying"`
	DeadLettered            int      `json:"deadLettered"`
	OldestPendingAgeSeconds *float64 `json:"oldestPendingAgeSeconds"`
	ExpiredLeases           int      `json:"expiredLeases"`
	PastOrphanCap           int      `json:"pastOrphanCap"`
	OrphanCap               int      `json:"orphanCap"`
}

// Stats counts the jobs (admin only).
func (c *Client) Stats(ctx context.Context, f StatsFilter) (*Stats, error) {
	const op = "stats"
	q := url.Values{}
	if f.Queue != "" {
		if !queueNamePattern.MatchString(f.Queue) {
			return nil, argErr(op, "%q is not a queue name", f.Queue)
		}
		q.Set("queue", f.Queue)
	}
	if f.ProbeKeyPrefix != "" {
		if len(f.ProbeKeyPrefix) > maxProbeKeyBytes {
			return nil, argErr(op, "ProbeKeyPrefix must be at most %d bytes", maxProbeKeyBytes)
		}
		q.Set("probeKeyPrefix", f.ProbeKeyPrefix)
	}
	path := "/api/fleet/stats"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var answer Stats
	if err := c.call(ctx, op, http.MethodGet, path, nil, &answer); err != nil {
		return nil, err
	}
	return &answer, nil
}
