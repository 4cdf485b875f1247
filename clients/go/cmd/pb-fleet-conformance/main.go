// Command pb-fleet-conformance is the Go client's conformance worker
// (docs/client-conformance.md): the package's Worker, signed in as a worker
// identity, with a handler that does what each job's payload asks. Standard
// output carries one JSON object per line and nothing else; diagnostics go
// to standard error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	pbfleet "github.com/pb-fleet/pb-fleet/clients/go"
)

// stdout is shared by every handler: one whole line per write, never interleaved.
var stdoutMu sync.Mutex

func emit(line map[string]any) {
	raw, err := json.Marshal(line)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go conformance worker: %v\n", err)
		return
	}
	stdoutMu.Lock()
	defer stdoutMu.Unlock()
	os.Stdout.Write(append(raw, '\n'))
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	if fallback == "" {
		fmt.Fprintf(os.Stderr, "go conformance worker: %s is not set (see docs/client-conformance.md)\n", name)
		os.Exit(2)
	}
	return fallback
}

func envInt(name, fallback string) int {
	v := env(name, fallback)
	n, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go conformance worker: %s must be an integer (got %q)\n", name, v)
		os.Exit(2)
	}
	return n
}

// payload is what a job asks for; every field but op is optional.
type payload struct {
	Op                string          `json:"op"`
	Value             json.RawMessage `json:"value"`
	Message           *string         `json:"message"`
	Ms                *float64        `json:"ms"`
	UntilAttempt      *float64        `json:"untilAttempt"`
	RetryAfterSeconds *float64        `json:"retryAfterSeconds"`
	Progress          json.RawMessage `json:"progress"`
}

func (p payload) echo(job *pbfleet.Job) map[string]any {
	value := p.Value
	if len(value) == 0 {
		value = json.RawMessage("null")
	}
	return map[string]any{"echo": value, "attempt": job.Attempt}
}

// before: the job's attempt is before untilAttempt (always, without it).
func (p payload) before(job *pbfleet.Job) bool {
	return p.UntilAttempt == nil || float64(job.Attempt) < *p.UntilAttempt
}

func (p payload) message(fallback string) string {
	if p.Message != nil {
		return *p.Message
	}
	return fallback
}

func (p payload) wait(fallback time.Duration) time.Duration {
	if p.Ms != nil {
		return time.Duration(*p.Ms * float64(time.Millisecond))
	}
	return fallback
}

// waitOrSignal waits d; if the job's signal fires first it prints `signal`
// and answers the "interrupted" error.
func waitOrSignal(ctx context.Context, job *pbfleet.Job, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		emit(map[string]any{"event": "signal", "jobId": job.ID})
		return errors.New("interrupted")
	}
}

// rateLimitedOnce holds the jobs this process has rate-limited once.
var rateLimitedOnce sync.Map

func handle(ctx context.Context, job *pbfleet.Job) (any, error) {
	var p payload
	if len(job.Payload) > 0 && string(job.Payload) != "null" {
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			return nil, pbfleet.Permanent(fmt.Errorf("payload is not an object: %v", err))
		}
	}
	emit(map[string]any{"event": "start", "jobId": job.ID, "attempt": job.Attempt})
	switch p.Op {
	case "echo":
		return p.echo(job), nil
	case "fail":
		if p.UntilAttempt != nil && !p.before(job) {
			return p.echo(job), nil
		}
		return nil, errors.New(p.message("failed"))
	case "permanent":
		return nil, &pbfleet.PermanentError{Message: p.message("permanent failure")}
	case "sleep":
		if err := waitOrSignal(ctx, job, p.wait(0)); err != nil {
			return nil, err
		}
		return p.echo(job), nil
	case "wait_signal":
		if err := waitOrSignal(ctx, job, p.wait(60*time.Second)); err != nil {
			return nil, err
		}
		return map[string]any{"signalled": false}, nil
	case "crash":
		if !p.before(job) {
			return p.echo(job), nil
		}
		emit(map[string]any{"event": "crash", "jobId": job.ID})
		os.Exit(17) // at once, releasing nothing
	case "progress":
		progress := p.Progress
		if len(progress) == 0 {
			progress = json.RawMessage("null")
		}
		if err := job.Progress(progress); err != nil {
			return nil, err
		}
		if err := waitOrSignal(ctx, job, p.wait(0)); err != nil {
			return nil, err
		}
		return p.echo(job), nil
	case "rate_limited":
		// Only a job's first run in this process: a rate-limited release gives
		// its attempt back, so the attempt count cannot tell.
		if _, seen := rateLimitedOnce.LoadOrStore(job.ID, true); !seen {
			seconds := 1.0
			if p.RetryAfterSeconds != nil {
				seconds = *p.RetryAfterSeconds
			}
			return nil, &pbfleet.RateLimitedError{RetryAfter: time.Duration(seconds * float64(time.Second))}
		}
		return p.echo(job), nil
	}
	return nil, pbfleet.Permanent(fmt.Errorf("unknown op %q", p.Op))
}

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	client, err := pbfleet.NewClient(env("PB_FLEET_URL", ""), pbfleet.Options{
		WorkerIdentity: env("PB_FLEET_WORKER_IDENTITY", ""),
		WorkerPassword: env("PB_FLEET_WORKER_PASSWORD", ""),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "go conformance worker: %v\n", err)
		os.Exit(2)
	}
	maxPoll := time.Duration(envInt("PB_FLEET_POLL_MS", "200")) * time.Millisecond
	worker, err := pbfleet.NewWorker(client, pbfleet.WorkerOptions{
		Handler:         handle,
		WorkerID:        env("PB_FLEET_WORKER_ID", ""),
		Queue:           env("PB_FLEET_QUEUE", ""),
		Concurrency:     envInt("PB_FLEET_CONCURRENCY", "4"),
		LeaseSeconds:    envInt("PB_FLEET_LEASE_SECONDS", "3"),
		PollInterval:    min(50*time.Millisecond, maxPoll),
		MaxPollInterval: maxPoll,
		Logger:          logger,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "go conformance worker: %v\n", err)
		os.Exit(2)
	}
	signInCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	identity, err := client.Identity(signInCtx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go conformance worker: sign-in failed: %v\n", err)
		os.Exit(1)
	}
	emit(map[string]any{"event": "ready", "workerId": identity.ID + "/" + env("PB_FLEET_WORKER_ID", "")})

	sigterm := make(chan os.Signal, 1)
	signal.Notify(sigterm, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sigterm
		worker.Stop(pbfleet.StopFinish)
	}()
	if err := worker.Run(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "go conformance worker: %v\n", err)
		os.Exit(1)
	}
	emit(map[string]any{"event": "stopped"})
	os.Exit(0)
}
