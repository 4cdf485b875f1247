package pbfleet

import (
	"math"
	"math/rand"
	"time"
)

// backoffDelay is the wait before retry number attempt (0-based):
// initial * 2^attempt, capped at max, then "equal jitter" (between half and
// all of it) so that a fleet that failed together does not retry in
// lock-step, yet never retries at once. random is in [0, 1).
func backoffDelay(attempt int, initial, max time.Duration, random float64) time.Duration {
	if attempt < 0 {
		attempt = 0
	}
	base := float64(initial) * math.Pow(2, float64(min(attempt, 62)))
	if base > float64(max) || math.IsInf(base, 0) {
		base = float64(max)
	}
	return time.Duration(base/2 + random*base/2)
}

func jitteredBackoff(attempt int, initial, max time.Duration) time.Duration {
	return backoffDelay(attempt, initial, max, rand.Float64())
}

// timeoutMargin is how long before an attempt's deadline the Worker cancels
// its handler: min(2 s, timeout / 10) (docs/flow-control.md "Timeouts").
func timeoutMargin(timeoutSeconds int) time.Duration {
	return min(2*time.Second, time.Duration(timeoutSeconds)*time.Second/10)
}

// leaseEnd is a lease's local end: the server clamps every lease to the
// attempt's deadline (zero: none).
func leaseEnd(renewedEnd, attemptDeadline time.Time) time.Time {
	if !attemptDeadline.IsZero() && attemptDeadline.Before(renewedEnd) {
		return attemptDeadline
	}
	return renewedEnd
}

// rateLimitedFor is a RateLimitedError's wait as a release takes it: whole
// seconds, rounded up, 1 to MaxRateLimitedFor.
func rateLimitedFor(wait time.Duration) int {
	seconds := math.Ceil(wait.Seconds())
	if math.IsNaN(seconds) || seconds < 1 {
		return 1
	}
	if seconds > MaxRateLimitedFor {
		return MaxRateLimitedFor
	}
	return int(seconds)
}

// fitError cuts an error text to the server's MaxErrorBytes, on a rune
// boundary: refused, it would fail the whole complete call.
func fitError(text string) string {
	if len(text) <= MaxErrorBytes {
		return text
	}
	const suffix = "… (cut)"
	cut := MaxErrorBytes - len(suffix)
	for cut > 0 && !utf8RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + suffix
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
