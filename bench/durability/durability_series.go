package durability

import (
	"math"
	"sync/atomic"
	"time"
)

// secondCounter counts events into one-second buckets of a measured
// interval, as the thesis's figures plot throughput against time. Workers
// of a phase share one; an atomic add per event costs nothing next to a
// network round trip.
type secondCounter struct {
	buckets []atomic.Int64
}

// newSecondCounter covers an interval of length d: ceil(d / 1s) buckets,
// the last one partial when d is not a whole number of seconds.
func newSecondCounter(d time.Duration) *secondCounter {
	n := int((d + time.Second - 1) / time.Second)
	return &secondCounter{buckets: make([]atomic.Int64, max(n, 0))}
}

// Add counts one event at offset since the start of the interval; events
// outside it are not counted.
func (s *secondCounter) add(offset time.Duration) {
	if offset < 0 {
		return
	}
	if i := int(offset / time.Second); i < len(s.buckets) {
		s.buckets[i].Add(1)
	}
}

// values returns the counts, one per bucket.
func (s *secondCounter) values() []int64 {
	v := make([]int64, len(s.buckets))
	for i := range s.buckets {
		v[i] = s.buckets[i].Load()
	}
	return v
}

// SeriesStats summarises a per-second series over its whole seconds.
type SeriesStats struct {
	// Seconds is the number of whole seconds summarised.
	Seconds int     `json:"seconds"`
	Mean    float64 `json:"mean"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	// Stddev is the population standard deviation: how steady the
	// throughput was from second to second.
	Stddev float64 `json:"stddev"`
}

// SummarizeSeries summarises the first whole seconds of v: a measured
// interval of d has int(d / 1s) of them (a partial last bucket would read
// as a dip).
func SummarizeSeries(v []int64, d time.Duration) SeriesStats {
	n := min(len(v), int(d/time.Second))
	if n <= 0 {
		return SeriesStats{}
	}
	st := SeriesStats{Seconds: n, Min: math.Inf(1), Max: math.Inf(-1)}
	var sum float64
	for _, x := range v[:n] {
		f := float64(x)
		sum += f
		st.Min = min(st.Min, f)
		st.Max = max(st.Max, f)
	}
	st.Mean = sum / float64(n)
	var sq float64
	for _, x := range v[:n] {
		d := float64(x) - st.Mean
		sq += d * d
	}
	st.Stddev = math.Sqrt(sq / float64(n))
	return st
}

// cpuPercents turns cumulative CPU readings taken every interval (the
// first at the start) into the CPU used in each interval, in percent of
// one core: 100 is one core busy the whole interval. A reading lower than
// the one before it (a process restarted) yields 0 for that interval.
func cpuPercents(readings []time.Duration, interval time.Duration) []float64 {
	if len(readings) < 2 || interval <= 0 {
		return nil
	}
	out := make([]float64, len(readings)-1)
	for i := 1; i < len(readings); i++ {
		if d := readings[i] - readings[i-1]; d > 0 {
			out[i-1] = 100 * d.Seconds() / interval.Seconds()
		}
	}
	return out
}

// ToFloats converts counts for plotting.
func ToFloats(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
