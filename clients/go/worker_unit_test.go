package pbfleet

// Unit tests of the Worker's races against an in-process fake of the
// /api/fleet routes (or none): no PocketBase. Run them alone with
// `go test -race -tags unit ./...` (the tag leaves the integration tests,
// and the PocketBase they start, out).

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeFleet answers the routes a Worker calls; routes may be replaced per test.
type fakeFleet struct {
	srv    *httptest.Server
	mu     sync.Mutex
	routes map[string]func(body json.RawMessage) (int, any)
	bodies map[string][]json.RawMessage
}

func newFakeFleet(t *testing.T) *fakeFleet {
	t.Helper()
	f := &fakeFleet{bodies: map[string][]json.RawMessage{}}
	f.routes = map[string]func(json.RawMessage) (int, any){
		"/api/fleet/claim-next": func(json.RawMessage) (int, any) { return 200, map[string]any{"jobs": []any{}} },
		"/api/fleet/heartbeat": func(body json.RawMessage) (int, any) {
			var req struct {
				Leases []HeartbeatLease `json:"leases"`
			}
			_ = json.Unmarshal(body, &req)
			results := []RenewResult{}
			for _, l := range req.Leases {
				results = append(results, RenewResult{JobID: l.JobID, Renewed: true})
			}
			return 200, map[string]any{"results": results}
		},
		"/api/fleet/complete": func(body json.RawMessage) (int, any) {
			var req struct {
				Releases []releaseWire `json:"releases"`
			}
			_ = json.Unmarshal(body, &req)
			results := []ReleaseResult{}
			for _, r := range req.Releases {
				results = append(results, ReleaseResult{JobID: r.JobID, Released: true})
			}
			return 200, map[string]any{"results": results}
		},
		"/api/fleet/release": func(json.RawMessage) (int, any) { return 200, map[string]any{"released": true} },
		"/api/fleet/renew":   func(json.RawMessage) (int, any) { return 200, map[string]any{"renewed": true} },
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var body json.RawMessage
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		route := f.routes[r.URL.Path]
		f.bodies[r.URL.Path] = append(f.bodies[r.URL.Path], body)
		f.mu.Unlock()
		if route == nil {
			rw.WriteHeader(404)
			_, _ = rw.Write([]byte(`{"message":"not found"}`))
			return
		}
		status, answer := route(body)
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(status)
		_ = json.NewEncoder(rw).Encode(answer)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeFleet) route(path string, h func(json.RawMessage) (int, any)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[path] = h
}

func (f *fakeFleet) calls(path string) []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]json.RawMessage(nil), f.bodies[path]...)
}

