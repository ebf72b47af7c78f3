package kvoutage

import (
	"strings"
	"testing"
	"time"
)

const msec = time.Millisecond

// every returns completions every step in [from, to).
func every(from, to, step time.Duration) []time.Duration {
	var out []time.Duration
	for t := from; t < to; t += step {
		out = append(out, t)
	}
	return out
}

func TestLongestGap(t *testing.T) {
	// Steady completions every 10 msec, none in (500, 830), then steady
	// again with a shorter hole at (1200, 1300).
	done := append(every(0, 501*msec, 10*msec), every(830*msec, 1201*msec, 10*msec)...)
	done = append(done, every(1300*msec, 2000*msec, 10*msec)...)
	g, ok := LongestGap(done, 505*msec)
	if !ok || g.From != 500*msec || g.To != 830*msec || g.Len() != 330*msec {
		t.Errorf("gap %+v %v, want 500ms..830ms", g, ok)
	}
	// A kill after the long hole sees only the shorter one.
	if g, ok := LongestGap(done, 900*msec); !ok || g.From != 1200*msec || g.To != 1300*msec {
		t.Errorf("gap after 900ms: %+v %v, want 1200ms..1300ms", g, ok)
	}
	// Nothing completed before the kill: the window starts at the kill.
	if g, ok := LongestGap([]time.Duration{400 * msec, 410 * msec}, 100*msec); !ok || g.From != 100*msec || g.To != 400*msec {
		t.Errorf("gap with none before: %+v %v", g, ok)
	}
	// Nothing completed after the kill: no gap ended.
	if _, ok := LongestGap(every(0, 500*msec, 10*msec), 600*msec); ok {
		t.Error("a gap that never ended was reported")
	}
	// A completion exactly at the kill belongs before it.
	if g, ok := LongestGap([]time.Duration{100 * msec, 200 * msec, 250 * msec}, 100*msec); !ok || g.From != 100*msec || g.To != 200*msec {
		t.Errorf("gap from a completion at the kill: %+v %v", g, ok)
	}
}

func TestFirstAfter(t *testing.T) {
	done := []time.Duration{100 * msec, 200 * msec, 900 * msec}
	// The kill's outage ends at the first success after the election,
	// though a later gap (200..900) is longer.
	if d, ok := FirstAfter(done, 150*msec); !ok || d != 200*msec {
		t.Errorf("first after 150ms: %v %v, want 200ms", d, ok)
	}
	if d, ok := FirstAfter(done, 200*msec); !ok || d != 900*msec {
		t.Errorf("first after 200ms: %v %v, want 900ms (strictly later)", d, ok)
	}
	if _, ok := FirstAfter(done, 900*msec); ok {
		t.Error("a completion after the last one was reported")
	}
}

func TestSeriesAndLowWindow(t *testing.T) {
	// 10 per 100 msec bucket, nothing from 1000 to 1400 msec, 1 per bucket
	// then 10 again: the 1-per-bucket stretch is not below 10% of 10.
	done := append(every(0, 1000*msec, 10*msec), every(1400*msec, 1600*msec, 100*msec)...)
	done = append(done, every(1600*msec, 2000*msec, 10*msec)...)
	s := Series(done, 100*msec, 2000*msec)
	if len(s) != 20 || s[0] != 10 || s[9] != 10 || s[10] != 0 || s[14] != 1 || s[19] != 10 {
		t.Fatalf("series %v", s)
	}
	first, n, mean := LowWindow(s, 100*msec, 200*msec, 1000*msec, 0.1)
	if mean != 10 || first != 10 || n != 4 {
		t.Errorf("low window: first %d n %d mean %v, want 10 4 10", first, n, mean)
	}
	// At 20% the single-op buckets count as low too.
	if first, n, _ := LowWindow(s, 100*msec, 200*msec, 1000*msec, 0.2); first != 10 || n != 6 {
		t.Errorf("low window at 20%%: first %d n %d, want 10 6", first, n)
	}
	// No bucket before the kill measured: mean 0, nothing is below it.
	if _, n, mean := LowWindow(s, 100*msec, 1000*msec, 1000*msec, 0.1); n != 0 || mean != 0 {
		t.Errorf("without a baseline: n %d mean %v", n, mean)
	}
	// Out-of-range completions are not counted.
	if s := Series([]time.Duration{-msec, 0, 250 * msec, 300 * msec}, 100*msec, 300*msec); len(s) != 3 || s[0] != 1 || s[2] != 1 {
		t.Errorf("series with out-of-range points: %v", s)
	}
}

func TestSplitAndSpread(t *testing.T) {
	sp := SplitOutage(120*msec, 150*msec, 180*msec)
	if sp.Election != 120*msec || sp.CM != 30*msec || sp.Reconnect != 30*msec {
		t.Errorf("split %+v", sp)
	}
	// The client found the leader before the CM recorded it.
	if sp := SplitOutage(120*msec, 150*msec, 140*msec); sp.Reconnect != -10*msec {
		t.Errorf("early reconnect: %+v", sp)
	}
	// Unknown moments give unknown parts.
	if sp := SplitOutage(0, 150*msec, 180*msec); sp.Election != -1 || sp.CM != -1 || sp.Reconnect != 30*msec {
		t.Errorf("split without election: %+v", sp)
	}
	s := SpreadOf([]time.Duration{300 * msec, -1, 100 * msec, 200 * msec, 400 * msec})
	if s.N != 4 || s.Min != 100*msec || s.Max != 400*msec || s.Median != 200*msec {
		t.Errorf("spread %+v", s)
	}
	if s := SpreadOf(nil); s.N != 0 {
		t.Errorf("spread of nothing %+v", s)
	}
}

func TestScanElected(t *testing.T) {
	log := `time=2026-11-28T10:01:18.061Z level=INFO msg="kv member role" rg=1 state=leading leader=3 epoch=1
time=2026-11-28T10:01:25.540Z level=INFO msg="kv member role" rg=1 state=looking leader=0 epoch=0
time=2026-11-28T10:01:25.549Z level=INFO msg="kv member role" rg=2 state=leading leader=2 epoch=4
time=2026-11-28T10:01:25.551Z level=INFO msg="kv member role" rg=1 state=following leader=3 epoch=0
time=2026-11-28T10:01:25.552Z level=INFO msg="kv member role" rg=1 state=leading leader=3 epoch=3
`
	since, _ := time.Parse(time.RFC3339Nano, "2026-11-28T10:01:25Z")
	at, epoch, ok := scanElected(strings.NewReader(log), 1, since)
	if !ok || epoch != 3 || at.Format("15:04:05.000") != "10:01:25.552" {
		t.Errorf("elected %v epoch %d %v, want 10:01:25.552 epoch 3", at, epoch, ok)
	}
	if _, _, ok := scanElected(strings.NewReader(log), 3, since); ok {
		t.Error("an RG that logged nothing was found elected")
	}
}
