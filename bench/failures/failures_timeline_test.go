package failures

import (
	"math"
	"testing"
	"time"
)

func TestTimelineBuckets(t *testing.T) {
	start := time.Unix(1000, 0)
	ms := time.Millisecond
	tl := NewTimeline(start, 1050*ms, 100*ms)
	if n := len(tl.counts[SeriesReads]); n != 11 {
		t.Fatalf("%d buckets for 1.05 s of 100 ms, want 11", n)
	}
	for _, c := range []struct {
		off  time.Duration
		want int
	}{
		{-time.Nanosecond, -1}, {0, 0}, {99*ms + 999*time.Microsecond, 0}, {100 * ms, 1},
		{1049 * ms, 10}, {1050 * ms, -1}, {time.Hour, -1},
	} {
		if got := tl.index(start.Add(c.off)); got != c.want {
			t.Errorf("offset %v in bucket %d, want %d", c.off, got, c.want)
		}
	}
	tl.Add(SeriesReads, start.Add(-ms), 5) // warm-up: dropped
	tl.Add(SeriesReads, start.Add(10*ms), 3)
	tl.Add(SeriesWrites, start.Add(20*ms), 2)
	tl.Add(seriesErrors, start.Add(150*ms), 4)
	tl.Add(SeriesLost, start.Add(150*ms), 7)
	tl.Add(SeriesReconnects, start.Add(160*ms), 1)
	tl.Add(SeriesWrites, start.Add(1020*ms), 5) // the partial last bucket
	tl.Add(SeriesWrites, start.Add(2*time.Second), 9)
	bs := tl.Buckets()
	if b := bs[0]; b.T != 0 || b.Seconds != 0.1 || b.Reads != 3 || b.Writes != 2 || b.OpsPerSec != 50 {
		t.Errorf("bucket 0 %+v", b)
	}
	if b := bs[1]; b.Errors != 4 || b.Lost != 7 || b.Reconnects != 1 || b.OpsPerSec != 0 {
		t.Errorf("bucket 1 %+v", b)
	}
	last := bs[10]
	if math.Abs(last.T-1.0) > 1e-12 || math.Abs(last.Seconds-0.05) > 1e-12 || last.Writes != 5 || math.Abs(last.OpsPerSec-100) > 1e-9 {
		t.Errorf("last bucket %+v: a partial bucket's rate is over its own length", last)
	}
}

func TestCoarsenSumsIntoSeconds(t *testing.T) {
	start := time.Unix(0, 0)
	tl := NewTimeline(start, 2500*time.Millisecond, 100*time.Millisecond)
	for i := range 25 {
		tl.Add(SeriesReads, start.Add(time.Duration(i)*100*time.Millisecond), int64(i))
		tl.Add(SeriesLost, start.Add(time.Duration(i)*100*time.Millisecond), 1)
	}
	secs := coarsen(tl.Buckets(), time.Second)
	if len(secs) != 3 {
		t.Fatalf("%d rows, want 3", len(secs))
	}
	// 0+...+9 = 45, 10+...+19 = 145, 20+...+24 = 110 over half a second.
	for i, want := range []struct {
		t, secs, ops float64
		reads, lost  int64
	}{{0, 1, 45, 45, 10}, {1, 1, 145, 145, 10}, {2, 0.5, 220, 110, 5}} {
		got := secs[i]
		if math.Abs(got.T-want.t) > 1e-9 || math.Abs(got.Seconds-want.secs) > 1e-9 || math.Abs(got.OpsPerSec-want.ops) > 1e-9 ||
			got.Reads != want.reads || got.Lost != want.lost {
			t.Errorf("row %d = %+v, want %+v", i, got, want)
		}
	}
}

func TestEventImpact(t *testing.T) {
	// 100 ms buckets: 1000 ops/s until 3 s, nothing from 3.0 to 3.3 s,
	// 500 ops/s after.
	var bs []TimelineBucket
	for i := range 60 {
		b := TimelineBucket{T: float64(i) / 10, Seconds: 0.1}
		switch {
		case i < 30:
			b.Reads = 100
		case i < 33:
		default:
			b.Writes = 50
		}
		b.OpsPerSec = float64(b.Reads+b.Writes) / b.Seconds
		bs = append(bs, b)
	}
	im := eventImpact(bs, 3.02, 5)
	if math.Abs(im.Before-1000) > 1e-9 || im.Lowest != 0 || math.Abs(im.NoReplySeconds-0.3) > 1e-9 {
		t.Errorf("impact %+v", im)
	}
	// An event at the start has no baseline; the next event bounds the
	// interval examined.
	im = eventImpact(bs, 0, 1)
	if !math.IsNaN(im.Before) || im.Lowest != 1000 || im.NoReplySeconds != 0 {
		t.Errorf("impact at 0: %+v", im)
	}
	// The second event's baseline, 2.5 to 4.5 s, spans the gap:
	// (0.5 s × 1000 + 1.2 s × 500) / 2 s = 550.
	run := FailuresRun{Buckets: bs, Events: []FailureEvent{{At: 3.02}, {At: 4.5}}}
	ims := run.impacts()
	if ims[0].Lowest != 0 || ims[1].Lowest != 500 || math.Abs(ims[1].Before-550) > 1e-9 {
		t.Errorf("impacts %+v", ims)
	}
}