func unitWorker(t *testing.T, url string, opts WorkerOptions) *Worker {
	t.Helper()
	c, err := NewClient(url, Options{AdminToken: "admin-token", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Handler == nil {
		opts.Handler = func(ctx context.Context, job *Job) (any, error) { return nil, nil }
	}
	if opts.WorkerID == "" {
		opts.WorkerID = "unit-worker"
	}
	w, err := NewWorker(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// heldJob puts a running job (its lease held) into the Worker, as startJob would.
func heldJob(w *Worker, id, token string) *activeJob {
	ctx, cancel := context.WithCancelCause(context.Background())
	j := &activeJob{token: token, ctx: ctx, cancel: cancel, deadline: time.Now().Add(w.lease), ended: make(chan struct{})}
	j.view = &Job{ID: id, Queue: "default", Attempt: 1, WorkerID: w.workerID, LeaseToken: token, mu: &w.mu}
	w.mu.Lock()
	w.active[id] = j
	w.slots++
	w.mu.Unlock()
	return j
}

func everyLease(*activeJob) bool { return true }

// Fix 1: a new run waiting for an earlier run of its job must not call the
// handler when its own lease was lost, or it timed out, meanwhile.
func TestWaitingRunDoesNotStartAfterLosingItsLeaseUnit(t *testing.T) {
	for _, how := range []string{"lease lost", "timed out"} {
		t.Run(how, func(t *testing.T) {
			var mu sync.Mutex
			called := false
			w := unitWorker(t, "http://127.0.0.1:1", WorkerOptions{Handler: func(ctx context.Context, job *Job) (any, error) {
				mu.Lock()
				called = true
				mu.Unlock()
				return nil, nil
			}})
			previous := &activeJob{ended: make(chan struct{})}
			j := heldJob(w, "j1", "tok")
			j.previous = previous
			w.jobs.Add(1)
			go w.runJob(j)
			w.mu.Lock()
			if how == "lease lost" {
				w.loseLease(j, "renew_refused")
			} else {
				done := make(chan struct{})
				close(done) // its release has answered
				j.timedOut = done
				j.cancel(&JobTimeoutError{JobID: "j1"})
			}
			w.mu.Unlock()
			close(previous.ended)
			w.jobs.Wait()
			mu.Lock()
			defer mu.Unlock()
			if called {
				t.Fatalf("%s while waiting for the earlier run: the handler ran anyway", how)
			}
		})
	}
}

// Fix 2: StopRelease keeps renewing a lease until its handler returns.
func TestHandBackKeepsRenewingUntilTheHandlerReturnsUnit(t *testing.T) {
	f := newFakeFleet(t)
	w := unitWorker(t, f.srv.URL, WorkerOptions{LeaseSeconds: 3})
	j := heldJob(w, "j1", "tok")
	w.signalStop(StopRelease)
	w.mu.Lock()
	handBack := j.handBack
	j.deadline = time.Now().Add(time.Second)
	w.mu.Unlock()
	if !handBack {
		t.Fatal("StopRelease did not mark the running job for hand-back")
	}
	if lost := w.heartbeat(bg(), everyLease); lost {
		t.Fatal("the heartbeat got no answer")
	}
	if n := len(f.calls("/api/fleet/heartbeat")); n != 1 {
		t.Fatalf("%d heartbeats sent for a job being handed back whose handler still runs, want 1", n)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Until(j.deadline) < 2*time.Second || j.lost {
		t.Fatalf("the renewal was not applied: deadline in %s, lost %v", time.Until(j.deadline), j.lost)
	}
}

// Fixes 3 and 4: a refusal of a renewal sent under the old lease token must
// not lose the lease a re-claim adopted meanwhile; the adopted claim updates
// the handler's Job; an old timeout timer does not fire on the new lease.
func TestReclaimIgnoresStaleRenewalsAndUpdatesTheJobUnit(t *testing.T) {
	f := newFakeFleet(t)
	arrived := make(chan struct{})
	answer := make(chan struct{})
	f.route("/api/fleet/heartbeat", func(body json.RawMessage) (int, any) {
		close(arrived)
		<-answer
		return 200, map[string]any{"results": []RenewResult{{JobID: "j1", Renewed: false}}}
	})
	w := unitWorker(t, f.srv.URL, WorkerOptions{LeaseSeconds: 30})
	j := heldJob(w, "j1", "tok-old")
	beat := make(chan bool)
	go func() { beat <- w.heartbeat(bg(), everyLease) }()
	<-arrived
	deadline := "2030-01-01 00:00:00.000Z"
	adopted := w.startJob(ClaimedJob{LeaseToken: "tok-new",
		Job: QueueJob{JobView: JobView{ID: "j1"}, Attempts: 2, TimeoutSeconds: 3600, Deadline: &deadline}}, time.Now())
	if adopted {
		t.Fatal("a re-claim of a running job started a second run")
	}
	w.mu.Lock()
	renewing := j.renewing
	w.mu.Unlock()
	if renewing != nil {
		t.Error("the re-claim left the old lease's renewal in flight on the job")
	}
	if attempt, token := j.view.Lease(); attempt != 2 || token != "tok-new" {
		t.Errorf("the handler's Job after the re-claim: attempt %d token %q, want 2 and tok-new", attempt, token)
	}
	close(answer)
	<-beat
	w.mu.Lock()
	lost := j.lost
	w.mu.Unlock()
	if lost {
		t.Fatalf("a stale refusal of the old token lost the re-claimed lease (cause %v)", context.Cause(j.ctx))
	}
	w.timeOut(j, 0) // the timer armed for generation 0, already running
	w.mu.Lock()
	timedOut := j.timedOut
	w.stopTimer(j)
	w.mu.Unlock()
	if timedOut != nil {
		t.Fatal("an old timeout timer acted on the re-claimed lease")
	}
}

// Fix 5: a single release that complete refuses (400/413) goes once more as a plain release.
func TestRefusedSingleCompleteItemIsSentAsAPlainReleaseUnit(t *testing.T) {
	for _, status := range []int{400, 413} {
		f := newFakeFleet(t)
		f.route("/api/fleet/complete", func(json.RawMessage) (int, any) {
			return status, map[string]any{"message": "refused"}
		})
		c, err := NewClient(f.srv.URL, Options{AdminToken: "admin-token", Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		w := unitWorker(t, f.srv.URL, WorkerOptions{})
		comp := newCompleter(c, "w1", 2, time.Second, w.log)
		wire := releaseWire{JobID: "j1", Status: StatusDone, LeaseToken: "tok", Result: json.RawMessage(`{"a":1}`)}
		a := &releaseRequest{wire: wire, size: approxSize(wire), reply: make(chan releaseAnswer, 1)}
		b := &releaseRequest{wire: releaseWire{JobID: "j2", Status: StatusRetry, LeaseToken: "tok2", Error: "boom"}, size: 100, reply: make(chan releaseAnswer, 1)}
		comp.send(bg(), []*releaseRequest{a, b})
		for _, r := range []*releaseRequest{a, b} {
			got := <-r.reply
			if got.err != nil || !got.result.Released {
				t.Fatalf("HTTP %d: %s: %+v, want released by a plain release", status, r.wire.JobID, got)
			}
		}
		sent := f.calls("/api/fleet/release")
		if len(sent) != 2 {
			t.Fatalf("HTTP %d: %d plain releases, want 2", status, len(sent))
		}
		var first releaseWire
		_ = json.Unmarshal(sent[0], &first)
		if first.JobID != "j1" || first.WorkerID != "w1" || first.LeaseToken != "tok" || string(first.Result) != `{"a":1}` {
			t.Fatalf("HTTP %d: the plain release sent %s", status, sent[0])
		}
	}
}

// Fix 6: the composed "<id>/<WorkerID>" is checked: Run says so instead of polling forever.
func TestComposedWorkerIDTooLongStopsRunUnit(t *testing.T) {
	f := newFakeFleet(t)
	f.route("/api/collections/fleet_workers/auth-refresh", func(json.RawMessage) (int, any) {
		return 200, map[string]any{"token": "worker-token", "record": map[string]any{"id": "rec0123456789ab"}}
	})
	f.route("/api/fleet/claim-next", func(body json.RawMessage) (int, any) {
		var req struct {
			WorkerID string `json:"workerId"`
		}
		_ = json.Unmarshal(body, &req)
		if len(req.WorkerID) > maxWorkerIDBytes {
			return 400, map[string]any{"message": "workerId too long"}
		}
		return 200, map[string]any{"jobs": []any{}}
	})
	c, err := NewClient(f.srv.URL, Options{WorkerToken: "worker-token", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorker(c, WorkerOptions{Handler: func(ctx context.Context, job *Job) (any, error) { return nil, nil },
		WorkerID: strings.Repeat("x", maxWorkerIDBytes), PollInterval: 10 * time.Millisecond, MaxPollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(bg()) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "workerId") {
			t.Fatalf("Run: %v, want an ErrInvalidArgument about the workerId", err)
		}
	case <-time.After(5 * time.Second):
		w.StopNoWait(StopRelease)
		<-done
		t.Fatalf("Run kept polling with a %d-byte workerId (%d claims)", len(w.WorkerID()), len(f.calls("/api/fleet/claim-next")))
	}
	if n := len(f.calls("/api/fleet/claim-next")); n != 0 {
		t.Errorf("%d claims sent with a workerId the server refuses", n)
	}
}

// Fix 7: the default WorkerID has a random part.
func TestDefaultWorkerIDHasARandomPartUnit(t *testing.T) {
	h := func(ctx context.Context, j *Job) (any, error) { return nil, nil }
	a, _ := checkWorkerOptions(WorkerOptions{Handler: h})
	b, _ := checkWorkerOptions(WorkerOptions{Handler: h})
	host, _ := os.Hostname()
	if a.WorkerID == b.WorkerID || !strings.HasPrefix(a.WorkerID, host+"-") {
		t.Fatalf("default WorkerIDs %q and %q: want hostname-pid-random, different each time", a.WorkerID, b.WorkerID)
	}
}

// Fix 8: a handler can stop the Worker (StopNoWait) without a deadlock.
func TestStopNoWaitFromAHandlerUnit(t *testing.T) {
	f := newFakeFleet(t)
	var once sync.Once
	f.route("/api/fleet/claim-next", func(json.RawMessage) (int, any) {
		jobs := []ClaimedJob{}
		once.Do(func() {
			jobs = append(jobs, ClaimedJob{LeaseToken: "tok", Job: QueueJob{JobView: JobView{ID: "j1"}, Attempts: 1}})
		})
		return 200, map[string]any{"jobs": jobs}
	})
	var w *Worker
	w = unitWorker(t, f.srv.URL, WorkerOptions{PollInterval: 10 * time.Millisecond, MaxPollInterval: 20 * time.Millisecond,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			w.StopNoWait(StopFinish)
			return "ok", nil
		}})
	done := make(chan error, 1)
	go func() { done <- w.Run(bg()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the handler stopped the Worker")
	}
	sent := f.calls("/api/fleet/complete")
	if len(sent) != 1 || !strings.Contains(string(sent[0]), `"result":"ok"`) {
		t.Fatalf("reports: %s, want one complete with the result", sent)
	}
}

// Fix 2, end to end: a handler that outlives its lease after StopRelease
// keeps the lease (renewed) and its job is then handed back, not lost.
func TestStopReleaseWithASlowHandlerHandsTheJobBackUnit(t *testing.T) {
	f := newFakeFleet(t)
	var once sync.Once
	f.route("/api/fleet/claim-next", func(json.RawMessage) (int, any) {
		jobs := []ClaimedJob{}
		once.Do(func() {
			jobs = append(jobs, ClaimedJob{LeaseToken: "tok", Job: QueueJob{JobView: JobView{ID: "j1"}, Attempts: 1}})
		})
		return 200, map[string]any{"jobs": jobs}
	})
	running := make(chan struct{})
	w := unitWorker(t, f.srv.URL, WorkerOptions{LeaseSeconds: 1, PollInterval: 10 * time.Millisecond, MaxPollInterval: 20 * time.Millisecond,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			close(running)
			<-ctx.Done()
			time.Sleep(2 * time.Second) // twice the lease: winding down slowly
			return nil, ctx.Err()
		}})
	done := make(chan error, 1)
	go func() { done <- w.Run(bg()) }()
	<-running
	w.Stop(StopRelease)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	var handedBack bool
	for _, raw := range f.calls("/api/fleet/release") {
		var r releaseWire
		_ = json.Unmarshal(raw, &r)
		handedBack = handedBack || (r.JobID == "j1" && r.Status == StatusPending && r.LeaseToken == "tok")
	}
	if !handedBack || len(f.calls("/api/fleet/heartbeat")) < 3 {
		t.Fatalf("heartbeats %d, releases %s: want the lease renewed while the handler wound down, then handed back",
			len(f.calls("/api/fleet/heartbeat")), f.calls("/api/fleet/release"))
	}
}
