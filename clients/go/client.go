// Package pbfleet is the Go client of pb-fleet, a job queue kept in
// PocketBase: a Client for the /api/fleet/* routes and a Worker that claims,
// runs and reports jobs with the lease protocol's guarantees. It works
// unchanged against PocketBase 0.22 and 0.23+ and uses the standard library only.
package pbfleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout is a request's longest wait for its answer.
const DefaultTimeout = 10 * time.Second

// maxAnswerBytes bounds what the client reads of one answer: a claim-next of
// 100 jobs with 1 MB payloads each, with room to spare.
const maxAnswerBytes = 160 << 20

const (
	superusersAuthPath = "/api/collections/_superusers/auth-with-password" // PocketBase 0.23+
	adminsAuthPath     = "/api/admins/auth-with-password"                  // PocketBase 0.22
	workerAuthPath     = "/api/collections/fleet_workers/auth-with-password"
	workerRefreshPath  = "/api/collections/fleet_workers/auth-refresh"
)

// Options says who the Client signs in as: exactly one of an admin's
// (superuser's on 0.23+) email and password, a worker identity's name and
// password, an admin token, or a worker token.
type Options struct {
	AdminEmail, AdminPassword      string
	WorkerIdentity, WorkerPassword string
	// AdminToken is a ready admin/superuser token; a 401 is then returned, not cured.
	AdminToken string
	// WorkerToken is a ready worker identity token; a 401 is then returned, not cured.
	WorkerToken string
	// Timeout is each request's longest wait (default DefaultTimeout).
	Timeout time.Duration
	// HTTPClient to send requests with (default: a client of its own).
	HTTPClient *http.Client
}

// WorkerIdentity is the signed-in fleet_workers record.
type WorkerIdentity struct {
	ID         string   // the record id: a Worker's workerId is it, or begins with "<id>/"
	Name       string   // its username
	Queues     []string // the queues it may take; empty: every queue
	CanEnqueue bool
}

// Client talks to one pb-fleet server. It is safe for concurrent use.
type Client struct {
	base    string
	opts    Options
	http    *http.Client
	timeout time.Duration
	worker  bool

	mu       sync.Mutex
	token    string
	identity *WorkerIdentity
	authPath string // the admin sign-in path that answered (remembered)
	signInMu sync.Mutex
}

