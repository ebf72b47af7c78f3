package stats

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Hist is a latency histogram in microseconds with three significant
// digits: any reported value is within 0.1% of a recorded one. Each
// connection's reader owns one, so recording takes no lock; a phase merges
// them at the end.
type Hist struct {
	h *hdrhistogram.Histogram
}

// histMaxMicros is the largest latency tracked (one minute); larger values
// are recorded as this value and still count toward the total.
const histMaxMicros = int64(time.Minute / time.Microsecond)

// NewHist returns an empty histogram.
func NewHist() *Hist {
	return &Hist{h: hdrhistogram.New(1, histMaxMicros, 3)}
}

// Record adds one latency.
func (h *Hist) Record(d time.Duration) {
	h.RecordMicros(d.Microseconds())
}

// RecordMicros adds one latency given in microseconds, clamped to the
// tracked range.
func (h *Hist) RecordMicros(us int64) {
	if us < 0 {
		us = 0
	}
	if us > histMaxMicros {
		us = histMaxMicros
	}
	// In range by construction, so RecordValue cannot fail.
	_ = h.h.RecordValue(us)
}

// Merge adds every value of o to h.
func (h *Hist) Merge(o *Hist) {
	h.h.Merge(o.h)
}

// Count is the number of recorded values.
func (h *Hist) Count() int64 { return h.h.TotalCount() }

// PercentileMicros returns the nearest-rank percentile p (0 < p <= 100): the
// Value at rank round(p/100 * count), clamped to [1, count], of the sorted
// recorded values, to three significant digits (reported as the highest
// Value equivalent to it). 0 when empty.
func (h *Hist) PercentileMicros(p float64) int64 {
	return h.h.ValueAtPercentile(p)
}

// MaxMicros is the largest recorded value, to three significant digits.
func (h *Hist) MaxMicros() int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.Max()
}

// Latency summarises a histogram, all values in microseconds.
type Latency struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean_us"`
	P50   int64   `json:"p50_us"`
	P99   int64   `json:"p99_us"`
	P999  int64   `json:"p999_us"`
	Max   int64   `json:"max_us"`
}

// Summary returns the percentiles the reports show.
func (h *Hist) Summary() Latency {
	if h.Count() == 0 {
		return Latency{}
	}
	return Latency{
		Count: h.Count(),
		Mean:  h.h.Mean(),
		P50:   h.PercentileMicros(50),
		P99:   h.PercentileMicros(99),
		P999:  h.PercentileMicros(99.9),
		Max:   h.MaxMicros(),
	}
}
