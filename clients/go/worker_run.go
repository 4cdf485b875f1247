package pbfleet

// Running one job: its timeout, the handler call, its outcome and report, the
// hand-back to pending on a StopRelease, and the end of the run.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

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
