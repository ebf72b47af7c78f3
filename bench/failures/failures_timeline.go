package failures

import (
	"sync/atomic"
	"time"
)

// timeline counts what the clients of the failure experiment saw in
// Buckets of fixed width from the start of the measured interval: the
// paper's Fig. 8 samples throughput this way (its clients report every
// 300 ms). Every client adds to it concurrently; an atomic add per reply
// costs nothing next to a network round trip.
type timeline struct {
	start    time.Time
	width    time.Duration
	duration time.Duration
	counts   [numSeries][]atomic.Int64
}

// What a timeline counts.
const (
	// SeriesReads and seriesWrites are successful getData and setData
	// replies.
	SeriesReads = iota
	SeriesWrites
	// seriesErrors are replies with an error code.
	seriesErrors
	// SeriesLost are requests in flight on a connection that broke: they
	// never got a reply.
	SeriesLost
	// SeriesReconnects are sessions opened after a client lost its
	// connection.
	SeriesReconnects
	numSeries
)

// NewTimeline covers [start, start+d) with ceil(d / width) buckets, the
// last one partial when d is not a multiple of width.
func NewTimeline(start time.Time, d, width time.Duration) *timeline {
	t := &timeline{start: start, width: width, duration: d}
	n := 0
	if width > 0 && d > 0 {
		n = int((d + width - 1) / width)
	}
	for i := range t.counts {
		t.counts[i] = make([]atomic.Int64, n)
	}
	return t
}

// index is the bucket of an event at at, or -1 outside the interval.
func (t *timeline) index(at time.Time) int {
	off := at.Sub(t.start)
	if off < 0 || off >= t.duration {
		return -1
	}
	return int(off / t.width)
}

// Add counts n events of series at at; events outside the interval are
// dropped (the warm-up, replies after the end).
func (t *timeline) Add(series int, at time.Time, n int64) {
	if i := t.index(at); i >= 0 {
		t.counts[series][i].Add(n)
	}
}

// TimelineBucket is one bucket of a timeline.
type TimelineBucket struct {
	// T is the bucket's start and Seconds its length, in seconds from the
	// Start of the measured interval.
	T       float64 `json:"t_s"`
	Seconds float64 `json:"seconds"`
	// OpsPerSec is the successful replies per second in the bucket.
	OpsPerSec  float64 `json:"ops_per_sec"`
	Reads      int64   `json:"reads"`
	Writes     int64   `json:"writes"`
	Errors     int64   `json:"errors"`
	Lost       int64   `json:"lost"`
	Reconnects int64   `json:"reconnects"`
}

// Buckets returns the counts so far.
func (t *timeline) Buckets() []TimelineBucket {
	n := len(t.counts[0])
	out := make([]TimelineBucket, n)
	for i := range out {
		b := &out[i]
		from := time.Duration(i) * t.width
		length := min(t.width, t.duration-from)
		b.T, b.Seconds = from.Seconds(), length.Seconds()
		b.Reads = t.counts[SeriesReads][i].Load()
		b.Writes = t.counts[SeriesWrites][i].Load()
		b.Errors = t.counts[seriesErrors][i].Load()
		b.Lost = t.counts[SeriesLost][i].Load()
		b.Reconnects = t.counts[SeriesReconnects][i].Load()
		b.OpsPerSec = float64(b.Reads+b.Writes) / b.Seconds
	}
	return out
}

// coarsen merges buckets into wider ones of width, each going to the one
// its start falls in, for tables a reader can take in: a 100 ms timeline
// of a minute is 600 rows.
func coarsen(in []TimelineBucket, width time.Duration) []TimelineBucket {
	var out []TimelineBucket
	w := width.Seconds()
	for _, b := range in {
		k := int(b.T/w + 1e-9)
		if len(out) == 0 || int(out[len(out)-1].T/w+1e-9) != k {
			out = append(out, TimelineBucket{T: float64(k) * w})
		}
		o := &out[len(out)-1]
		o.Seconds += b.Seconds
		o.Reads += b.Reads
		o.Writes += b.Writes
		o.Errors += b.Errors
		o.Lost += b.Lost
		o.Reconnects += b.Reconnects
	}
	for i := range out {
		if out[i].Seconds > 0 {
			out[i].OpsPerSec = float64(out[i].Reads+out[i].Writes) / out[i].Seconds
		}
	}
	return out
}
