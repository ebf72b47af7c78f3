package server

import (
	"testing"
	"testing/synctest"
	"time"
)

// The session tracker's subject is time: these tests run in a synctest
// bubble, whose clock moves only by the sleeps below, so each check sees
// exactly the elapsed time it names.

// TestSessionExpiresAfterItsTimeout: a session is expired once more than
// its timeout has passed since it was last heard from, not at the
// timeout itself, and only once.
func TestSessionExpiresAfterItsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newSessionTracker(1, time.Now())
		s := tr.add(tr.newID(), 4000)
		time.Sleep(4000 * time.Millisecond)
		if got := tr.expired(nil); len(got) != 0 {
			t.Fatalf("expired at exactly its timeout: %d sessions", len(got))
		}
		time.Sleep(time.Millisecond)
		got := tr.expired(nil)
		if len(got) != 1 || got[0] != s {
			t.Fatalf("1 ms past its timeout: expired %d sessions, want the one", len(got))
		}
		if !s.closing.Load() {
			t.Fatal("an expired session is not marked closing")
		}
		time.Sleep(time.Hour)
		if again := tr.expired(nil); len(again) != 0 {
			t.Fatalf("a closing session expired a second time (%d)", len(again))
		}
	})
}

// TestTouchRestartsTheTimeout: every frame heard gives the session its
// whole timeout again; sessions expire independently of one another.
func TestTouchRestartsTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newSessionTracker(1, time.Now())
		kept := tr.add(tr.newID(), 2000)
		idle := tr.add(tr.newID(), 2000)
		for range 10 {
			time.Sleep(1500 * time.Millisecond)
			tr.touch(kept)
		}
		got := tr.expired(nil)
		if len(got) != 1 || got[0] != idle {
			t.Fatalf("after 15 s: expired %d sessions, want only the idle one", len(got))
		}
		time.Sleep(2001 * time.Millisecond)
		if got := tr.expired(nil); len(got) != 1 || got[0] != kept {
			t.Fatalf("2001 ms after its last touch: expired %d sessions, want the kept one", len(got))
		}
	})
}

// TestAddGivesRestoredSessionAFullTimeout: a session restored at start (or
// applied from the log) counts its timeout from when it was added, not
// from when the tracker started.
func TestAddGivesRestoredSessionAFullTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newSessionTracker(1, time.Now())
		time.Sleep(time.Minute)
		s := tr.add(tr.newID(), 3000)
		time.Sleep(3000 * time.Millisecond)
		if got := tr.expired(nil); len(got) != 0 {
			t.Fatalf("expired %d sessions within the timeout of a late add", len(got))
		}
		time.Sleep(time.Millisecond)
		if got := tr.expired(nil); len(got) != 1 || got[0] != s {
			t.Fatalf("expired %d sessions after it, want the one", len(got))
		}
	})
}
