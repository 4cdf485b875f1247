package pbfleet

// The Worker's claim loop: claiming for free slots, and taking each claimed job
// (a new run, or a fresh claim adopted by the run already under way).

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

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
