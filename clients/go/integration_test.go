//go:build !unit

package pbfleet

// Integration tests against a real PocketBase: TestMain starts one through
// the repository's scripts/pocketbase/serve-for-tests.mjs (PB_VERSION picks
// the version) and stops it by closing the script's stdin.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type testServer struct {
	URL           string `json:"url"`
	Version       string `json:"version"`
	Line          string `json:"line"`
	AdminEmail    string `json:"adminEmail"`
	AdminPassword string `json:"adminPassword"`
	Token         string `json:"token"`
}

var pb testServer

func TestMain(m *testing.M) {
	os.Exit(runWithPocketBase(m))
}

func runWithPocketBase(m *testing.M) int {
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "pocketbase", "serve-for-tests.mjs"))
	if err == nil {
		_, err = os.Stat(script)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbfleet tests: the PocketBase launcher %s is missing (%v): the integration tests need the pb-fleet repository around this module\n", script, err)
		return 1
	}
	node, err := exec.LookPath("node")
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbfleet tests: node is not on PATH (%v): the integration tests start PocketBase through %s\n", err, script)
		return 1
	}
	cmd := exec.Command(node, script)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbfleet tests: %v\n", err)
		return 1
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbfleet tests: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "pbfleet tests: could not start %s: %v\n", script, err)
		return 1
	}
	defer func() {
		stdin.Close() // the launcher stops PocketBase when its stdin closes
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			fmt.Fprintln(os.Stderr, "pbfleet tests: the launcher did not stop within 20 s; killing it")
			_ = cmd.Process.Kill()
		}
	}()
	lines := make(chan []byte, 1)
	go func() {
		reader := bufio.NewReader(stdout)
		line, _ := reader.ReadBytes('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, reader)
	}()
	select {
	case line := <-lines:
		if err := json.Unmarshal(line, &pb); err != nil || pb.URL == "" {
			fmt.Fprintf(os.Stderr, "pbfleet tests: the launcher printed %q, not its JSON line\n", line)
			return 1
		}
	case <-time.After(5 * time.Minute):
		fmt.Fprintln(os.Stderr, "pbfleet tests: PocketBase did not start within 5 minutes")
		return 1
	}
	fmt.Fprintf(os.Stderr, "pbfleet tests: PocketBase %s (line %s) at %s\n", pb.Version, pb.Line, pb.URL)
	return m.Run()
}

// ---- helpers ------------------------------------------------------------------

