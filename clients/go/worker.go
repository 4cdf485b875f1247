package pbfleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
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

// claimLoop claims for the free slots only, backing off with jitter when idle.
func (w *Worker) claimLoop(ctx context.Context) error {
	emptyPolls := 0
	for {
		w.mu.Lock()
		free := w.opts.Concurrency - w.slots
		stopping := w.stopping
		w.mu.Unlock()
		if stopping {
			return nil
		}
		if free <= 0 {
			select {
			case <-w.slotFreed:
			case <-w.stopCh:
			}
			continue
		}
		sentAt := time.Now()
		claimed, err := w.client.ClaimNext(ctx, ClaimNextRequest{
			WorkerID: w.workerID, LeaseSeconds: w.opts.LeaseSeconds, Limit: min(free, 100),
			ProbeKeyPrefix: w.opts.ProbeKeyPrefix, Queues: w.opts.queues,
		})
		if err != nil {
			if errors.Is(err, ErrAuth) || errors.Is(err, ErrForbidden) {
				// Claiming again cannot cure it: finish what is held, and say why.
				w.log.Error("pb-fleet: claim-next refused; stopping", "error", err)
				w.signalStop(StopFinish)
				return err
			}
			w.log.Warn("pb-fleet: claim-next failed", "error", err)
			w.sleep(jitteredBackoff(emptyPolls, w.opts.PollInterval, w.opts.MaxPollInterval))
			emptyPolls++
			continue
		}
		started := 0
		for _, c := range claimed {
			if w.startJob(c, sentAt) {
				started++
			}
		}
		if started == 0 {
			w.sleep(jitteredBackoff(emptyPolls, w.opts.PollInterval, w.opts.MaxPollInterval))
			emptyPolls++
			continue
		}
		emptyPolls = 0
	}
}

// startJob takes a claimed job: a new run, or (a fresh claim of a job whose
// handler runs here) the running handler goes on under the new lease.
func (w *Worker) startJob(c ClaimedJob, sentAt time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	attemptAt, timeout := attemptDeadline(c.Job, sentAt)
	attempt := max(c.Job.Attempts, 1)
	previous := w.active[c.Job.ID]
	if previous != nil && previous.leaseHeld() {
		// A new lease generation: answers to renewals of the old token are ignored.
		previous.gen++
		previous.renewing, previous.renewSoon = nil, false
		previous.token = c.LeaseToken
		previous.attemptAt, previous.timeout = attemptAt, timeout
		previous.deadline = leaseEnd(sentAt.Add(w.lease), attemptAt)
		previous.view.Attempt, previous.view.TimeoutSeconds, previous.view.LeaseToken = attempt, timeout, c.LeaseToken
		if !previous.handBack {
			w.armTimeout(previous)
		}
		return false
	}
	payload := c.Job.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	j := &activeJob{
		token: c.LeaseToken, ctx: ctx, cancel: cancel,
		deadline: leaseEnd(sentAt.Add(w.lease), attemptAt), attemptAt: attemptAt, timeout: timeout,
		previous: previous, ended: make(chan struct{}),
	}
	queue := c.Job.Queue
	if queue == "" {
		queue = "default"
	}
	j.view = &Job{
		ID: c.Job.ID, ProbeKey: c.Job.ProbeKey, Queue: queue, GroupKey: c.Job.GroupKey, Payload: payload,
		Attempt: attempt, MaxAttempts: c.Job.MaxAttempts, TimeoutSeconds: timeout,
		WorkerID: w.workerID, LeaseToken: c.LeaseToken, mu: &w.mu,
	}
	j.view.Progress = func(v any) error { return w.recordProgress(j, v) }
	w.active[c.Job.ID] = j
	w.slots++
	if w.stopping && w.stopMode == StopRelease {
		// Claimed as the stop came: handed back unrun.
		j.handBack = true
		j.cancel(ErrWorkerStopping)
	} else {
		w.armTimeout(j)
	}
	w.jobs.Add(1)
	go w.runJob(j)
	return true
}

// attemptDeadline is the attempt's deadline on the local clock: the claim's
// send time + timeout_seconds (never the server's date read on this clock).
func attemptDeadline(job QueueJob, sentAt time.Time) (time.Time, int) {
	if job.Deadline == nil || *job.Deadline == "" || job.TimeoutSeconds <= 0 {
		return time.Time{}, 0
	}
	return sentAt.Add(time.Duration(job.TimeoutSeconds) * time.Second), job.TimeoutSeconds
}

