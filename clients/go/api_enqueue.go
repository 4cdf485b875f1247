package pbfleet

// Enqueue: the items, their checks, and the enqueue calls.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode"
	"unicode/utf8"
)

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