// NewClient checks the options and builds a Client; it signs in lazily, on
// the first call that needs it.
func NewClient(serverURL string, opts Options) (*Client, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, argErr("NewClient", "the server URL must be an absolute http(s) URL (got %q)", serverURL)
	}
	kinds := 0
	if opts.AdminEmail != "" || opts.AdminPassword != "" {
		if opts.AdminEmail == "" || opts.AdminPassword == "" {
			return nil, argErr("NewClient", "AdminEmail and AdminPassword go together")
		}
		kinds++
	}
	if opts.WorkerIdentity != "" || opts.WorkerPassword != "" {
		if opts.WorkerIdentity == "" || opts.WorkerPassword == "" {
			return nil, argErr("NewClient", "WorkerIdentity and WorkerPassword go together")
		}
		kinds++
	}
	if opts.AdminToken != "" {
		kinds++
	}
	if opts.WorkerToken != "" {
		kinds++
	}
	if kinds != 1 {
		return nil, argErr("NewClient", "give exactly one of admin email+password, worker identity+password, AdminToken or WorkerToken (got %d)", kinds)
	}
	if opts.Timeout < 0 {
		return nil, argErr("NewClient", "Timeout must be >= 0 (0: the default %s)", DefaultTimeout)
	}
	c := &Client{
		base:    strings.TrimRight(u.String(), "/"),
		opts:    opts,
		http:    opts.HTTPClient,
		timeout: opts.Timeout,
		worker:  opts.WorkerIdentity != "" || opts.WorkerToken != "",
		token:   opts.AdminToken + opts.WorkerToken,
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

// IsWorkerIdentity says whether the client calls as a worker identity.
func (c *Client) IsWorkerIdentity() bool { return c.worker }

// URL is the server's base URL.
func (c *Client) URL() string { return c.base }

func (c *Client) canSignIn() bool {
	return c.opts.AdminPassword != "" || c.opts.WorkerPassword != ""
}

func (c *Client) currentToken() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// Identity is the signed-in worker identity (signing in first if needed), or
// nil for an admin client.
func (c *Client) Identity(ctx context.Context) (*WorkerIdentity, error) {
	if !c.worker {
		return nil, nil
	}
	c.mu.Lock()
	id := c.identity
	c.mu.Unlock()
	if id != nil {
		return id, nil
	}
	if c.opts.WorkerPassword != "" {
		if err := c.signIn(ctx, ""); err != nil {
			return nil, err
		}
	} else {
		// A token from elsewhere carries only the id: PocketBase's auth-refresh tells the record.
		var answer workerAuthAnswer
		if err := c.call(ctx, "identity", http.MethodPost, workerRefreshPath, struct{}{}, &answer); err != nil {
			return nil, err
		}
		if err := c.adoptWorkerAuth("identity", answer); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.identity == nil {
		return nil, &ProtocolError{Op: "identity", Message: "no worker identity after signing in"}
	}
	return c.identity, nil
}

type workerAuthAnswer struct {
	Token  string `json:"token"`
	Record *struct {
		ID         string          `json:"id"`
		Username   string          `json:"username"`
		Queues     json.RawMessage `json:"queues"`
		CanEnqueue bool            `json:"can_enqueue"`
	} `json:"record"`
}

func (c *Client) adoptWorkerAuth(op string, a workerAuthAnswer) error {
	if a.Token == "" {
		return &ProtocolError{Op: op, Message: "answer has no `token`"}
	}
	if a.Record == nil || a.Record.ID == "" {
		return &ProtocolError{Op: op, Message: "answer has no `record` with an `id`"}
	}
	var queues []string
	_ = json.Unmarshal(a.Record.Queues, &queues) // null, "" or [] all mean every queue
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token = a.Token
	c.identity = &WorkerIdentity{ID: a.Record.ID, Name: a.Record.Username, Queues: queues, CanEnqueue: a.Record.CanEnqueue}
	return nil
}

// signIn signs in with the credentials, unless another caller has already
// replaced the token `stale` meanwhile (concurrent 401s share one sign-in).
func (c *Client) signIn(ctx context.Context, stale string) error {
	c.signInMu.Lock()
	defer c.signInMu.Unlock()
	if t := c.currentToken(); t != "" && t != stale {
		return nil
	}
	if !c.canSignIn() {
		return &HTTPError{Op: "authenticate", Status: 401, Message: "the token was refused and this client has no password to sign in with", auth: true}
	}
	if c.worker {
		var answer workerAuthAnswer
		err := c.send(ctx, "authenticate", http.MethodPost, workerAuthPath,
			map[string]string{"identity": c.opts.WorkerIdentity, "password": c.opts.WorkerPassword}, &answer, "")
		if err != nil {
			return c.signInError(err, fmt.Sprintf("worker identity %q", c.opts.WorkerIdentity))
		}
		return c.adoptWorkerAuth("authenticate", answer)
	}
	c.mu.Lock()
	order := []string{superusersAuthPath, adminsAuthPath}
	if c.authPath == adminsAuthPath {
		order = []string{adminsAuthPath, superusersAuthPath}
	}
	c.mu.Unlock()
	var err error
	for _, path := range order {
		var answer struct {
			Token string `json:"token"`
		}
		err = c.send(ctx, "authenticate", http.MethodPost, path,
			map[string]string{"identity": c.opts.AdminEmail, "password": c.opts.AdminPassword}, &answer, "")
		var h *HTTPError
		if errors.As(err, &h) && h.Status == 404 {
			continue // the other PocketBase line's sign-in
		}
		if err != nil {
			return c.signInError(err, "admin")
		}
		if answer.Token == "" {
			return &ProtocolError{Op: "authenticate", Message: "answer has no `token`"}
		}
		c.mu.Lock()
		c.token, c.authPath = answer.Token, path
		c.mu.Unlock()
		return nil
	}
	return fmt.Errorf("pbfleet authenticate: %s answers 404 at both PocketBase sign-ins (is it a PocketBase?): %w", c.base, err)
}

func (c *Client) signInError(err error, who string) error {
	var h *HTTPError
	if errors.As(err, &h) && (h.Status == 400 || h.Status == 401 || h.Status == 403) {
		return &HTTPError{Op: "authenticate", Status: h.Status, Body: h.Body, auth: true,
			Message: fmt.Sprintf("%s (the %s sign-in was refused)", h.Message, who)}
	}
	return err
}

// call sends an authenticated request: signs in first when there is no
// token, and again once after a 401.
func (c *Client) call(ctx context.Context, op, method, path string, body, out any) error {
	token := c.currentToken()
	if token == "" {
		if err := c.signIn(ctx, ""); err != nil {
			return err
		}
		token = c.currentToken()
	}
	err := c.send(ctx, op, method, path, body, out, token)
	var h *HTTPError
	if errors.As(err, &h) && h.Status == 401 && c.canSignIn() {
		if err := c.signIn(ctx, token); err != nil {
			return err
		}
		err = c.send(ctx, op, method, path, body, out, c.currentToken())
	}
	return err
}

// send is one HTTP exchange: JSON in, JSON out, typed errors.
func (c *Client) send(ctx context.Context, op, method, path string, body, out any, token string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pbfleet %s: %w", op, context.Cause(ctx))
	}
	var reader io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return argErr(op, "the body is not JSON: %v", err)
		}
		reader = bytes.NewReader(raw)
	}
	reqCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, method, c.base+path, reader)
	if err != nil {
		return argErr(op, "%v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", token) // raw, as PocketBase takes it on both lines
	}
	resp, err := c.http.Do(req)
	if err == nil {
		defer resp.Body.Close()
		var raw []byte
		raw, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
		if err == nil {
			return c.answer(op, resp.StatusCode, raw, out)
		}
	}
	return c.transportError(ctx, reqCtx, op, err)
}