// armTimeout (under mu) fires the timeout at deadline - min(2 s, timeout/10).
func (w *Worker) armTimeout(j *activeJob) {
	w.stopTimer(j)
	if j.attemptAt.IsZero() {
		return
	}
	at := j.attemptAt.Add(-timeoutMargin(j.timeout))
	gen := j.gen // an earlier timer's callback already running must not act on a re-claimed lease
	j.timer = time.AfterFunc(time.Until(at), func() { w.timeOut(j, gen) })
}

func (w *Worker) stopTimer(j *activeJob) {
	if j.timer != nil {
		j.timer.Stop()
		j.timer = nil
	}
}

// timeOut cancels the handler and releases the job retry with the timeout's
// error while the lease is still live; the handler's own outcome is ignored.
func (w *Worker) timeOut(j *activeJob, gen uint64) {
	w.mu.Lock()
	if j.dropped() || j.attemptAt.IsZero() || j.gen != gen {
		w.mu.Unlock()
		return
	}
	cause := &JobTimeoutError{JobID: j.view.ID, TimeoutSeconds: j.timeout}
	done := make(chan struct{})
	j.timedOut = done
	token := j.token
	w.mu.Unlock()
	j.cancel(cause)
	go func() {
		defer close(done)
		w.report(j, releaseWire{JobID: j.view.ID, Status: StatusRetry, LeaseToken: token, Error: cause.Error()})
	}()
}

func (w *Worker) recordProgress(j *activeJob, v any) error {
	raw, err := jsonOf(v, MaxProgressBytes)
	if err != nil {
		return fmt.Errorf("pbfleet: job.Progress: the value %v", err)
	}
	w.mu.Lock()
	if j.leaseHeld() {
		j.progress = raw
		j.progressN++
	}
	w.mu.Unlock()
	select {
	case w.progress <- struct{}{}:
	default:
	}
	return nil
}

// runJob runs the handler, then reports (or hands back, or writes nothing).
func (w *Worker) runJob(j *activeJob) {
	defer w.jobs.Done()
	defer w.endJob(j)
	if j.previous != nil {
		<-j.previous.ended // never beside an earlier run of the same job
	}
	var result any
	var herr error
	w.mu.Lock()
	// While it waited its lease may have been lost or timed out (and released): then it must not run.
	skip := j.handBack || j.lost || j.timedOut != nil
	w.mu.Unlock()
	if !skip {
		result, herr = w.callHandler(j)
	}
	w.mu.Lock()
	j.settled = true
	w.stopTimer(j)
	timedOut, renewing := j.timedOut, j.renewing
	w.mu.Unlock()
	if timedOut != nil {
		<-timedOut // the timeout's release is the job's report
		return
	}
	if renewing != nil {
		<-renewing // a heartbeat on the wire may yet say the lease is gone
	}
	w.mu.Lock()
	lost, handBack := j.lost, j.handBack
	w.mu.Unlock()
	switch {
	case lost:
		w.log.Info("pb-fleet: lease lost; the outcome is not written", "job", j.view.ID, "cause", context.Cause(j.ctx))
	case handBack:
		w.handBack(j)
	default:
		w.report(j, w.outcome(j, result, herr))
	}
}

func (w *Worker) callHandler(j *activeJob) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v\n%s", p, debug.Stack())
		}
	}()
	handler := w.opts.Handler
	if w.opts.Handlers != nil {
		handler = w.opts.Handlers[j.view.Queue]
		if handler == nil {
			return nil, fmt.Errorf("pbfleet: no handler for queue %q", j.view.Queue)
		}
	}
	return handler(j.ctx, j.view)
}

