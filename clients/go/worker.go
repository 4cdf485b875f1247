package pbfleet

// Worker: the job and handler types, the Worker itself, Run and Stop, and sign-in.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Handler runs one job. Its returned value is the job's result (any JSON);
// an error retries the job, a *PermanentError fails it, a *RateLimitedError
// parks it. ctx is cancelled when the job is cancelled, times out, loses its
// lease or the Worker stops in release mode: context.Cause(ctx) says which
// (*LeaseLostError, *JobTimeoutError, ErrWorkerStopping).
type Handler func(ctx context.Context, job *Job) (any, error)

// Job is what a handler gets.
type Job struct {
	ID             string
	ProbeKey       string
	Queue          string
	GroupKey       string
	Payload        json.RawMessage // "null" when the job has none
	Attempt        int             // this attempt, from 1 (see Lease)
	MaxAttempts    int             // 0: no cap
	TimeoutSeconds int             // 0: none
	WorkerID       string
	LeaseToken     string
	// Progress records any JSON (at most 4096 bytes), sent with the next
	// heartbeat, within about a second. An error: not JSON, or too large.
	Progress func(v any) error

	mu *sync.Mutex // the Worker's: guards Attempt, TimeoutSeconds and LeaseToken
}

// Lease returns Attempt and LeaseToken as they are now. A fresh claim of the
// job while its handler runs here (the server saw the lease lapse first)
// moves the running handler onto the new lease and attempt, updating those
// fields; a handler that reads them while it may be running should use Lease.
func (j *Job) Lease() (attempt int, leaseToken string) {
	if j.mu != nil {
		j.mu.Lock()
		defer j.mu.Unlock()
	}
	return j.Attempt, j.LeaseToken
}

// StopMode says what Stop does with the running jobs.
type StopMode int

const (
	// StopFinish claims nothing more and lets running jobs finish and report.
	StopFinish StopMode = iota
	// StopRelease cancels running handlers (cause ErrWorkerStopping), keeps
	// renewing their leases until each returns, and hands their jobs back to
	// pending: the lease is shortened to the 1 s floor, waited out, then
	// released to pending (it counts as a re-queue: reclaim_count).
	StopRelease
)

// Worker claims jobs, runs a handler on each while renewing its lease, and
// reports each outcome with one compare-and-set release. A worker that lost
// a lease writes nothing for that job.
type Worker struct {
	client *Client
	opts   checkedOptions
	lease  time.Duration
	log    *slog.Logger

	mu        sync.Mutex
	workerID  string
	active    map[string]*activeJob // the latest run of each job, by id
	slots     int                   // taken: from claim until the report has answered
	stopping  bool
	stopMode  StopMode
	running   bool
	stopCh    chan struct{}
	done      chan struct{}
	slotFreed chan struct{} // 1-buffered wake-ups of the claim loop
	progress  chan struct{} // 1-buffered: a handler recorded progress
	jobs      sync.WaitGroup
	completer *completer
}

// activeJob is one claimed run of a job. Its fields are guarded by Worker.mu.
type activeJob struct {
	view      *Job
	token     string
	ctx       context.Context
	cancel    context.CancelCauseFunc
	deadline  time.Time // the lease's local end: never later than the server's
	attemptAt time.Time // the attempt's deadline (zero: none)
	timeout   int       // its timeout_seconds
	timer     *time.Timer
	gen       uint64          // the lease generation: bumped when a fresh claim is adopted
	progress  json.RawMessage // latest recorded, not yet stored
	progressN uint64          // bumped per record, to tell a newer one from the one sent
	renewing  chan struct{}   // closed when the heartbeat carrying this lease has answered
	renewSoon bool            // its last renew got no answer: resend before the next tick
	settled   bool            // the handler has returned
	lost      bool
	timedOut  chan struct{} // non-nil once the timeout fired; closed when its release answered
	handBack  bool          // stopping in release mode: hand it back, report nothing
	previous  *activeJob    // an earlier run of the same job, still winding down
	ended     chan struct{}
}

// leaseHeld: the run still holds its lease and renews it. A run being handed
// back (StopRelease) does, until its handler returns: a handler slower than
// the lease's rest would otherwise lose it while it still runs.
func (j *activeJob) leaseHeld() bool { return !j.settled && !j.lost && j.timedOut == nil }

// dropped: no timeout or stop is to act on the run any more.
func (j *activeJob) dropped() bool { return !j.leaseHeld() || j.handBack }

