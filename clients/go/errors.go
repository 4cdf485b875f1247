package pbfleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Error kinds, for errors.Is. Protocol refusals (claimed:false,
// renewed:false, released:false with a reason) are answers, not errors;
// everything else that goes wrong on the way is one of these.
var (
	// ErrAuth: the server did not take the credentials or the token (401, a
	// refused sign-in), and signing in again did not cure it.
	ErrAuth = errors.New("pbfleet: not authenticated")
	// ErrForbidden: the token was taken but may not do this (HTTP 403), for
	// instance a worker identity calling an admin route. Never retried.
	ErrForbidden = errors.New("pbfleet: forbidden")
	// ErrTimeout: no answer in time; the request may or may not have taken effect.
	ErrTimeout = errors.New("pbfleet: timeout")
	// ErrNetwork: no HTTP answer at all (refused, reset, DNS, ...).
	ErrNetwork = errors.New("pbfleet: network error")
	// ErrProtocol: a 2xx answer that is not JSON or not of the protocol's shape.
	ErrProtocol = errors.New("pbfleet: protocol error")
	// ErrInvalidArgument: a call's argument was refused before any request.
	ErrInvalidArgument = errors.New("pbfleet: invalid argument")
	// ErrWorkerStopping is the cause of a handler's context when the Worker
	// stops in release mode (or Run's context ends).
	ErrWorkerStopping = errors.New("pbfleet: worker stopping")
)

// HTTPError is an HTTP error status from the server. Message is the server's
// own text ({"error": ...} of the fleet routes, or PocketBase's {"message": ...}).
// errors.Is(err, ErrForbidden) holds for a 403, errors.Is(err, ErrAuth) for a
// 401 and for a refused sign-in.
type HTTPError struct {
	Op      string
	Status  int
	Message string
	Body    json.RawMessage
	// auth marks a refused sign-in (status 400, 401 or 403 of auth-with-password).
	auth bool
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("pbfleet %s: HTTP %d: %s", e.Op, e.Status, e.Message)
}

// Is makes errors.Is(err, ErrForbidden) and errors.Is(err, ErrAuth) work.
func (e *HTTPError) Is(target error) bool {
	switch target {
	case ErrForbidden:
		return e.Status == 403 && !e.auth
	case ErrAuth:
		return e.Status == 401 || e.auth
	}
	return false
}

// TimeoutError: no answer within Timeout (the client's per-request timeout,
// or the caller's context deadline).
type TimeoutError struct {
	Op      string
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("pbfleet %s: no answer within %s", e.Op, e.Timeout)
}
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// Unwrap lets errors.Is(err, context.DeadlineExceeded) hold too.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// NetworkError: the request got no HTTP answer.
type NetworkError struct {
	Op  string
	Err error
}

func (e *NetworkError) Error() string         { return fmt.Sprintf("pbfleet %s: %v", e.Op, e.Err) }
func (e *NetworkError) Unwrap() error         { return e.Err }
func (e *NetworkError) Is(target error) bool  { return target == ErrNetwork }
func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }

// ProtocolError: the answer is not what the protocol says it is.
type ProtocolError struct {
	Op      string
	Message string
	Body    []byte
}

func (e *ProtocolError) Error() string { return fmt.Sprintf("pbfleet %s: %s", e.Op, e.Message) }

// ArgumentError: a bad argument, refused before any request.
type ArgumentError struct {
	Op      string
	Message string
}

func (e *ArgumentError) Error() string        { return fmt.Sprintf("pbfleet %s: %s", e.Op, e.Message) }
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArgument }

func argErr(op, format string, args ...any) error {
	return &ArgumentError{Op: op, Message: fmt.Sprintf(format, args...)}
}

// IsTransient says whether an error is worth retrying after a pause: no
// answer (timeout, network) or a server-side failure (5xx, 429). A 4xx is the
// caller's and fails the same way again.
func IsTransient(err error) bool {
	if errors.Is(err, ErrTimeout) || errors.Is(err, ErrNetwork) {
		return true
	}
	var h *HTTPError
	if errors.As(err, &h) {
		return h.Status >= 500 || h.Status == 429
	}
	return false
}

// PermanentError, returned by a handler, fails the job now (no retry).
type PermanentError struct {
	Message string
	Err     error
}

func (e *PermanentError) Error() string {
	if e.Message == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err so that the Worker fails the job instead of retrying it.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// RateLimitedError, returned by a handler, releases the job `retry` with
// `rateLimitedFor`: due again after RetryAfter (rounded up to whole seconds,
// 1 s to 24 h), its attempt given back, its group (or queue) parked as long.
type RateLimitedError struct {
	RetryAfter time.Duration
	Message    string
}

func (e *RateLimitedError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("rate limited: retry after %s", e.RetryAfter)
}

// LeaseLostError is the cause of a handler's context when its lease is gone:
// Reason "renew_refused" (the lease lapsed, another worker took the job, or
// the job was cancelled: the protocol's answer does not tell these apart),
// "timed_out" (the server says the attempt passed its deadline) or
// "lease_expired" (no renew got through before the lease's local end).
type LeaseLostError struct {
	JobID  string
	Reason string
}

func (e *LeaseLostError) Error() string {
	return fmt.Sprintf("lease on job %s lost (%s)", e.JobID, e.Reason)
}

// JobTimeoutError is the cause of a handler's context when its attempt is
// about to pass its deadline; its text, the server's own wording, is the
// error the job is released with.
type JobTimeoutError struct {
	JobID          string
	TimeoutSeconds int
}

func (e *JobTimeoutError) Error() string { return timedOutMessage(e.TimeoutSeconds) }

func timedOutMessage(seconds int) string { return fmt.Sprintf("timed out after %d s", seconds) }