func randomName(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func adminClient(t *testing.T) *Client {
	t.Helper()
	c, err := NewClient(pb.URL, Options{AdminEmail: pb.AdminEmail, AdminPassword: pb.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// adminRequest is a raw admin call of PocketBase's record API.
func adminRequest(t *testing.T, method, path string, body any, out any) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		reader = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, pb.URL+path, reader)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", pb.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}
}

type identity struct{ name, password, id string }

func createIdentity(t *testing.T, queues []string, canEnqueue bool) identity {
	t.Helper()
	id := identity{name: randomName("gotest_"), password: randomName("pw-") + "-long-enough"}
	var rec struct {
		ID string `json:"id"`
	}
	adminRequest(t, http.MethodPost, "/api/collections/fleet_workers/records", map[string]any{
		"username": id.name, "password": id.password, "passwordConfirm": id.password,
		"queues": queues, "can_enqueue": canEnqueue,
	}, &rec)
	id.id = rec.ID
	return id
}

func workerClient(t *testing.T, url string, id identity) *Client {
	t.Helper()
	c, err := NewClient(url, Options{WorkerIdentity: id.name, WorkerPassword: id.password})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type row struct {
	ID         string          `json:"id"`
	Status     string          `json:"status"`
	Attempts   int             `json:"attempts"`
	Result     json.RawMessage `json:"result"`
	LastError  string          `json:"last_error"`
	ClaimedBy  string          `json:"claimed_by"`
	Progress   json.RawMessage `json:"progress"`
	RunAt      string          `json:"run_at"`
	FinishedAt string          `json:"finished_at"`
}

func getRow(t *testing.T, id string) row {
	t.Helper()
	var r row
	adminRequest(t, http.MethodGet, "/api/collections/probe_jobs/records/"+id, nil, &r)
	return r
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func enqueue(t *testing.T, c *Client, items ...EnqueueItem) []string {
	t.Helper()
	jobs, err := c.EnqueueMany(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		if !j.Created {
			t.Fatalf("job %d not created", i)
		}
		ids[i] = j.ID
	}
	return ids
}

// startWorker runs a Worker until the test ends (Stop(StopFinish) then).
func startWorker(t *testing.T, c *Client, opts WorkerOptions) *Worker {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval, opts.MaxPollInterval = 20*time.Millisecond, 200*time.Millisecond
	}
	w, err := NewWorker(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	t.Cleanup(func() {
		w.Stop(StopFinish)
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return w
}

type queueSetup struct {
	queue  string
	admin  *Client
	worker *Client
	id     identity
}

func newQueue(t *testing.T) queueSetup {
	q := randomName("go-")
	id := createIdentity(t, []string{q}, false)
	return queueSetup{queue: q, admin: adminClient(t), worker: workerClient(t, pb.URL, id), id: id}
}

func allDone(t *testing.T, ids []string) func() bool {
	return func() bool {
		for _, id := range ids {
			if getRow(t, id).Status != "done" {
				return false
			}
		}
		return true
	}
}

// ---- tests ----------------------------------------------------------------------

func TestDrainExactlyOnceWithResults(t *testing.T) {
	s := newQueue(t)
	items := make([]EnqueueItem, 40)
	for i := range items {
		items[i] = EnqueueItem{ProbeKey: fmt.Sprintf("drain/%d", i), Queue: s.queue, Payload: map[string]int{"n": i}}
	}
	ids := enqueue(t, s.admin, items...)
	var starts sync.Map
	var calls atomic.Int64
	w := startWorker(t, s.worker, WorkerOptions{Queue: s.queue, Concurrency: 4, WorkerID: "drain", LeaseSeconds: 5,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			calls.Add(1)
			n, _ := starts.LoadOrStore(job.ID, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			var p struct{ N int }
			if err := json.Unmarshal(job.Payload, &p); err != nil {
				return nil, err
			}
			return map[string]int{"double": 2 * p.N}, nil
		}})
	waitFor(t, 30*time.Second, "every job done", allDone(t, ids))
	if calls.Load() != int64(len(ids)) {
		t.Errorf("%d handler calls for %d jobs", calls.Load(), len(ids))
	}
	if want := s.id.id + "/drain"; w.WorkerID() != want {
		t.Errorf("workerId %q, want %q", w.WorkerID(), want)
	}
	for i, id := range ids {
		r := getRow(t, id)
		var result struct{ Double int }
		_ = json.Unmarshal(r.Result, &result)
		if r.Attempts != 1 || result.Double != 2*i || r.ClaimedBy != s.id.id+"/drain" {
			t.Errorf("job %d: attempts %d, result %s, claimed_by %q", i, r.Attempts, r.Result, r.ClaimedBy)
		}
	}
}

func TestRetryThenDoneAndPermanentFailure(t *testing.T) {
	s := newQueue(t)
	three := 3
	ids := enqueue(t, s.admin,
		EnqueueItem{ProbeKey: "retry", Queue: s.queue, Payload: map[string]string{"op": "flaky"}, MaxAttempts: &three},
		EnqueueItem{ProbeKey: "permanent", Queue: s.queue, Payload: map[string]string{"op": "permanent"}, MaxAttempts: &three},
		EnqueueItem{ProbeKey: "dead", Queue: s.queue, Payload: map[string]string{"op": "always"}, MaxAttempts: new(int)},
	)
	startWorker(t, s.worker, WorkerOptions{Queue: s.queue, Concurrency: 2, LeaseSeconds: 5,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			var p struct{ Op string }
			_ = json.Unmarshal(job.Payload, &p)
			switch {
			case p.Op == "flaky" && job.Attempt < 2:
				return nil, errors.New("flaky first time")
			case p.Op == "permanent":
				return nil, &PermanentError{Message: "cannot ever work"}
			case p.Op == "always":
				return nil, errors.New("always fails") // max_attempts 0: failed at once
			}
			return map[string]int{"attempt": job.Attempt}, nil
		}})
	waitFor(t, 30*time.Second, "the flaky job done", func() bool { return getRow(t, ids[0]).Status == "done" })
	if r := getRow(t, ids[0]); r.Attempts != 2 || string(r.Result) != `{"attempt":2}` {
		t.Errorf("flaky job: attempts %d result %s, want 2 and {\"attempt\":2}", r.Attempts, r.Result)
	}
	waitFor(t, 10*time.Second, "the permanent job failed", func() bool { return getRow(t, ids[1]).Status == "failed" })
	if r := getRow(t, ids[1]); r.Attempts != 1 || r.LastError != "cannot ever work" {
		t.Errorf("permanent job: attempts %d last_error %q", r.Attempts, r.LastError)
	}
	waitFor(t, 10*time.Second, "the uncapped job failed", func() bool { return getRow(t, ids[2]).Status == "failed" })
	if r := getRow(t, ids[2]); r.Attempts != 1 || r.LastError != "always fails" {
		t.Errorf("uncapped job: attempts %d last_error %q", r.Attempts, r.LastError)
	}
	// The admin's retry puts a failed job back; the worker then fails it again (permanent).
	res, err := s.admin.Retry(context.Background(), ids[1])
	if err != nil || !res.Retried {
		t.Fatalf("retry: %+v %v", res, err)
	}
	waitFor(t, 10*time.Second, "the retried job failed again", func() bool {
		r := getRow(t, ids[1])
		return r.Status == "failed" && r.Attempts == 1 && r.FinishedAt != ""
	})
}

func TestCancelCancelsTheHandlersContext(t *testing.T) {
	s := newQueue(t)
	causes := make(chan error, 1)
	running := make(chan string, 1)
	startWorker(t, s.worker, WorkerOptions{Queue: s.queue, LeaseSeconds: 3,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			if job.ProbeKey == "next" {
				return "next ran", nil
			}
			running <- job.ID
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return "must not be written", nil
		}})
	ids := enqueue(t, s.admin, EnqueueItem{ProbeKey: "cancel-me", Queue: s.queue})
	select {
	case <-running:
	case <-time.After(15 * time.Second):
		t.Fatal("the handler did not start")
	}
	if res, err := s.admin.Cancel(context.Background(), ids[0]); err != nil || !res.Cancelled {
		t.Fatalf("cancel: %+v %v", res, err)
	}
	select {
	case cause := <-causes:
		var lost *LeaseLostError
		if !errors.As(cause, &lost) || lost.JobID != ids[0] {
			t.Errorf("cause %v, want a *LeaseLostError of the job", cause)
		}
	case <-time.After(5 * time.Second): // a renew comes every second (lease 3 s)
		t.Fatal("the handler's context was not cancelled")
	}
	next := enqueue(t, s.admin, EnqueueItem{ProbeKey: "next", Queue: s.queue})
	waitFor(t, 15*time.Second, "the next job done", allDone(t, next))
	if r := getRow(t, ids[0]); r.Status != "cancelled" || (len(r.Result) != 0 && string(r.Result) != "null") {
		t.Errorf("cancelled job: status %s result %s", r.Status, r.Result)
	}
}

func TestForbiddenAndBadRequestErrors(t *testing.T) {
	s := newQueue(t)
	ctx := context.Background()
	_, err := s.worker.Stats(ctx, StatsFilter{})
	var h *HTTPError
	if !errors.Is(err, ErrForbidden) || !errors.As(err, &h) || h.Status != 403 || h.Message == "" {
		t.Fatalf("a worker's stats: %v, want a 403 ErrForbidden with the server's message", err)
	}
	if _, err := s.worker.Enqueue(ctx, EnqueueItem{ProbeKey: "x", Queue: s.queue}); !errors.Is(err, ErrForbidden) {
		t.Errorf("enqueue without can_enqueue: %v, want ErrForbidden", err)
	}
	// A zone-less runAt is the server's to refuse (the client passes dates through).
	_, err = s.admin.Enqueue(ctx, EnqueueItem{ProbeKey: "x", Queue: s.queue, RunAt: "2030-01-01T00:00:00"})
	if !errors.As(err, &h) || h.Status != 400 || h.Message == "" || h.Message == "Bad Request" {
		t.Fatalf("zone-less runAt: %v, want a 400 with the server's message", err)
	}
	t.Logf("the server's 400: %s", h.Message)
	bad, _ := NewClient(pb.URL, Options{WorkerIdentity: s.id.name, WorkerPassword: "wrong-password-123"})
	if _, err := bad.Identity(ctx); !errors.Is(err, ErrAuth) {
		t.Errorf("a wrong password: %v, want ErrAuth", err)
	}
}

func TestCompleteAndClaimReleasesAndClaimsInOneCall(t *testing.T) {
	s := newQueue(t)
	ctx := context.Background()
	items := make([]EnqueueItem, 4)
	for i := range items {
		items[i] = EnqueueItem{ProbeKey: fmt.Sprintf("cc/%d", i), Queue: s.queue}
	}
	enqueue(t, s.admin, items...)
	holder := s.id.id + "/cc"
	first, err := s.worker.ClaimNext(ctx, ClaimNextRequest{WorkerID: holder, Limit: 1, Queues: []string{s.queue}})
	if err != nil || len(first) != 1 {
		t.Fatalf("claim-next: %v %v", first, err)
	}
	out, err := s.worker.CompleteAndClaim(ctx, holder, []Release{{JobID: first[0].Job.ID, Status: StatusDone, LeaseToken: first[0].LeaseToken, Result: map[string]int{"n": 1}}},
		ClaimNextRequest{Limit: 2, Queues: []string{s.queue}, LeaseSeconds: 60})
	if err != nil {
		t.Fatalf("complete and claim: %v", err)
	}
	if len(out.Results) != 1 || !out.Results[0].Released || out.ClaimIgnored || len(out.Jobs) != 2 {
		t.Fatalf("complete and claim answered %+v, want its release released and 2 jobs claimed", out)
	}
	for _, j := range out.Jobs {
		if j.Job.ID == first[0].Job.ID || j.LeaseToken == "" || getRow(t, j.Job.ID).Status != "claimed" || getRow(t, j.Job.ID).ClaimedBy != holder {
			t.Errorf("claimed job %+v: want another job, claimed by %s under a token", j, holder)
		}
	}
	// A refused release is answered per item, and the claim still runs in the same call.
	again, err := s.worker.CompleteAndClaim(ctx, holder, []Release{{JobID: first[0].Job.ID, Status: StatusDone, LeaseToken: "not-the-token"}},
		ClaimNextRequest{Limit: 5, Queues: []string{s.queue}})
	if err != nil || again.Results[0].Released || again.Results[0].Reason != "refused_stale_token" || len(again.Jobs) != 1 {
		t.Fatalf("a stale release with a claim: %+v %v, want refused_stale_token and the last job claimed", again, err)
	}
}

func TestSignsInAgainAfter401(t *testing.T) {
	s := newQueue(t)
	ctx := context.Background()
	if _, err := s.admin.Stats(ctx, StatsFilter{Queue: s.queue}); err != nil {
		t.Fatal(err)
	}
	s.admin.mu.Lock()
	s.admin.token = "not-a-valid-token"
	s.admin.mu.Unlock()
	stats, err := s.admin.Stats(ctx, StatsFilter{Queue: s.queue})
	if err != nil || stats == nil {
		t.Fatalf("after a refused token: %v", err)
	}
	if s.admin.currentToken() == "not-a-valid-token" {
		t.Error("the client did not sign in again")
	}
}

// lossyProxy forwards to PocketBase and, for the first `drop` complete calls,
// closes the connection after the server has answered: the answer is lost.
type lossyProxy struct {
	listener net.Listener
	drop     atomic.Int64
	dropped  atomic.Int64

	mu              sync.Mutex
	calls           map[string]int // by path
	heartbeatLeases []int          // leases per heartbeat call
}

func (p *lossyProxy) count(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[path]
}

func startLossyProxy(t *testing.T, drop int64) *lossyProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &lossyProxy{listener: l, calls: map[string]int{}}
	p.drop.Store(drop)
	server := &http.Server{Handler: http.HandlerFunc(p.serve)}
	go func() { _ = server.Serve(l) }()
	t.Cleanup(func() { _ = server.Close() })
	return p
}

func (p *lossyProxy) url() string { return "http://" + p.listener.Addr().String() }

func (p *lossyProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.calls[r.URL.Path]++
	if r.URL.Path == "/api/fleet/heartbeat" {
		var hb struct{ Leases []json.RawMessage }
		_ = json.Unmarshal(body, &hb)
		p.heartbeatLeases = append(p.heartbeatLeases, len(hb.Leases))
	}
	p.mu.Unlock()
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, pb.URL+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if r.URL.Path == "/api/fleet/complete" && p.drop.Add(-1) >= 0 {
		p.dropped.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // forwarded and committed, but the caller never hears it
		}
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

func TestLostCompleteAnswersDropNoResult(t *testing.T) {
	s := newQueue(t)
	proxy := startLossyProxy(t, 3)
	items := make([]EnqueueItem, 12)
	for i := range items {
		items[i] = EnqueueItem{ProbeKey: fmt.Sprintf("lossy/%d", i), Queue: s.queue, Payload: i}
	}
	ids := enqueue(t, s.admin, items...)
	var calls atomic.Int64
	startWorker(t, workerClient(t, proxy.url(), s.id), WorkerOptions{Queue: s.queue, Concurrency: 3, LeaseSeconds: 10,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			calls.Add(1)
			return map[string]json.RawMessage{"got": job.Payload}, nil
		}})
	waitFor(t, 40*time.Second, "every job done", allDone(t, ids))
	if proxy.dropped.Load() != 3 {
		t.Fatalf("the proxy dropped %d complete answers, want 3", proxy.dropped.Load())
	}
	if calls.Load() != int64(len(ids)) {
		t.Errorf("%d handler calls for %d jobs: a job ran twice", calls.Load(), len(ids))
	}
	for i, id := range ids {
		if r := getRow(t, id); string(r.Result) != fmt.Sprintf(`{"got":%d}`, i) || r.Attempts != 1 {
			t.Errorf("job %d: result %s attempts %d", i, r.Result, r.Attempts)
		}
	}
}

func TestGracefulStopFinishesRunningJobsAndClaimsNothingNew(t *testing.T) {
	s := newQueue(t)
	started := make(chan string, 2)
	w, err := NewWorker(s.worker, WorkerOptions{Queue: s.queue, Concurrency: 2, LeaseSeconds: 3,
		PollInterval: 20 * time.Millisecond, MaxPollInterval: 100 * time.Millisecond,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			started <- job.ID
			time.Sleep(1500 * time.Millisecond) // finish mode: the context is never cancelled
			return "finished", ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	runDone := make(chan error, 1)
	go func() { runDone <- w.Run(context.Background()) }()
	ids := enqueue(t, s.admin, EnqueueItem{ProbeKey: "a", Queue: s.queue}, EnqueueItem{ProbeKey: "b", Queue: s.queue})
	for range ids {
		select {
		case <-started:
		case <-time.After(15 * time.Second):
			t.Fatal("the jobs did not start")
		}
	}
	stopped := make(chan struct{})
	go func() { w.Stop(StopFinish); close(stopped) }()
	waitFor(t, 5*time.Second, "the worker stopping", w.isStopping)
	late := enqueue(t, s.admin, EnqueueItem{ProbeKey: "late", Queue: s.queue})
	select {
	case <-stopped:
	case <-time.After(15 * time.Second):
		t.Fatal("Stop did not return")
	}
	if err := <-runDone; err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, id := range ids {
		if r := getRow(t, id); r.Status != "done" || string(r.Result) != `"finished"` {
			t.Errorf("running job %s: status %s result %s", id, r.Status, r.Result)
		}
	}
	if r := getRow(t, late[0]); r.Status != "pending" || r.Attempts != 0 {
		t.Errorf("job enqueued after the stop: status %s attempts %d, want pending and 0", r.Status, r.Attempts)
	}
}

func TestStopReleaseHandsJobsBack(t *testing.T) {
	s := newQueue(t)
	running := make(chan struct{}, 1)
	causes := make(chan error, 1)
	w, err := NewWorker(s.worker, WorkerOptions{Queue: s.queue, LeaseSeconds: 5, PollInterval: 20 * time.Millisecond,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			running <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.Run(context.Background()) }()
	ids := enqueue(t, s.admin, EnqueueItem{ProbeKey: "hand-back", Queue: s.queue})
	<-running
	w.Stop(StopRelease)
	if cause := <-causes; !errors.Is(cause, ErrWorkerStopping) {
		t.Errorf("cause %v, want ErrWorkerStopping", cause)
	}
	if r := getRow(t, ids[0]); r.Status != "pending" || r.ClaimedBy != "" {
		t.Errorf("handed back: status %s claimed_by %q, want pending and none", r.Status, r.ClaimedBy)
	}
}

func TestTimeoutCancelsAndFailsTheAttempt(t *testing.T) {
	s := newQueue(t)
	one := 1
	causes := make(chan error, 1)
	startWorker(t, s.worker, WorkerOptions{Queue: s.queue, LeaseSeconds: 10,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return "late result, ignored", nil
		}})
	begin := time.Now()
	ids := enqueue(t, s.admin, EnqueueItem{ProbeKey: "slow", Queue: s.queue, TimeoutSeconds: 2, MaxAttempts: &one})
	select {
	case cause := <-causes:
		var timeout *JobTimeoutError
		if !errors.As(cause, &timeout) || timeout.TimeoutSeconds != 2 {
			t.Fatalf("cause %v, want a *JobTimeoutError of 2 s", cause)
		}
		if took := time.Since(begin); took < 1500*time.Millisecond || took > 5*time.Second {
			t.Errorf("cancelled after %s, want about 1.8 s (deadline - timeout/10)", took)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the handler was not cancelled at its deadline")
	}
	waitFor(t, 10*time.Second, "the job failed", func() bool { return getRow(t, ids[0]).Status == "failed" })
	if r := getRow(t, ids[0]); r.LastError != "timed out after 2 s" || (len(r.Result) != 0 && string(r.Result) != "null") {
		t.Errorf("timed-out job: last_error %q result %s", r.LastError, r.Result)
	}
}

func TestProgressIsStoredWhileTheJobRuns(t *testing.T) {
	s := newQueue(t)
	release := make(chan struct{})
	startWorker(t, s.worker, WorkerOptions{Queue: s.queue, LeaseSeconds: 30, // a tick every 10 s: the flush must not wait for it
		Handler: func(ctx context.Context, job *Job) (any, error) {
			if err := job.Progress(map[string]string{"step": "halfway"}); err != nil {
				return nil, err
			}
			if err := job.Progress(make([]byte, 5000)); err == nil {
				return nil, errors.New("a progress of 5000 bytes was taken")
			}
			<-release
			return "ok", nil
		}})
	ids := enqueue(t, s.admin, EnqueueItem{ProbeKey: "progress", Queue: s.queue})
	begin := time.Now()
	waitFor(t, 10*time.Second, "progress on the row", func() bool { return string(getRow(t, ids[0]).Progress) == `{"step":"halfway"}` })
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("progress took %s to reach the row", took)
	}
	close(release)
	waitFor(t, 10*time.Second, "the job done", allDone(t, ids))
}

func TestRateLimitedParksTheJob(t *testing.T) {
	s := newQueue(t)
	var firstAt atomic.Int64
	startWorker(t, s.worker, WorkerOptions{Queue: s.queue, LeaseSeconds: 5,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			if firstAt.CompareAndSwap(0, time.Now().UnixMilli()) {
				return nil, &RateLimitedError{RetryAfter: 1500 * time.Millisecond}
			}
			return map[string]int64{"after": time.Now().UnixMilli() - firstAt.Load()}, nil
		}})
	ids := enqueue(t, s.admin, EnqueueItem{ProbeKey: "limited", Queue: s.queue})
	waitFor(t, 20*time.Second, "the job done", allDone(t, ids))
	r := getRow(t, ids[0])
	var result struct{ After int64 }
	_ = json.Unmarshal(r.Result, &result)
	if result.After < 1900 || r.Attempts != 1 {
		t.Errorf("rate-limited job: ran again after %d ms (want >= 2000: 1.5 s rounded up), attempts %d (want 1: the attempt given back)", result.After, r.Attempts)
	}
}

func TestOneHeartbeatPerIntervalRenewsEveryLeaseAndBusySlotsClaimNothing(t *testing.T) {
	s := newQueue(t)
	proxy := startLossyProxy(t, 0)
	release := make(chan struct{})
	var running atomic.Int64
	startWorker(t, workerClient(t, proxy.url(), s.id), WorkerOptions{Queue: s.queue, Concurrency: 3, LeaseSeconds: 3,
		Handler: func(ctx context.Context, job *Job) (any, error) {
			running.Add(1)
			select {
			case <-release:
				return "ok", nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}})
	ids := enqueue(t, s.admin, EnqueueItem{ProbeKey: "hb/1", Queue: s.queue}, EnqueueItem{ProbeKey: "hb/2", Queue: s.queue},
		EnqueueItem{ProbeKey: "hb/3", Queue: s.queue})
	waitFor(t, 15*time.Second, "three handlers running", func() bool { return running.Load() == 3 })
	time.Sleep(200 * time.Millisecond) // a claim-next sent before the third start has answered by now
	claimsBefore, beatsBefore := proxy.count("/api/fleet/claim-next"), proxy.count("/api/fleet/heartbeat")
	proxy.mu.Lock()
	leasesBefore := len(proxy.heartbeatLeases)
	proxy.mu.Unlock()
	window := 3500 * time.Millisecond // 3.5 renew intervals of 1 s
	time.Sleep(window)
	claims, beats := proxy.count("/api/fleet/claim-next")-claimsBefore, proxy.count("/api/fleet/heartbeat")-beatsBefore
	close(release)
	waitFor(t, 15*time.Second, "every job done", allDone(t, ids))
	if claims != 0 {
		t.Errorf("%d claim-next calls while every slot was busy, want 0", claims)
	}
	if beats < 3 || beats > 4 {
		t.Errorf("%d heartbeats in %s with a 1 s renew interval, want 3 or 4", beats, window)
	}
	if n := proxy.count("/api/fleet/renew"); n != 0 {
		t.Errorf("%d single renews, want 0: one heartbeat carries every lease", n)
	}
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	for _, n := range proxy.heartbeatLeases[leasesBefore:] {
		if n != 3 {
			t.Errorf("a heartbeat carried %d leases, want all 3 (%v)", n, proxy.heartbeatLeases)
			break
		}
	}
	for _, id := range ids {
		if r := getRow(t, id); r.Attempts != 1 {
			t.Errorf("job %s: attempts %d, want 1 (its lease never lapsed)", id, r.Attempts)
		}
	}
}