// outcome is the release a handler's return makes.
func (w *Worker) outcome(j *activeJob, result any, err error) releaseWire {
	rw := releaseWire{JobID: j.view.ID, LeaseToken: j.token}
	w.mu.Lock()
	rw.LeaseToken = j.token
	w.mu.Unlock()
	if err == nil {
		rw.Status = StatusDone
		if result != nil {
			raw, jerr := jsonOf(result, MaxResultBytes)
			if jerr != nil {
				// Running again would not cure it.
				rw.Status, rw.Error = StatusFailed, fitError("the handler's result "+jerr.Error())
			} else {
				rw.Result = raw
			}
		}
		return rw
	}
	rw.Error = fitError(err.Error())
	if rw.Error == "" {
		rw.Error = "error"
	}
	var limited *RateLimitedError
	var permanent *PermanentError
	switch {
	case errors.As(err, &limited):
		rw.Status, rw.RateLimitedFor = StatusRetry, rateLimitedFor(limited.RetryAfter)
	case errors.As(err, &permanent) || j.view.MaxAttempts == 0:
		// No cap: a handler that always fails would otherwise run forever.
		rw.Status = StatusFailed
	default:
		rw.Status = StatusRetry
	}
	return rw
}

func (w *Worker) report(j *activeJob, rw releaseWire) {
	answer := w.completer.submit(rw)
	switch {
	case answer.err != nil:
		w.log.Error("pb-fleet: release given up", "job", rw.JobID, "status", rw.Status, "error", answer.err)
	case !answer.result.Committed():
		w.log.Info("pb-fleet: release refused: the lease was lost", "job", rw.JobID, "reason", answer.result.Reason)
	default:
		w.log.Debug("pb-fleet: released", "job", rw.JobID, "status", rw.Status)
	}
}

// handBack returns a job to pending: the protocol refuses a release to
// pending on a live lease, so the lease is first cut to the 1 s floor.
func (w *Worker) handBack(j *activeJob) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*w.client.timeout)
	defer cancel()
	w.mu.Lock()
	token := j.token
	w.mu.Unlock()
	renewed, err := w.client.Renew(ctx, RenewRequest{JobID: j.view.ID, WorkerID: w.workerID, LeaseSeconds: MinLeaseSeconds, LeaseToken: token})
	if err != nil || !renewed.Renewed {
		w.log.Info("pb-fleet: hand-back: the lease is gone or unreachable; it lapses on its own", "job", j.view.ID, "error", err)
		return
	}
	time.Sleep(time.Duration(MinLeaseSeconds)*time.Second + handBackMargin)
	for attempt := 0; attempt < 6; attempt++ {
		answer, err := w.client.Release(ctx, w.workerID, Release{JobID: j.view.ID, Status: StatusPending, LeaseToken: token})
		if err == nil && answer.Reason == "refused_lease_live" {
			time.Sleep(handBackMargin) // the server's clock may be a little behind ours
			continue
		}
		if err != nil || !answer.Released {
			w.log.Info("pb-fleet: hand-back refused", "job", j.view.ID, "reason", answer.Reason, "error", err)
		}
		return
	}
}

func (w *Worker) endJob(j *activeJob) {
	w.mu.Lock()
	w.stopTimer(j)
	if w.active[j.view.ID] == j {
		delete(w.active, j.view.ID)
	}
	w.slots--
	w.mu.Unlock()
	close(j.ended)
	j.cancel(context.Canceled) // frees the context; a no-op when already cancelled
	select {
	case w.slotFreed <- struct{}{}:
	default:
	}
}

// loseLease (under mu) cancels the handler; its outcome will not be written.
func (w *Worker) loseLease(j *activeJob, reason string) {
	if j.lost {
		return
	}
	j.lost = true
	w.stopTimer(j)
	j.cancel(&LeaseLostError{JobID: j.view.ID, Reason: reason})
}

