package pbfleet

// The admin calls: cancel, retry and stats.

import (
	"context"
	"net/http"
	"net/url"
)

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
