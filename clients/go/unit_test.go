package pbfleet

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestBackoffDelayGrowsCapsAndJitters(t *testing.T) {
	initial, max := 100*time.Millisecond, time.Second
	cases := []struct {
		attempt  int
		random   float64
		min, max time.Duration
	}{
		{0, 0, 50 * time.Millisecond, 50 * time.Millisecond},
		{0, 0.999, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 0, 200 * time.Millisecond, 200 * time.Millisecond},
		{10, 0.5, 750 * time.Millisecond, 750 * time.Millisecond},
		{1000, 0.999, 500 * time.Millisecond, time.Second},
		{-3, 0, 50 * time.Millisecond, 50 * time.Millisecond},
	}
	for _, c := range cases {
		got := backoffDelay(c.attempt, initial, max, c.random)
		if got < c.min || got > c.max {
			t.Errorf("backoffDelay(%d, random %v) = %s, want within [%s, %s]", c.attempt, c.random, got, c.min, c.max)
		}
	}
}

func TestTimeoutArithmetic(t *testing.T) {
	if got := timeoutMargin(5); got != 500*time.Millisecond {
		t.Errorf("timeoutMargin(5) = %s, want 500ms (timeout/10)", got)
	}
	if got := timeoutMargin(60); got != 2*time.Second {
		t.Errorf("timeoutMargin(60) = %s, want 2s (the cap)", got)
	}
	now := time.Now()
	if got := leaseEnd(now.Add(30*time.Second), now.Add(5*time.Second)); !got.Equal(now.Add(5 * time.Second)) {
		t.Errorf("leaseEnd is not clamped to the attempt's deadline: %s", got.Sub(now))
	}
	if got := leaseEnd(now.Add(30*time.Second), time.Time{}); !got.Equal(now.Add(30 * time.Second)) {
		t.Errorf("leaseEnd without a deadline changed the lease: %s", got.Sub(now))
	}
	deadline := "2030-01-01 00:00:00.000Z"
	at, seconds := attemptDeadline(QueueJob{TimeoutSeconds: 7, Deadline: &deadline}, now)
	if seconds != 7 || !at.Equal(now.Add(7*time.Second)) {
		t.Errorf("attemptDeadline = %s, %d; want send time + 7 s", at.Sub(now), seconds)
	}
	if at, _ := attemptDeadline(QueueJob{TimeoutSeconds: 7}, now); !at.IsZero() {
		t.Errorf("a job without a deadline got one")
	}
	for in, want := range map[time.Duration]int{0: 1, 1500 * time.Millisecond: 2, 3 * time.Second: 3, 200 * time.Hour: MaxRateLimitedFor} {
		if got := rateLimitedFor(in); got != want {
			t.Errorf("rateLimitedFor(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestFitErrorCutsOnARuneBoundary(t *testing.T) {
	long := strings.Repeat("é", MaxErrorBytes) // 2 bytes each
	got := fitError(long)
	if len(got) > MaxErrorBytes || !utf8.ValidString(got) {
		t.Fatalf("fitError: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
	if fitError("short") != "short" {
		t.Error("fitError changed a short text")
	}
}

func TestCutBatchesByCountAndBytes(t *testing.T) {
	sizes := make([]int, 250)
	for i := range sizes {
		sizes[i] = 10
	}
	batches := cutBatches(sizes)
	if len(batches) != 3 || len(batches[0]) != 100 || len(batches[2]) != 50 {
		t.Fatalf("250 small items: batches of %v, want 100, 100, 50", lens(batches))
	}
	big := []int{3 << 20, 3 << 20, 100, 5 << 20, 10}
	batches = cutBatches(big)
	want := [][]int{{0}, {1, 2}, {3}, {4}}
	if len(batches) != len(want) {
		t.Fatalf("by bytes: %v, want %v", batches, want)
	}
	for i := range want {
		if len(batches[i]) != len(want[i]) || batches[i][0] != want[i][0] {
			t.Fatalf("by bytes: %v, want %v", batches, want)
		}
	}
	seen := 0
	for _, b := range cutBatches(sizes) {
		seen += len(b)
	}
	if seen != len(sizes) {
		t.Fatalf("cutBatches dropped items: %d of %d", seen, len(sizes))
	}
}

func lens(b [][]int) []int {
	out := make([]int, len(b))
	for i := range b {
		out[i] = len(b[i])
	}
	return out
}

func TestWorkerOptionChecks(t *testing.T) {
	h := func(ctx contextT, j *Job) (any, error) { return nil, nil }
	bad := map[string]WorkerOptions{
		"no handler":          {},
		"both handlers":       {Handler: h, Handlers: map[string]Handler{"a": h}},
		"queue with handlers": {Handlers: map[string]Handler{"a": h}, Queue: "a"},
		"bad queue":           {Handler: h, Queue: "-bad"},
		"lease too long":      {Handler: h, LeaseSeconds: 3601},
		"negative slots":      {Handler: h, Concurrency: -1},
		"reserved id":         {Handler: h, WorkerID: "pb-fleet-sweeper"},
		"poll order":          {Handler: h, PollInterval: time.Second, MaxPollInterval: time.Millisecond},
		"nil queue handler":   {Handlers: map[string]Handler{"a": nil}},
	}
	for name, o := range bad {
		if _, err := checkWorkerOptions(o); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: got %v, want an ErrInvalidArgument", name, err)
		}
	}
	got, err := checkWorkerOptions(WorkerOptions{Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	if got.Concurrency != 1 || got.LeaseSeconds != DefaultLeaseSeconds || got.PollInterval != DefaultPollInterval || got.WorkerID == "" {
		t.Errorf("defaults not applied: %+v", got)
	}
	if identityWorkerID("abc", "host-1") != "abc/host-1" || identityWorkerID("abc", "abc/x") != "abc/x" || identityWorkerID("abc", "abc") != "abc" {
		t.Error("identityWorkerID composes the workerId wrongly")
	}
}

func TestArgumentsAreCheckedBeforeAnyRequest(t *testing.T) {
	if _, err := NewClient("not a url", Options{AdminToken: "x"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad URL: %v", err)
	}
	if _, err := NewClient("http://127.0.0.1:1", Options{AdminToken: "x", WorkerToken: "y"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("two credentials: %v", err)
	}
	// Port 1 answers nothing: any request would be a NetworkError, not an argument error.
	c, err := NewClient("http://127.0.0.1:1", Options{AdminToken: "x"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := bg()
	checks := map[string]error{}
	_, checks["claim-next limit"] = c.ClaimNext(ctx, ClaimNextRequest{WorkerID: "w", Limit: 101})
	_, checks["claim-next no worker"] = c.ClaimNext(ctx, ClaimNextRequest{})
	_, checks["enqueue runAt and delay"] = c.Enqueue(ctx, EnqueueItem{ProbeKey: "k", RunAt: "2030-01-01T00:00:00Z", DelaySeconds: 1})
	_, checks["enqueue priority"] = c.Enqueue(ctx, EnqueueItem{ProbeKey: "k", Priority: 1001})
	_, checks["enqueue payload"] = c.Enqueue(ctx, EnqueueItem{ProbeKey: "k", Payload: func() {}})
	_, checks["release status"] = c.Release(ctx, "w", Release{JobID: "j", Status: "nope"})
	_, checks["rateLimitedFor with done"] = c.Release(ctx, "w", Release{JobID: "j", Status: StatusDone, RateLimitedFor: 5})
	_, checks["heartbeat progress"] = c.Heartbeat(ctx, "w", 0, []HeartbeatLease{{JobID: "j", Progress: []byte(strings.Repeat("1", 5000))}})
	_, checks["complete empty"] = c.Complete(ctx, "w", nil)
	_, checks["complete-and-claim no releases"] = c.CompleteAndClaim(ctx, "w", nil, ClaimNextRequest{})
	_, checks["complete-and-claim 101 releases"] = c.CompleteAndClaim(ctx, "w", make([]Release, 101), ClaimNextRequest{})
	_, checks["complete-and-claim claim's own worker"] = c.CompleteAndClaim(ctx, "w", []Release{{JobID: "j", Status: StatusDone}}, ClaimNextRequest{WorkerID: "v"})
	_, checks["complete-and-claim limit"] = c.CompleteAndClaim(ctx, "w", []Release{{JobID: "j", Status: StatusDone}}, ClaimNextRequest{Limit: 101})
	_, checks["renew lease"] = c.Renew(ctx, RenewRequest{JobID: "j", WorkerID: "w", LeaseSeconds: 4000})
	for name, err := range checks {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: got %v, want an ErrInvalidArgument before any request", name, err)
		}
	}
	if _, err := c.Stats(ctx, StatsFilter{}); !errors.Is(err, ErrNetwork) {
		t.Errorf("a call to a closed port: got %v, want ErrNetwork", err)
	}
}

func TestCompleteAndClaimReadsAServerThatIgnoresTheClaim(t *testing.T) {
	answer := `{"results":[{"jobId":"j1","released":true}]}`
	var sent map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&sent)
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte(answer))
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, Options{AdminToken: "x"})
	if err != nil {
		t.Fatal(err)
	}
	release := []Release{{JobID: "j1", Status: StatusDone, LeaseToken: "t1"}}
	out, err := c.CompleteAndClaim(bg(), "w", release, ClaimNextRequest{Limit: 3, Queues: []string{"q"}})
	if err != nil || !out.ClaimIgnored || out.Jobs != nil || len(out.Results) != 1 || !out.Results[0].Released {
		t.Fatalf("an answer without jobs: %+v %v, want ClaimIgnored and the release's result", out, err)
	}
	if claim, _ := sent["claimNext"].(map[string]any); claim["limit"] != float64(3) || claim["queue"] != "q" || claim["workerId"] != nil {
		t.Errorf("sent claimNext %v, want limit 3 and queue q, without a workerId", sent["claimNext"])
	}
	answer = `{"results":[{"jobId":"j1","released":true}],"jobs":[]}`
	if out, err := c.CompleteAndClaim(bg(), "w", release, ClaimNextRequest{}); err != nil || out.ClaimIgnored || out.Jobs == nil {
		t.Errorf("an answer with no jobs claimed: %+v %v, want an empty Jobs, not ClaimIgnored", out, err)
	}
	answer = `{"results":[{"jobId":"j1","released":true}],"jobs":[{"leaseToken":"t"}]}`
	var protocol *ProtocolError
	if _, err := c.CompleteAndClaim(bg(), "w", release, ClaimNextRequest{}); !errors.As(err, &protocol) {
		t.Errorf("a claimed job without an id: %v, want a ProtocolError", err)
	}
}

func TestErrorKinds(t *testing.T) {
	forbidden := error(&HTTPError{Op: "stats", Status: 403, Message: "no"})
	if !errors.Is(forbidden, ErrForbidden) || errors.Is(forbidden, ErrAuth) {
		t.Error("a 403 must be ErrForbidden and not ErrAuth")
	}
	if !errors.Is(&HTTPError{Status: 401}, ErrAuth) || !errors.Is(&HTTPError{Status: 400, auth: true}, ErrAuth) {
		t.Error("a 401 and a refused sign-in must be ErrAuth")
	}
	if !IsTransient(&TimeoutError{}) || !IsTransient(&HTTPError{Status: 503}) || IsTransient(&HTTPError{Status: 400}) {
		t.Error("IsTransient misjudges")
	}
}
