package kvserver

import (
	"testing"

	"github.com/corral-db/corral/zab"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestAppliedWaitersWakeOnlyReached(t *testing.T) {
	var a appliedWaiters
	w7, w5, w9 := a.wait(7), a.wait(5), a.wait(9)
	a.advance(4)
	if closed(w5) || closed(w7) || closed(w9) {
		t.Fatal("advance(4) woke a waiter above 4")
	}
	a.advance(7)
	if !closed(w5) || !closed(w7) {
		t.Fatal("advance(7) left a waiter at or below 7 asleep")
	}
	if closed(w9) {
		t.Fatal("advance(7) woke the waiter at 9")
	}
	if !closed(a.wait(6)) {
		t.Fatal("a wait below the applied zxid is not woken at once")
	}
	if len(a.q) != 1 {
		t.Fatalf("queue holds %d waiters, want 1 (the one at 9)", len(a.q))
	}
	a.advance(3) // an older zxid wakes nothing and keeps the newest
	if closed(w9) || !closed(a.wait(7)) {
		t.Fatal("advance to an older zxid moved the applied zxid back")
	}
}

func TestAppliedWaitersWakeAll(t *testing.T) {
	var a appliedWaiters
	a.advance(zab.Zxid(10))
	w := []<-chan struct{}{a.wait(11), a.wait(20)}
	a.wakeAll()
	for i, ch := range w {
		if !closed(ch) {
			t.Fatalf("waiter %d not woken by wakeAll", i)
		}
	}
	// After wakeAll the applied zxid is unknown (a snapshot may have
	// moved it): a wait at 10 queues until the next advance.
	ch := a.wait(10)
	if closed(ch) {
		t.Fatal("wait(10) after wakeAll woken without an advance")
	}
	a.advance(12)
	if !closed(ch) || len(a.q) != 0 {
		t.Fatalf("advance(12) left the waiter at 10 asleep or queued (%d)", len(a.q))
	}
}
