package route

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/corral-db/corral/kv/ring"
)

// The tests in this file are about Do's timers (the wait for a newer
// configuration, the backoff before retrying a lagging server). They run
// in a synctest bubble: its clock moves only when every goroutine in it
// is blocked, so the waits take no real time and the elapsed fake time is
// exactly what Do waited, not a measurement.

// TestDoWaitsConfigWaitPerAttempt: with no leader and nothing new from the
// CM, each attempt waits out ConfigWait in full, and Do gives up after
// MaxAttempts of them without sending anything.
func TestDoWaitsConfigWaitPerAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := buildRing(t, 1)
		rt := New()
		rt.Update(state(t, r, nil))
		start := time.Now()
		_, err := Do(context.Background(), rt, DefaultPolicy, []byte("k"), func(context.Context, Target) (int, error) {
			t.Fatal("sent without a leader")
			return 0, nil
		})
		if !errors.Is(err, ErrGaveUp) || !errors.Is(err, ErrNoLeader) {
			t.Fatalf("Do: %v, want ErrGaveUp wrapping ErrNoLeader", err)
		}
		if got, want := time.Since(start), time.Duration(DefaultPolicy.MaxAttempts)*DefaultPolicy.ConfigWait; got != want {
			t.Fatalf("Do waited %s, want MaxAttempts × ConfigWait = %s", got, want)
		}
	})
}

// TestDoWakesOnUpdate: a configuration that arrives during the wait ends
// it at once; Do does not sleep out the rest of ConfigWait.
func TestDoWakesOnUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := buildRing(t, 1)
		rt := New()
		rt.Update(state(t, r, nil))
		const arrives = 300 * time.Millisecond // inside the first ConfigWait
		go func() {
			time.Sleep(arrives)
			rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {1, 11}}))
		}()
		start := time.Now()
		got, err := Do(context.Background(), rt, DefaultPolicy, []byte("k"), func(_ context.Context, tg Target) (string, error) {
			return tg.Addr, nil
		})
		if err != nil || got != addr(11) {
			t.Fatalf("Do: %q %v, want the new leader %s", got, err, addr(11))
		}
		if d := time.Since(start); d != arrives {
			t.Fatalf("Do returned %s after the start, want when the update came (%s)", d, arrives)
		}
	})
}

// TestDoBacksOffFromLaggingServer: a server whose ring is behind the
// client's is retried after Backoff each time, never sooner.
func TestDoBacksOffFromLaggingServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := buildRing(t, 1)
		rt := New()
		rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {1, 11}}))
		var sends []time.Duration
		start := time.Now()
		_, err := Do(context.Background(), rt, DefaultPolicy, []byte("k"), func(context.Context, Target) (int, error) {
			sends = append(sends, time.Since(start))
			return 0, &WrongRange{Group: 1, RingVersion: 0}
		})
		if !errors.Is(err, ErrGaveUp) || len(sends) != DefaultPolicy.MaxAttempts {
			t.Fatalf("Do: %v after %d sends, want ErrGaveUp after %d", err, len(sends), DefaultPolicy.MaxAttempts)
		}
		for i, at := range sends {
			if want := time.Duration(i) * DefaultPolicy.Backoff; at != want {
				t.Fatalf("send %d at %s, want %s (sends at %v)", i, at, want, sends)
			}
		}
	})
}
