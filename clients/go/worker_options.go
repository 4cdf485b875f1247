package pbfleet

// WorkerOptions: their defaults, their checks, and the workerId a Worker claims under.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
)

// Defaults of WorkerOptions.
const (
	DefaultLeaseSeconds    = 30
	DefaultPollInterval    = 500 * time.Millisecond
	DefaultMaxPollInterval = 10 * time.Second
	DefaultReportRetry     = 60 * time.Second
	// ProgressFlush: a recorded progress is sent within this (one extra
	// heartbeat a second at most, only while handlers record progress).
	ProgressFlush  = time.Second
	maxConcurrency = 10000
	// renewRetryMax: a heartbeat that got no answer is sent again after min(interval/2, this).
	renewRetryMax = time.Second
	// handBackMargin: wait past the shortened lease, for transit and clock granularity.
	handBackMargin   = 300 * time.Millisecond
	reservedWorkerID = "pb-fleet-sweeper"
)

// WorkerOptions configure a Worker; zero values take the defaults.
type WorkerOptions struct {
	// Handler runs every job; or Handlers, one per queue (1 to 16), and the
	// Worker claims only from those queues. Exactly one of the two.
	Handler  Handler
	Handlers map[string]Handler
	// Queue (or Queues, up to 16) to claim from with Handler; none: every
	// queue the client may take. Not with Handlers.
	Queue  string
	Queues []string
	// WorkerID is unique per live worker (default hostname-pid-random). With a
	// worker identity the Worker claims as "<record id>/<WorkerID>" (an ID
	// that already is the record id, or begins with "<id>/", is kept).
	WorkerID       string
	Concurrency    int // handler slots, 1 to 10000 (default 1)
	LeaseSeconds   int // 1 to 3600 (default 30); renewed every third of it
	ProbeKeyPrefix string
	// PollInterval is the first idle wait, doubled with jitter per empty
	// claim up to MaxPollInterval (defaults 500 ms and 10 s).
	PollInterval, MaxPollInterval time.Duration
	// ReportRetry: how long a release that gets no answer is sent again (default 60 s).
	ReportRetry time.Duration
	// Logger gets the Worker's diagnostics (default: none).
	Logger *slog.Logger
}

// checkedOptions is WorkerOptions with defaults applied and every rule checked.
type checkedOptions struct {
	WorkerOptions
	queues []string
}

func checkWorkerOptions(o WorkerOptions) (checkedOptions, error) {
	const op = "NewWorker"
	c := checkedOptions{WorkerOptions: o}
	switch {
	case o.Handler == nil && len(o.Handlers) == 0:
		return c, argErr(op, "give Handler (every job) or Handlers (one per queue)")
	case o.Handler != nil && o.Handlers != nil:
		return c, argErr(op, "give Handler or Handlers, not both")
	case o.Handlers != nil && (o.Queue != "" || len(o.Queues) > 0):
		return c, argErr(op, "Queue/Queues go with Handler; with Handlers the queues are its keys")
	case o.Queue != "" && len(o.Queues) > 0:
		return c, argErr(op, "give Queue or Queues, not both")
	case o.Concurrency < 0 || o.Concurrency > maxConcurrency:
		return c, argErr(op, "Concurrency must be 1 to %d (0: 1; got %d)", maxConcurrency, o.Concurrency)
	case o.LeaseSeconds != 0 && (o.LeaseSeconds < MinLeaseSeconds || o.LeaseSeconds > MaxLeaseSeconds):
		return c, argErr(op, "LeaseSeconds must be %d to %d (0: %d; got %d)", MinLeaseSeconds, MaxLeaseSeconds, DefaultLeaseSeconds, o.LeaseSeconds)
	case o.PollInterval < 0 || o.MaxPollInterval < 0 || o.ReportRetry < 0:
		return c, argErr(op, "PollInterval, MaxPollInterval and ReportRetry must be >= 0 (0: the default)")
	case o.WorkerID == reservedWorkerID:
		return c, argErr(op, "WorkerID %q is reserved for the server's sweeper", reservedWorkerID)
	case len(o.WorkerID) > maxWorkerIDBytes:
		return c, argErr(op, "WorkerID must be at most %d bytes", maxWorkerIDBytes)
	case len(o.ProbeKeyPrefix) > maxProbeKeyBytes:
		return c, argErr(op, "ProbeKeyPrefix must be at most %d bytes", maxProbeKeyBytes)
	}
	if o.Handlers != nil {
		if len(o.Handlers) > MaxClaimQueues {
			return c, argErr(op, "Handlers: at most %d queues (got %d)", MaxClaimQueues, len(o.Handlers))
		}
		for q, h := range o.Handlers {
			if h == nil {
				return c, argErr(op, "Handlers[%q] is nil", q)
			}
			c.queues = append(c.queues, q)
		}
	} else if o.Queue != "" {
		c.queues = []string{o.Queue}
	} else {
		c.queues = append([]string(nil), o.Queues...)
	}
	if err := checkQueues(op, c.queues); err != nil {
		return c, err
	}
	if c.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.LeaseSeconds == 0 {
		c.LeaseSeconds = DefaultLeaseSeconds
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.MaxPollInterval == 0 {
		c.MaxPollInterval = max(DefaultMaxPollInterval, c.PollInterval)
	}
	if c.MaxPollInterval < c.PollInterval {
		return c, argErr(op, "MaxPollInterval (%s) must be at least PollInterval (%s)", c.MaxPollInterval, c.PollInterval)
	}
	if c.ReportRetry == 0 {
		c.ReportRetry = DefaultReportRetry
	}
	if c.WorkerID == "" {
		c.WorkerID = defaultWorkerID()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c, nil
}

// defaultWorkerID is hostname-pid-random: two containers with the same
// hostname and PID 1 would otherwise share it.
func defaultWorkerID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// identityWorkerID is the workerId a worker identity claims under: the
// server takes only its record id, or the id and "/" and anything.
func identityWorkerID(identityID, configured string) string {
	if configured == identityID || strings.HasPrefix(configured, identityID+"/") {
		return configured
	}
	return identityID + "/" + configured
}
