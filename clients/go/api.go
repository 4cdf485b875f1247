package pbfleet

// The /api/fleet/* routes' shared parts: the server's limits, the job views
// answers carry, and the argument checks several calls share.

import (
	"encoding/json"
	"fmt"
	"regexp"
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