func (c *Client) transportError(ctx, reqCtx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		// The caller's deadline is a timeout too; its cancel is its own error.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && context.Cause(ctx) == context.DeadlineExceeded {
			return &TimeoutError{Op: op, Timeout: c.timeout}
		}
		return fmt.Errorf("pbfleet %s: %w", op, context.Cause(ctx))
	}
	if reqCtx.Err() != nil {
		return &TimeoutError{Op: op, Timeout: c.timeout}
	}
	return &NetworkError{Op: op, Err: err}
}

func (c *Client) answer(op string, status int, raw []byte, out any) error {
	if len(raw) > maxAnswerBytes {
		return &ProtocolError{Op: op, Message: fmt.Sprintf("answer larger than %d bytes", maxAnswerBytes)}
	}
	if status < 200 || status > 299 {
		return &HTTPError{Op: op, Status: status, Message: serverMessage(raw, status), Body: json.RawMessage(validJSONOrNil(raw))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &ProtocolError{Op: op, Message: fmt.Sprintf("answer is not the expected JSON: %v", err), Body: clip(raw)}
	}
	return nil
}

// serverMessage is the server's own text: fleet routes answer {error},
// PocketBase itself {message}.
func serverMessage(raw []byte, status int) string {
	var body struct {
		Error   *string `json:"error"`
		Message *string `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil {
		if body.Error != nil && *body.Error != "" {
			return *body.Error
		}
		if body.Message != nil && *body.Message != "" {
			return *body.Message
		}
	}
	if text := strings.TrimSpace(string(clip(raw))); text != "" {
		return text
	}
	return http.StatusText(status)
}

func validJSONOrNil(raw []byte) []byte {
	if json.Valid(raw) {
		return raw
	}
	return nil
}

func clip(raw []byte) []byte {
	if len(raw) > 512 {
		return raw[:512]
	}
	return raw
}
