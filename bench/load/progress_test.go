package load

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/stats"
)

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		elapsed time.Duration
		rate    float64
		want    string
	}{
		{0, 0, "corral run 2 create [....................]   0.0s/10.0s warm-up          0 ops/s"},
		{2500 * time.Millisecond, 41230.4, "corral run 2 create [#####...............]   2.5s/10.0s measuring    41230 ops/s"},
		{10 * time.Second, 100, "corral run 2 create [####################]  10.0s/10.0s draining       100 ops/s"},
		// Past the end (replies draining): the bar stays full.
		{12 * time.Second, 0, "corral run 2 create [####################]  10.0s/10.0s draining         0 ops/s"},
		{-time.Second, 0, "corral run 2 create [....................]   0.0s/10.0s warm-up          0 ops/s"},
	} {
		got := progressLine("corral run 2 create", c.elapsed, 2*time.Second, 10*time.Second, c.rate)
		if got != c.want {
			t.Errorf("elapsed %v:\n got %q\nwant %q", c.elapsed, got, c.want)
		}
	}
	done := progressDone("zookeeper set", 10*time.Second, &PhaseResult{OpsPerSec: 1234.4, Latency: stats.Latency{P99: 2500}, Errors: 3,
		OpenLoop: &OpenLoopResult{Unsent: 7, FromIntended: stats.Latency{P99: 4000}}})
	want := "zookeeper set       [####################]  10.0s/10.0s done          1234 ops/s measured, p99 2.500 ms, 3 errors, p99 from intended 4.000 ms, 7 unsent"
	if done != want {
		t.Errorf("done line\n got %q\nwant %q", done, want)
	}
	if l := progressLabel(PhaseConfig{Target: "corral", Phase: "get"}); l != "corral get" {
		t.Errorf("label %q", l)
	}
}

// lockedBuffer is a bytes.Buffer safe for the bar's goroutine and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProgressRedrawsAroundLogLines: a log record clears the bar and the
// bar comes back below it; a finished phase leaves its result line.
func TestProgressRedrawsAroundLogLines(t *testing.T) {
	var out lockedBuffer
	p := NewProgress(&out)
	p.draw("bar 1")
	log := slog.New(slog.NewTextHandler(p, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	log.Info("server started", "pid", 42)
	p.leave("done line")
	log.Info("next")
	want := clearLine + "bar 1" + clearLine + "level=INFO msg=\"server started\" pid=42\n" + "bar 1" +
		clearLine + "done line\n" + "level=INFO msg=next\n"
	if got := out.String(); got != want {
		t.Errorf("terminal got\n%q\nwant\n%q", got, want)
	}
}

// TestPhaseBarRate: the rate is the replies over the last second of
// samples (older ones are dropped).
func TestPhaseBarRate(t *testing.T) {
	b := &phaseBar{replies: new(atomic.Int64)}
	t0 := time.Unix(100, 0)
	if r := b.rate(t0); r != 0 {
		t.Fatalf("first sample: rate %v, want 0", r)
	}
	for i, c := range []struct {
		count int64
		want  float64
	}{
		{1000, 4000},   // +250ms: 1000 in 250ms
		{3000, 6000},   // +500ms: 3000 in 500ms
		{3000, 4000},   // +750ms: 3000 in 750ms
		{7000, 7000},   // +1s: 7000 in 1s
		{7500, 6500},   // +1.25s: from +250ms, 6500 in 1s
		{17500, 14500}, // +1.5s: from +500ms, 14500 in 1s
	} {
		b.replies.Store(c.count)
		at := t0.Add(time.Duration(i+1) * 250 * time.Millisecond)
		if r := b.rate(at); r != c.want {
			t.Errorf("at +%v with %d replies: rate %v, want %v", at.Sub(t0), c.count, r, c.want)
		}
	}
}

// TestPhaseBar: start makes the window count replies and draws the bar;
// Finish leaves the phase's result line; a nil Progress draws nothing and
// leaves the window alone.
func TestPhaseBar(t *testing.T) {
	var nilP *Progress
	w := &Window{}
	if b := nilP.start(context.Background(), PhaseConfig{}, w); b != nil || w.replies != nil {
		t.Fatal("nil Progress started a bar")
	}
	(*phaseBar)(nil).finish(&PhaseResult{}) // no-op

	var out lockedBuffer
	p := NewProgress(&out)
	p.now = func() time.Time { return time.Unix(103, 500_000_000) }
	p.every = time.Hour // one drawing at the start, none after
	w = &Window{Start: time.Unix(101, 0), End: time.Unix(111, 0)}
	b := p.start(context.Background(), PhaseConfig{Target: "corral", Phase: "create", Warmup: time.Second, Duration: 10 * time.Second}, w)
	if w.replies == nil {
		t.Fatal("the window does not count replies")
	}
	b.finish(&PhaseResult{OpsPerSec: 4321, Latency: stats.Latency{P99: 1000}})
	b.finish(&PhaseResult{}) // once only
	want := clearLine + "corral create       [######..............]   3.5s/11.0s measuring        0 ops/s" +
		clearLine + "corral create       [####################]  11.0s/11.0s done          4321 ops/s measured, p99 1.000 ms\n"
	if got := out.String(); got != want {
		t.Errorf("terminal got\n%q\nwant\n%q", got, want)
	}
}
