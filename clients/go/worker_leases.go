package pbfleet

// Lease upkeep: recorded progress, lost and expired leases, and the heartbeat
// loop that renews every held lease in one call.

import (
	"context"
	"fmt"
	"time"
)

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
