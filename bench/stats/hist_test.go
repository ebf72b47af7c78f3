package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// nearestRank is the percentile Hist documents, computed exactly.
func nearestRank(sorted []int64, p float64) int64 {
	n := len(sorted)
	rank := int(p/100*float64(n) + 0.5)
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

func TestMergedPercentilesMatchSortedValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 1000, 100003} {
		parts := []*Hist{NewHist(), NewHist(), NewHist(), NewHist()}
		var all []int64
		for i := range n {
			// Log-normal-ish latencies from 1µs to seconds, with a tail.
			us := int64(math.Exp(rng.NormFloat64()*1.5 + 6))
			if i%997 == 0 {
				us = 2_000_000 + rng.Int64N(1000)
			}
			all = append(all, us)
			parts[rng.IntN(len(parts))].RecordMicros(us)
		}
		slices.Sort(all)
		h := NewHist()
		for _, p := range parts {
			h.Merge(p)
		}
		if h.Count() != int64(n) {
			t.Fatalf("n=%d: merged count %d", n, h.Count())
		}
		for _, p := range []float64{50, 90, 99, 99.9, 100} {
			got, want := h.PercentileMicros(p), nearestRank(all, p)
			if !h.h.ValuesAreEquivalent(got, want) {
				t.Errorf("n=%d p%v = %d, exact %d: not within the histogram's precision", n, p, got, want)
			}
		}
		if got, want := h.MaxMicros(), all[n-1]; !h.h.ValuesAreEquivalent(got, want) {
			t.Errorf("n=%d max = %d, exact %d", n, got, want)
		}
		s := h.Summary()
		if s.Count != int64(n) || s.P50 != h.PercentileMicros(50) || s.P999 != h.PercentileMicros(99.9) || s.Max != h.MaxMicros() {
			t.Errorf("n=%d summary %+v disagrees with the histogram", n, s)
		}
	}
}

// Precision: three significant digits means within 0.1% (and exact below
// 1024µs, where the histogram has a bucket per microsecond).
func TestHistPrecision(t *testing.T) {
	h := NewHist()
	h.RecordMicros(1000)
	if got := h.PercentileMicros(50); got != 1000 {
		t.Errorf("1000µs reads back as %d", got)
	}
	h = NewHist()
	h.RecordMicros(123456)
	if got := h.PercentileMicros(50); got < 123456 || float64(got) > 123456*1.001 {
		t.Errorf("123456µs reads back as %d", got)
	}
}

func TestHistClampsOutOfRange(t *testing.T) {
	h := NewHist()
	h.Record(-time.Second)
	h.Record(time.Hour)
	if h.Count() != 2 {
		t.Fatalf("count %d, want 2", h.Count())
	}
	if got := h.MaxMicros(); !h.h.ValuesAreEquivalent(got, histMaxMicros) {
		t.Errorf("max %d, want the clamp %d", got, histMaxMicros)
	}
	if got := h.PercentileMicros(50); got != 0 {
		t.Errorf("p50 %d, want 0", got)
	}
}

func TestEmptyHist(t *testing.T) {
	if s := NewHist().Summary(); s != (Latency{}) {
		t.Errorf("empty summary %+v", s)
	}
}
