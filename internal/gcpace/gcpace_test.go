package gcpace

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, headroom uint64
		want           int
	}{
		{live: 1024 * mib, headroom: 512 * mib, want: 100},
		{live: 512 * mib, headroom: 512 * mib, want: 100},
		{live: 256 * mib, headroom: 512 * mib, want: 200},
		{live: 64 * mib, headroom: 512 * mib, want: 800},
		{live: 0, headroom: 512 * mib, want: 12800},    // counted as 4 MiB: a 512 MiB first goal
		{live: 1, headroom: 1 << 62, want: maxPercent}, // bounded
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(2 * pollEvery)
		// Reading the setting changes it; put back what was read.
		if p := debug.SetGCPercent(100); p > 100 {
			debug.SetGCPercent(p)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("GOGC never rose above 100 with a 1 TiB headroom")
		}
	}
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
	if m := physicalMemory(); m > 0 && h > m/16 {
		t.Fatalf("DefaultHeadroom() = %d on a machine of %d bytes: more than a sixteenth", h, m)
	}
}
