package kv

import (
	"strings"
	"testing"
	"time"
)

func TestZeroRuns(t *testing.T) {
	ms := time.Millisecond
	counts := []int64{3, 0, 0, 4, 0, 0, 0, 0, 0, 2, 0}
	if got := LongestZero(counts, ms); got != (ZeroRun{From: 4 * ms, Len: 5 * ms}) {
		t.Errorf("longest %+v", got)
	}
	// Near 2 ms with 1 ms of slack: only the run at 1-3 ms overlaps.
	if got := ZeroNear(counts, ms, 2*ms, ms); got != (ZeroRun{From: ms, Len: 2 * ms}) {
		t.Errorf("near 2ms %+v", got)
	}
	// A trailing run counts; a moment far from every run has none.
	if got := ZeroNear(counts, ms, 11*ms, 0); got.Len != ms {
		t.Errorf("trailing %+v", got)
	}
	if got := ZeroNear([]int64{1, 1, 0, 1}, ms, 40*ms, ms); got.Len != 0 {
		t.Errorf("far %+v", got)
	}
	if got := LongestZero([]int64{1, 2}, ms); got.Len != 0 {
		t.Errorf("no gap %+v", got)
	}
}

func TestCompletions(t *testing.T) {
	c := newCompletions(10 * time.Millisecond)
	if c.width != time.Millisecond || len(c.buckets) != 10 {
		t.Fatalf("width %v, %d buckets", c.width, len(c.buckets))
	}
	for _, at := range []time.Duration{0, 1500 * time.Microsecond, 1900 * time.Microsecond, -time.Millisecond, 10 * time.Millisecond} {
		c.add(at)
	}
	if got := c.counts(); got[0] != 1 || got[1] != 2 || got[9] != 0 {
		t.Errorf("counts %v", got)
	}
	if long := newCompletions(MaxPhase); len(long.buckets) > maxFineBuckets {
		t.Errorf("%d buckets for an hour", len(long.buckets))
	}
}

func TestLeadsIn(t *testing.T) {
	log := `time=2026-11-28T11:18:10.488Z level=INFO msg="kv member role" state=following leader=2 epoch=0
time=2026-11-28T11:18:11.000Z level=INFO msg="kv member role" state=leading leader=1 epoch=1
time=2026-11-28T11:18:12.250Z level=INFO msg="kv: handing leadership over before compacting" to=2 reason=x
time=2026-11-28T11:18:13.125Z level=INFO msg="kv member role" state=leading leader=1 epoch=3
time=2026-11-28T11:18:20.000Z level=INFO msg="kv member role" state=leading leader=1 epoch=5
`
	from := time.Date(2026, 11, 28, 11, 18, 10, 500e6, time.UTC)
	at := leadsIn(strings.NewReader(log), from, from.Add(5*time.Second))
	if len(at) != 2 || at[0].Sub(from) != 500*time.Millisecond || at[1].Sub(from) != 2625*time.Millisecond {
		t.Fatalf("leads %v", at)
	}
}
