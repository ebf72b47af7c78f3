package gcpace

import (
	"context"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, headroom uint64
		want           int
	}{
		{live: 1024 * mib, headroom: 64 * mib, want: Proportion}, // proportional above the floor
		{live: 128 * mib, headroom: 64 * mib, want: Proportion},
		{live: 64 * mib, headroom: 64 * mib, want: 100},
		{live: 16 * mib, headroom: 64 * mib, want: 400},
		{live: 0, headroom: 64 * mib, want: 1600},      // counted as 4 MiB: a 64 MiB first goal
		{live: 1, headroom: 1 << 62, want: maxPercent}, // bounded
		{live: 1024 * mib, headroom: 0, want: Proportion},
	} {
		if got := Percent(c.live, c.headroom); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.live, c.headroom, got, c.want)
		}
	}
}

// TestRunSetsAndRestores: while Run runs, GOGC is above 100 when the
// headroom is larger than the live heap; when its context ends the
// setting it found is back.
func TestRunSetsAndRestores(t *testing.T) {
	if !Enabled() {
		t.Skip("GOGC is set in the environment")
	}
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	stop := startRun(1 << 40)
	testutil.Eventually(t, 10*time.Second, "GOGC above 100 with a 1 TiB headroom", func() bool {
		runtime.GC()
		// Reading the setting changes it; put back what was read.
		p := debug.SetGCPercent(100)
		if p > 100 {
			debug.SetGCPercent(p)
		}
		return p > 100
	})
	stop()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Fatalf("GOGC after Run returned = %d, want the 100 it found", p)
	}
}

// startRun runs Run with headroom in the background; the function it
// returns stops it and waits for it to return.
func startRun(headroom uint64) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, headroom, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	return func() { cancel(); <-done }
}

func TestDefaultHeadroom(t *testing.T) {
	h := DefaultHeadroom()
	if h == 0 || h > maxHeadroom {
		t.Fatalf("DefaultHeadroom() = %d, want (0, %d]", h, maxHeadroom)
	}
	if m := physicalMemory(); m > 0 && h > m/64 {
		t.Fatalf("DefaultHeadroom() = %d on a machine of %d bytes: more than a sixty-fourth", h, m)
	}
}

// TestSetMemoryLimit: a positive limit becomes the runtime's unless
// GOMEMLIMIT is set; 0 leaves it alone.
func TestSetMemoryLimit(t *testing.T) {
	orig := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(orig)
	if SetMemoryLimit(0) {
		t.Fatal("SetMemoryLimit(0) set a limit")
	}
	if debug.SetMemoryLimit(-1) != orig {
		t.Fatal("SetMemoryLimit(0) changed the limit")
	}
	const limit = 3 << 30
	set := SetMemoryLimit(limit)
	got := debug.SetMemoryLimit(-1)
	if _, env := os.LookupEnv("GOMEMLIMIT"); env {
		if set || got != orig {
			t.Fatalf("with GOMEMLIMIT set, SetMemoryLimit set %v, limit %d", set, got)
		}
		return
	}
	if !set || got != limit {
		t.Fatalf("SetMemoryLimit(%d): set %v, runtime limit %d", limit, set, got)
	}
}

// TestIdleRelease: a release comes once allocation has been quiet for
// quietFor with much to return beside the live heap, not while
// the process allocates, not for a small excess, and not again within
// releaseCostRatio times what the last one took (nor within quietFor).
func TestIdleRelease(t *testing.T) {
	const mib = 1 << 20
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	var r idleRelease
	allocs := uint64(0)
	// A write load: 50 MiB a second, half the live heap returnable.
	for i := range 50 {
		allocs += 5 * mib
		if r.observe(at(time.Duration(i)*100*time.Millisecond), allocs, 200*mib, 100*mib) {
			t.Fatalf("released at %d while allocating", i)
		}
	}
	// The load stops: nothing until quietFor has passed.
	stop := at(5 * time.Second)
	if r.observe(stop, allocs+mib, 200*mib, 100*mib) {
		t.Fatal("released as soon as the load stopped")
	}
	if r.observe(stop.Add(quietFor/2), allocs+mib, 200*mib, 100*mib) {
		t.Fatal("released before quietFor")
	}
	if !r.observe(stop.Add(quietFor), allocs+2*mib, 200*mib, 100*mib) {
		t.Fatal("no release after quietFor with 100 MiB to return beside a 200 MiB live heap")
	}
	// The release took 300 ms: none again for 30 s, whatever there is
	// to return.
	r.took(300 * time.Millisecond)
	released := stop.Add(quietFor)
	if r.observe(released.Add(29*time.Second), allocs+2*mib, 200*mib, 100*mib) {
		t.Fatal("released again within 100 times what the last release took")
	}
	// Later, quiet still, but the excess is within a thirty-second of
	// live.
	if r.observe(released.Add(31*time.Second), allocs+2*mib, 200*mib, 6*mib) {
		t.Fatal("released for 6 MiB above a 200 MiB live heap")
	}
	if !r.observe(released.Add(32*time.Second), allocs+2*mib, 200*mib, 20*mib) {
		t.Fatal("no second release 32 s after one that took 300 ms")
	}
	// A cheap release (5 ms): the next may come after quietFor, not 0.5 s.
	r.took(5 * time.Millisecond)
	again := released.Add(32 * time.Second)
	if r.observe(again.Add(quietFor/2), allocs+2*mib, 200*mib, 20*mib) {
		t.Fatal("released again within quietFor")
	}
	if !r.observe(again.Add(quietFor), allocs+2*mib, 200*mib, 20*mib) {
		t.Fatal("no release quietFor after a cheap one")
	}
	// A small heap: the excess must be at least releaseSlack.
	var small idleRelease
	small.observe(t0, 0, 8*mib, 3*mib)
	if small.observe(at(quietFor), 0, 8*mib, 3*mib) {
		t.Fatal("released 3 MiB above an 8 MiB live heap (under releaseSlack)")
	}
	if !small.observe(at(quietFor+time.Second), 0, 8*mib, releaseSlack+1) {
		t.Fatal("no release for more than releaseSlack above a small live heap")
	}
}

// TestRunReturnsFreeHeap: with Run running and the process quiet, heap
// freed by a collection goes back to the OS, though it is below the heap
// goal (a 1 GiB headroom), where the runtime's scavenger keeps it.
func TestRunReturnsFreeHeap(t *testing.T) {
	if !Enabled() {
		t.Skip("GOGC is set in the environment")
	}
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	defer startRun(1 << 30)()
	// 64 MiB in 64 KiB blocks (large enough to bypass per-P caches),
	// then dropped and collected: free heap the runtime keeps.
	garbage := make([][]byte, 1024)
	for i := range garbage {
		garbage[i] = make([]byte, 64<<10)
	}
	garbage = nil
	runtime.GC()
	free := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	testutil.Eventually(t, 30*time.Second, "free heap returned to the OS", func() bool {
		metrics.Read(free)
		return free[0].Value.Uint64() < 16<<20
	})
}
