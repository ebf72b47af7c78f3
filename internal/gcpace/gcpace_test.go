package gcpace

import (
	"context"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
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
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, 1<<40, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	testutil.Eventually(t, 10*time.Second, "GOGC above 100 with a 1 TiB headroom", func() bool {
		runtime.GC()
		// Reading the setting changes it; put back what was read.
		p := debug.SetGCPercent(100)
		if p > 100 {
			debug.SetGCPercent(p)
		}
		return p > 100
	})
	cancel()
	<-done
	if p := debug.SetGCPercent(100); p != 100 {
		t.Fatalf("GOGC after Run returned = %d, want the 100 it found", p)
	}
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
