package pbfleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// maxBatchBodyBytes cuts a complete call by size as well as by count: 100
// results of 1 MB would be a body three times what PocketBase reads.
const maxBatchBodyBytes = 4 << 20

// bodyBytesPerExtraSecond: a large call waits 1 s longer for its answer per
// this many bytes; a timeout would only send all of it again.
const bodyBytesPerExtraSecond = 512 << 10

// releaseRequest is one finished job's release waiting for its complete call.
type releaseRequest struct {
	wire  releaseWire
	size  int                // its JSON's size, for cutting batches by bytes
	reply chan releaseAnswer // buffered 1: the completer never blocks on it
}

type releaseAnswer struct {
	result ReleaseResult
	err    error
}

// completer gathers finished jobs' releases into complete calls of at most
// MaxBatchItems items and maxBatchBodyBytes: one call at a time, and what
// finished while it was on the wire goes in the next one. A call whose answer
// is lost (timeout, reset, 5xx) is sent again: items that committed the first
// time read refused_terminal_same_holder, their own release.
type completer struct {
	client   *Client
	workerID string
	retryFor time.Duration
	log      *slog.Logger
	queue    chan *releaseRequest // bounded: at most one release per slot is waiting
	carry    *releaseRequest      // taken from the queue but left for the next batch (size)
}

func newCompleter(client *Client, workerID string, slots int, retryFor time.Duration, log *slog.Logger) *completer {
	return &completer{client: client, workerID: workerID, retryFor: retryFor, log: log,
		queue: make(chan *releaseRequest, 2*slots)}
}

// submit queues a release and waits for its answer (bounded by the retries).
func (c *completer) submit(w releaseWire) releaseAnswer {
	req := &releaseRequest{wire: w, size: approxSize(w), reply: make(chan releaseAnswer, 1)}
	c.queue <- req
	return <-req.reply
}

func approxSize(w releaseWire) int {
	return len(w.JobID) + len(w.LeaseToken) + len(w.Result) + len(w.Error) + 96
}

// run sends batches until quit is closed and the queue is empty.
func (c *completer) run(ctx context.Context, quit <-chan struct{}) {
	for {
		var first *releaseRequest
		if c.carry != nil {
			first, c.carry = c.carry, nil
		} else {
			select {
			case first = <-c.queue:
			case <-quit:
				// Everyone who submits waits for the answer, so nothing is queued once they are all gone.
				select {
				case first = <-c.queue:
				default:
					return
				}
			}
		}
		c.send(ctx, c.gather(first))
	}
}

// gather takes what is queued now, up to the call's limits.
func (c *completer) gather(first *releaseRequest) []*releaseRequest {
	batch := []*releaseRequest{first}
	size := first.size
	for len(batch) < MaxBatchItems {
		select {
		case next := <-c.queue:
			if !batchHasRoom(len(batch), size, next.size) {
				c.carry = next
				return batch
			}
			batch = append(batch, next)
			size += next.size
		default:
			return batch
		}
	}
	return batch
}

// batchHasRoom: a call of `items` releases of `bytes` takes one more of
// `next` bytes (an empty call takes any one, however large).
func batchHasRoom(items, bytes, next int) bool {
	return items == 0 || (items < MaxBatchItems && bytes+next <= maxBatchBodyBytes)
}

// cutBatches is gather's rule over a list of sizes: the indexes of each call.
func cutBatches(sizes []int) [][]int {
	var out [][]int
	var cur []int
	bytes := 0
	for i, s := range sizes {
		if !batchHasRoom(len(cur), bytes, s) {
			out = append(out, cur)
			cur, bytes = nil, 0
		}
		cur = append(cur, i)
		bytes += s
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// send delivers one answer to every item of the batch, whatever happens.
func (c *completer) send(ctx context.Context, batch []*releaseRequest) {
	wires := make([]releaseWire, len(batch))
	size := 0
	for i, r := range batch {
		wires[i] = r.wire
		size += r.size
	}
	giveUpAt := time.Now().Add(c.retryFor)
	for attempt := 0; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, c.client.timeout+time.Duration(size/bodyBytesPerExtraSecond)*time.Second)
		results, err := c.client.completeWire(callCtx, c.workerID, wires)
		cancel()
		if err == nil {
			for i, r := range batch {
				r.reply <- releaseAnswer{result: results[i]}
			}
			return
		}
		var h *HTTPError
		tooLarge := errors.As(err, &h) && (h.Status == 413 || h.Status == 400)
		if tooLarge && len(batch) > 1 {
			// One bad (or too large) item must not fail the others: halves, down to single items.
			c.log.Warn("pb-fleet: complete refused; sending it in halves", "items", len(batch), "error", err)
			c.send(ctx, batch[:len(batch)/2])
			c.send(ctx, batch[len(batch)/2:])
			return
		}
		if tooLarge {
			// A single item complete will not carry: once more as a plain release before giving up.
			c.releaseAlone(ctx, batch[0], err)
			return
		}
		if IsTransient(err) && time.Now().Before(giveUpAt) && ctx.Err() == nil {
			wait := jitteredBackoff(attempt, 100*time.Millisecond, 5*time.Second)
			c.log.Warn("pb-fleet: complete got no answer; sending it again", "items", len(batch), "attempt", attempt+1, "in", wait, "error", err)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
			continue
		}
		err = fmt.Errorf("pb-fleet: gave up the release after %d attempt(s): %w", attempt+1, err)
		for _, r := range batch {
			r.reply <- releaseAnswer{err: err}
		}
		return
	}
}

// releaseAlone sends one release as a plain POST /api/fleet/release (resent
// for up to retryFor while it gets no answer); completeErr: why complete
// could not carry it.
func (c *completer) releaseAlone(ctx context.Context, r *releaseRequest, completeErr error) {
	rel := Release{JobID: r.wire.JobID, Status: r.wire.Status, LeaseToken: r.wire.LeaseToken, Error: r.wire.Error, RateLimitedFor: r.wire.RateLimitedFor}
	if r.wire.Result != nil {
		rel.Result = r.wire.Result // json.RawMessage: sent as is
	}
	giveUpAt := time.Now().Add(c.retryFor)
	for attempt := 0; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, c.client.timeout+time.Duration(r.size/bodyBytesPerExtraSecond)*time.Second)
		answer, err := c.client.Release(callCtx, c.workerID, rel)
		cancel()
		if err == nil {
			r.reply <- releaseAnswer{result: answer}
			return
		}
		if IsTransient(err) && time.Now().Before(giveUpAt) && ctx.Err() == nil {
			wait := jitteredBackoff(attempt, 100*time.Millisecond, 5*time.Second)
			c.log.Warn("pb-fleet: release got no answer; sending it again", "job", rel.JobID, "attempt", attempt+1, "in", wait, "error", err)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
			continue
		}
		r.reply <- releaseAnswer{err: fmt.Errorf("pb-fleet: complete could not carry the release (%v), then the release alone failed after %d attempt(s): %w", completeErr, attempt+1, err)}
		return
	}
}
