package failover

import (
	"errors"
	"math"
	"slices"
	"time"
)

// writeRec is one write of the failover writer: when it was sent and when
// its outcome was known, as offsets from the start of the trial, whether
// it succeeded, and the index of the server it went to.
type writeRec struct {
	sent, done time.Duration
	ok         bool
	server     int
}

// gapResult is what the writer saw of one leader kill.
type gapResult struct {
	// lastBefore is when the last successful write that completed at or
	// before the kill completed; firstAfter when the first successful write
	// Sent at or after the kill completed (a write in flight at the kill
	// may still succeed, but its reply says nothing about the ensemble
	// after the kill, so it does not end the gap).
	lastBefore, firstAfter time.Duration
	// gap is firstAfter - lastBefore: how long the client saw no progress.
	gap time.Duration
	// fromKill is firstAfter - kill.
	fromKill time.Duration
	// server is the server index of the first write after the kill.
	server int
	// okBefore counts the successful writes completed by the kill; failed
	// the writes that failed between lastBefore and firstAfter.
	okBefore, failed int
}

var (
	errNoWriteBefore = errors.New("bench: no successful write completed before the kill")
	errNoWriteAfter  = errors.New("bench: no successful write issued after the kill")
)

// computeGap finds the client-side gap around a kill at offset kill in a
// series of writes (in any order).
func computeGap(recs []writeRec, kill time.Duration) (gapResult, error) {
	var g gapResult
	haveBefore, haveAfter := false, false
	for _, r := range recs {
		if !r.ok {
			continue
		}
		if r.done <= kill {
			g.okBefore++
			if !haveBefore || r.done > g.lastBefore {
				g.lastBefore, haveBefore = r.done, true
			}
		}
		if r.sent >= kill && (!haveAfter || r.done < g.firstAfter) {
			g.firstAfter, g.server, haveAfter = r.done, r.server, true
		}
	}
	switch {
	case !haveBefore:
		return g, errNoWriteBefore
	case !haveAfter:
		return g, errNoWriteAfter
	}
	for _, r := range recs {
		if !r.ok && r.done > g.lastBefore && r.done <= g.firstAfter {
			g.failed++
		}
	}
	g.gap = g.firstAfter - g.lastBefore
	g.fromKill = g.firstAfter - kill
	return g, nil
}

// GapSummary summarises the gaps of the trials that measured one.
type GapSummary struct {
	Trials int     `json:"trials"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	MaxMs  float64 `json:"max_ms"`
	MinMs  float64 `json:"min_ms"`
}

// summarizeGaps computes nearest-rank percentiles: p50 of 5 gaps is the
// 3rd smallest, p90 the 5th. With few trials p90 is simply a high one.
func summarizeGaps(gaps []time.Duration) GapSummary {
	if len(gaps) == 0 {
		return GapSummary{}
	}
	s := slices.Clone(gaps)
	slices.Sort(s)
	return GapSummary{
		Trials: len(s),
		P50Ms:  MsOf(gapQuantile(s, 0.50)),
		P90Ms:  MsOf(gapQuantile(s, 0.90)),
		MaxMs:  MsOf(s[len(s)-1]),
		MinMs:  MsOf(s[0]),
	}
}

// gapQuantile returns the p-quantile of sorted by the nearest-rank method.
func gapQuantile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func MsOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
