package failover

import (
	"errors"
	"testing"
	"time"
)

const msec = time.Millisecond

// series builds closed-loop writes: each (sent, done, ok) in order.
func series(ws ...writeRec) []writeRec { return ws }

func wOK(sent, done time.Duration) writeRec {
	return writeRec{sent: sent * msec, done: done * msec, ok: true}
}
func wFail(sent, done time.Duration) writeRec { return writeRec{sent: sent * msec, done: done * msec} }

func TestGapAcrossAKill(t *testing.T) {
	recs := series(
		wOK(0, 2), wOK(2, 4), wOK(4, 6),
		// in flight at the kill (7ms), lost with the connection
		wFail(6, 20),
		wFail(20, 300), // refused during the election
		wOK(300, 305),  // first write after the kill
		wOK(305, 307),
	)
	recs[5].server = 2
	g, err := computeGap(recs, 7*msec)
	if err != nil {
		t.Fatal(err)
	}
	if g.lastBefore != 6*msec || g.firstAfter != 305*msec || g.gap != 299*msec || g.fromKill != 298*msec {
		t.Errorf("gap %+v", g)
	}
	if g.okBefore != 3 || g.failed != 2 || g.server != 2 {
		t.Errorf("counts %+v", g)
	}
}

func TestGapIsNotEndedByAWriteInFlightAtTheKill(t *testing.T) {
	// The write sent at 9ms was committed before the kill at 10ms; its
	// reply arrives after it. The outage shows in the next write.
	recs := series(wOK(0, 9), wOK(9, 11), wFail(11, 500), wOK(500, 520))
	g, err := computeGap(recs, 10*msec)
	if err != nil {
		t.Fatal(err)
	}
	if g.lastBefore != 9*msec || g.firstAfter != 520*msec || g.gap != 511*msec {
		t.Errorf("gap %+v", g)
	}
	// The successful in-flight write lies inside the gap but did not fail.
	if g.failed != 1 {
		t.Errorf("failed = %d, want 1", g.failed)
	}
}

func TestGapOrderDoesNotMatter(t *testing.T) {
	recs := series(wOK(400, 410), wOK(0, 5), wFail(5, 100), wOK(410, 420), wOK(100, 400))
	g, err := computeGap(recs, 50*msec)
	if err != nil {
		t.Fatal(err)
	}
	if g.lastBefore != 5*msec || g.firstAfter != 400*msec {
		t.Errorf("gap %+v", g)
	}
}

func TestGapNeedsWritesOnBothSides(t *testing.T) {
	if _, err := computeGap(series(wFail(0, 5), wOK(20, 25)), 10*msec); !errors.Is(err, errNoWriteBefore) {
		t.Errorf("err = %v, want errNoWriteBefore", err)
	}
	if _, err := computeGap(series(wOK(0, 5), wFail(5, 30), wOK(8, 12)), 10*msec); !errors.Is(err, errNoWriteAfter) {
		t.Errorf("err = %v, want errNoWriteAfter", err) // 8→12 was sent before the kill
	}
	if _, err := computeGap(nil, 0); err == nil {
		t.Error("empty series gave a gap")
	}
}

func TestSummarizeGapsNearestRank(t *testing.T) {
	s := summarizeGaps([]time.Duration{900 * msec, 100 * msec, 500 * msec, 300 * msec, 700 * msec})
	want := GapSummary{Trials: 5, P50Ms: 500, P90Ms: 900, MaxMs: 900, MinMs: 100}
	if s != want {
		t.Errorf("summary %+v, want %+v", s, want)
	}
	var ten []time.Duration
	for i := 1; i <= 10; i++ {
		ten = append(ten, time.Duration(i)*msec)
	}
	if s := summarizeGaps(ten); s.P50Ms != 5 || s.P90Ms != 9 || s.MaxMs != 10 {
		t.Errorf("summary of 1..10: %+v", s)
	}
	if s := summarizeGaps(nil); s.Trials != 0 {
		t.Errorf("summary of nothing: %+v", s)
	}
}