// NewWorker checks the options (an error names the one that is wrong) and builds a Worker.
func NewWorker(client *Client, opts WorkerOptions) (*Worker, error) {
	if client == nil {
		return nil, argErr("NewWorker", "client is nil")
	}
	checked, err := checkWorkerOptions(opts)
	if err != nil {
		return nil, err
	}
	return &Worker{
		client: client, opts: checked, lease: time.Duration(checked.LeaseSeconds) * time.Second, log: checked.Logger,
		workerID: checked.WorkerID, active: map[string]*activeJob{},
		slotFreed: make(chan struct{}, 1), progress: make(chan struct{}, 1),
	}, nil
}

// WorkerID is the id the Worker claims under (with a worker identity: known once Run has signed in).
func (w *Worker) WorkerID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.workerID
}

func (w *Worker) renewInterval() time.Duration { return w.lease / 3 }

// Run claims and runs jobs until Stop is called (or ctx ends, which stops as
// StopRelease does), and returns once every job has reported. It returns an
// error when the worker may not claim at all (a refused sign-in, a 403), after
// finishing the jobs it holds.
func (w *Worker) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.running || w.done != nil {
		w.mu.Unlock()
		return errors.New("pbfleet: Worker.Run called twice")
	}
	w.running = true
	w.stopCh = make(chan struct{})
	w.done = make(chan struct{})
	if w.stopping { // Stop before Run
		close(w.stopCh)
	}
	w.mu.Unlock()
	defer close(w.done)

	// The calls of winding down (reports, hand-backs) must outlive ctx: each is bounded by the client's timeout.
	calls := context.WithoutCancel(ctx)
	stopOnCtx := context.AfterFunc(ctx, func() { w.signalStop(StopRelease) })
	defer stopOnCtx()

	err := w.resolveWorkerID(ctx)
	if err == nil {
		w.completer = newCompleter(w.client, w.workerID, w.opts.Concurrency, w.opts.ReportRetry, w.log)
		quitCompleter := make(chan struct{})
		completerDone := make(chan struct{})
		go func() { defer close(completerDone); w.completer.run(calls, quitCompleter) }()
		quitHeartbeat := make(chan struct{})
		heartbeatDone := make(chan struct{})
		go func() { defer close(heartbeatDone); w.heartbeatLoop(calls, quitHeartbeat) }()

		err = w.claimLoop(calls)
		w.jobs.Wait()
		close(quitHeartbeat)
		<-heartbeatDone
		close(quitCompleter)
		<-completerDone
	}
	w.mu.Lock()
	w.running = false
	w.mu.Unlock()
	return err
}

// Stop stops the Worker (see StopMode) and waits until Run has returned. A
// StopRelease after a StopFinish cancels what still runs. Never call Stop
// from a handler: Run waits for that handler, so Stop would wait forever;
// call StopNoWait there.
func (w *Worker) Stop(mode StopMode) {
	w.signalStop(mode)
	w.mu.Lock()
	done := w.done
	w.mu.Unlock()
	if done != nil {
		<-done
	}
}

// StopNoWait is Stop without the wait: it returns at once (safe from inside
// a handler); Run returns once every job has reported.
func (w *Worker) StopNoWait(mode StopMode) { w.signalStop(mode) }

func (w *Worker) signalStop(mode StopMode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := !w.stopping
	if first || mode == StopRelease {
		w.stopMode = mode
	}
	w.stopping = true
	if mode == StopRelease {
		for _, j := range w.active {
			if !j.dropped() {
				j.handBack = true
				w.stopTimer(j)
				j.cancel(ErrWorkerStopping)
			}
		}
	}
	if first && w.stopCh != nil {
		close(w.stopCh)
	}
}

func (w *Worker) isStopping() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopping
}

// resolveWorkerID signs in (a worker identity) and composes the workerId.
func (w *Worker) resolveWorkerID(ctx context.Context) error {
	if !w.client.IsWorkerIdentity() {
		return nil
	}
	for attempt := 0; ; attempt++ {
		id, err := w.client.Identity(ctx)
		if err == nil {
			composed := identityWorkerID(id.ID, w.workerID)
			if len(composed) > maxWorkerIDBytes {
				// Every claim would be refused 400: say why instead of polling forever.
				return argErr("Worker.Run", "the workerId %q (the identity's id %q, \"/\" and WorkerID) is %d bytes: at most %d; shorten WorkerID",
					composed, id.ID, len(composed), maxWorkerIDBytes)
			}
			w.mu.Lock()
			w.workerID = composed
			w.mu.Unlock()
			return nil
		}
		if !IsTransient(err) {
			return err
		}
		w.log.Warn("pb-fleet: sign-in got no answer; trying again", "error", err)
		if !w.sleep(jitteredBackoff(attempt, w.opts.PollInterval, w.opts.MaxPollInterval)) {
			return nil // stopped before it could sign in: nothing was claimed
		}
	}
}

// sleep waits d, or less when the Worker stops; false: it stopped.
func (w *Worker) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return !w.isStopping()
	case <-w.stopCh:
		return false
	}
}
