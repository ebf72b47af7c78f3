package testutil

import (
	"time"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Poll bounds: the first re-check comes soon, so a condition that holds
// almost at once costs little; later ones back off so a slow condition
// does not spin.
const (
	firstPoll = 5 * time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// Eventually checks cond until it holds and fails the test if it still
// does not after limit. what names the condition in the failure.
func Eventually(t TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Within(limit, cond) {
		t.Fatalf("%s: not true within %s", what, limit)
	}
}

// Within checks cond until it holds or limit passes, and reports whether
// it held. cond is always checked at least once, and once more at the end.
func Within(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	wait := firstPoll
	for !cond() {
		left := time.Until(deadline)
		if left <= 0 {
			return cond()
		}
		time.Sleep(min(wait, left))
		wait = min(2*wait, maxPoll)
	}
	return true
}

// EventuallyNoError calls f until it returns nil and fails the test with
// f's last error if it still has not after limit: the shape of "retry
// this call until it succeeds", where the last error says why it did not.
func EventuallyNoError(t TB, limit time.Duration, what string, f func() error) {
	t.Helper()
	var last error
	if !Within(limit, func() bool { last = f(); return last == nil }) {
		t.Fatalf("%s: not done within %s: %v", what, limit, last)
	}
}
