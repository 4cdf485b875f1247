package pbfleet

// Releasing held jobs: the release targets, release and complete.

import (
	"context"
	"encoding/json"
	"net/http"
)

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
	wire, err := releasesWire(op, workerID, releases)
	if err != nil {
		return nil, err
	}
	return c.completeWire(ctx, workerID, wire)
}

// releasesWire checks each release of a complete call, as it goes on the wire.
func releasesWire(op, workerID string, releases []Release) ([]releaseWire, error) {
	wire := make([]releaseWire, len(releases))
	for i, r := range releases {
		w, err := checkRelease(op, workerID, r)
		if err != nil {
			return nil, argErr(op, "releases[%d]: %s", i, err.(*ArgumentError).Message)
		}
		wire[i] = w
	}
	return wire, nil
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

// CompleteAndClaimResult is CompleteAndClaim's answer: each release's result
// in request order, and the jobs the same transaction claimed.
type CompleteAndClaimResult struct {
	Results []ReleaseResult
	Jobs    []ClaimedJob
	// ClaimIgnored: the server answered without jobs (pb-fleet from before
	// claims on complete): it claimed nothing; use ClaimNext.
	ClaimIgnored bool
}

// CompleteAndClaim releases 1 to MaxBatchItems jobs of one holder and, in the
// same transaction, claims as ClaimNext would with claim's fields (its
// WorkerID left empty: the holder claims): one request where a worker's
// loop makes two. It is never retried: a second try after a lost answer
// would claim again (the releases are safe to send again with Complete).
func (c *Client) CompleteAndClaim(ctx context.Context, workerID string, releases []Release, claim ClaimNextRequest) (CompleteAndClaimResult, error) {
	const op = "completeAndClaim"
	if len(releases) == 0 || len(releases) > MaxBatchItems {
		return CompleteAndClaimResult{}, argErr(op, "releases must be 1 to %d (Complete sends more in several calls; got %d)", MaxBatchItems, len(releases))
	}
	if claim.WorkerID != "" {
		return CompleteAndClaimResult{}, argErr(op, "claim.WorkerID must be empty: the holder %q claims", workerID)
	}
	wire, err := releasesWire(op, workerID, releases)
	if err != nil {
		return CompleteAndClaimResult{}, err
	}
	claimNext, err := claimFields(op, claim)
	if err != nil {
		return CompleteAndClaimResult{}, err
	}
	var answer struct {
		Results []ReleaseResult `json:"results"`
		Jobs    *[]ClaimedJob   `json:"jobs"`
	}
	body := map[string]any{"workerId": workerID, "releases": wire, "claimNext": claimNext}
	if err := c.call(ctx, op, http.MethodPost, "/api/fleet/complete", body, &answer); err != nil {
		return CompleteAndClaimResult{}, err
	}
	if err := matchResults(op, len(wire), len(answer.Results), func(i int) bool { return answer.Results[i].JobID == wire[i].JobID }); err != nil {
		return CompleteAndClaimResult{}, err
	}
	if answer.Jobs == nil {
		return CompleteAndClaimResult{Results: answer.Results, ClaimIgnored: true}, nil
	}
	if err := checkClaimed(op, *answer.Jobs); err != nil {
		return CompleteAndClaimResult{}, err
	}
	return CompleteAndClaimResult{Results: answer.Results, Jobs: *answer.Jobs}, nil
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