// heartbeatLoop renews every held lease in ONE heartbeat per interval (a
// third of the lease), carrying progress; progress recorded between two
// ticks goes within ProgressFlush; a heartbeat whose answer was lost is
// resent after min(interval/2, 1 s). One heartbeat on the wire at a time.
func (w *Worker) heartbeatLoop(ctx context.Context, quit <-chan struct{}) {
	interval := w.renewInterval()
	nextTick := time.Now().Add(interval)
	var retryAt, progressAt, lastProgress time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop() // armed at the top of each turn
	defer timer.Stop()
	for {
		wake := nextTick
		for _, t := range []time.Time{retryAt, progressAt, w.earliestLeaseEnd()} {
			if !t.IsZero() && t.Before(wake) {
				wake = t
			}
		}
		timer.Reset(max(0, time.Until(wake)))
		select {
		case <-quit:
			return
		case <-w.progress:
			if progressAt.IsZero() {
				progressAt = later(time.Now(), lastProgress.Add(ProgressFlush))
			}
			if !timer.Stop() {
				<-timer.C
			}
			continue
		case <-timer.C:
		}
		now := time.Now()
		w.expireLeases(now)
		var which func(*activeJob) bool
		switch {
		case !now.Before(nextTick):
			nextTick = now.Add(interval)
			retryAt, progressAt = time.Time{}, time.Time{}
			which = func(*activeJob) bool { return true }
		case !retryAt.IsZero() && !now.Before(retryAt):
			retryAt = time.Time{}
			which = func(j *activeJob) bool { return j.renewSoon }
		case !progressAt.IsZero() && !now.Before(progressAt):
			progressAt, lastProgress = time.Time{}, now
			which = func(j *activeJob) bool { return j.progress != nil }
		default:
			continue
		}
		if lost := w.heartbeat(ctx, which); lost {
			retryAt = now.Add(min(interval/2, renewRetryMax))
		}
		if w.hasUnsentProgress() && progressAt.IsZero() {
			// Recorded while that heartbeat was on the wire.
			progressAt = later(time.Now(), lastProgress.Add(ProgressFlush))
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (w *Worker) earliestLeaseEnd() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var earliest time.Time
	for _, j := range w.active {
		if j.leaseHeld() && (earliest.IsZero() || j.deadline.Before(earliest)) {
			earliest = j.deadline
		}
	}
	return earliest
}

func (w *Worker) hasUnsentProgress() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range w.active {
		if j.leaseHeld() && j.progress != nil {
			return true
		}
	}
	return false
}

// expireLeases: a lease whose local end came, unrenewed, is lost.
func (w *Worker) expireLeases(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range w.active {
		if j.leaseHeld() && !now.Before(j.deadline) {
			w.loseLease(j, "lease_expired")
		}
	}
}

type renewal struct {
	job       *activeJob
	gen       uint64 // the lease generation it was sent for
	progressN uint64
	sent      bool // it carried progress
}

// heartbeat renews the chosen leases; true when the answer was lost.
func (w *Worker) heartbeat(ctx context.Context, which func(*activeJob) bool) bool {
	w.mu.Lock()
	sentAt := time.Now()
	var sent []renewal
	var leases []HeartbeatLease
	earliest := sentAt.Add(w.renewInterval())
	done := make(chan struct{})
	for _, j := range w.active {
		if !j.leaseHeld() || !which(j) {
			continue
		}
		item := HeartbeatLease{JobID: j.view.ID, LeaseToken: j.token, Progress: j.progress}
		sent = append(sent, renewal{job: j, gen: j.gen, progressN: j.progressN, sent: j.progress != nil})
		leases = append(leases, item)
		j.renewing, j.renewSoon = done, false
		if j.deadline.Before(earliest) {
			earliest = j.deadline
		}
	}
	workerID := w.workerID
	w.mu.Unlock()
	defer close(done)
	if len(sent) == 0 {
		return false
	}
	// No answer is worth waiting for past the earliest lease's end: the retry must come before it.
	callCtx, cancel := context.WithTimeout(ctx, max(time.Millisecond, time.Until(earliest)))
	results, err := w.client.Heartbeat(callCtx, workerID, w.opts.LeaseSeconds, leases)
	cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, r := range sent {
		j := r.job
		if j.renewing == done {
			j.renewing = nil
		}
		if j.lost || j.timedOut != nil || j.gen != r.gen {
			continue // dropped, or a fresh claim replaced the lease it renewed
		}
		if i >= len(results) {
			j.renewSoon = true // the deadline stays: never later than the server's
			continue
		}
		if !results[i].Renewed {
			reason := "renew_refused"
			if results[i].Reason == "timed_out" {
				reason = "timed_out"
			}
			w.loseLease(j, reason)
			continue
		}
		j.deadline = leaseEnd(sentAt.Add(w.lease), j.attemptAt)
		if r.sent && j.progressN == r.progressN {
			j.progress = nil // stored; a newer record goes with the next flush
		}
	}
	if err != nil {
		w.log.Warn("pb-fleet: heartbeat got no answer; sending it again soon", "leases", len(sent)-len(results), "error", err)
		return true
	}
	return false
}
