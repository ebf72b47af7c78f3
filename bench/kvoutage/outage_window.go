package kvoutage

import (
	"slices"
	"time"
)

// The outage arithmetic of `corral bench kv-outage` (outage.go): pure
// functions of completion times and a throughput series, so they can be
// checked on synthetic data.

// Gap is a window with no successful operation: From is the last
// completion before it (the kill, if nothing completed before the kill),
// To the first completion that ends it.
type Gap struct {
	From, To time.Duration // offsets from the series' origin
}

// Len is the gap's length.
func (g Gap) Len() time.Duration { return g.To - g.From }

// LongestGap finds, in the sorted completion offsets done, the longest
// window without a completion that ends after kill. The window the kill
// falls in starts at the last completion at or before the kill. ok is
// false when nothing completed after kill (the outage did not end
// within the run).
func LongestGap(done []time.Duration, kill time.Duration) (g Gap, ok bool) {
	i, _ := slices.BinarySearch(done, kill+1) // first completion after kill
	prev := kill
	if i > 0 {
		prev = done[i-1]
	}
	for ; i < len(done); i++ {
		if !ok || done[i]-prev > g.Len() {
			g, ok = Gap{From: prev, To: done[i]}, true
		}
		prev = done[i]
	}
	return g, ok
}

// FirstAfter is the first of the sorted completion offsets done later
// than at; ok is false if none is.
func FirstAfter(done []time.Duration, at time.Duration) (d time.Duration, ok bool) {
	i, _ := slices.BinarySearch(done, at+1)
	if i == len(done) {
		return 0, false
	}
	return done[i], true
}

// Series counts the completion offsets done per bucket from 0 to end.
func Series(done []time.Duration, bucket, end time.Duration) []int64 {
	n := int((end + bucket - 1) / bucket)
	out := make([]int64, max(n, 0))
	for _, d := range done {
		if b := int(d / bucket); d >= 0 && b < n {
			out[b]++
		}
	}
	return out
}

// LowWindow is the longest run of consecutive buckets at or after the
// kill's bucket whose count is below frac of the mean of the buckets
// wholly before the kill (from warm, the first bucket measured, on).
// It returns the run's first bucket and its length in buckets (0 if no
// bucket fell below), and the pre-kill mean.
func LowWindow(series []int64, bucket, warm, kill time.Duration, frac float64) (first, n int, mean float64) {
	w, k := int(warm/bucket), int(kill/bucket)
	if k > len(series) {
		k = len(series)
	}
	if w < k {
		var sum int64
		for _, v := range series[w:k] {
			sum += v
		}
		mean = float64(sum) / float64(k-w)
	}
	limit := frac * mean
	run, start := 0, 0
	for i := k; i < len(series); i++ {
		if float64(series[i]) < limit {
			if run == 0 {
				start = i
			}
			run++
			if run > n {
				first, n = start, run
			}
			continue
		}
		run = 0
	}
	return first, n, mean
}

// Split divides an outage that began at kill and ended at firstOK into
// kill → elected, elected → recorded (the CM has the new leader) and
// recorded → firstOK (the client's first success on the killed RG).
// A moment not known is zero; a part whose ends are not both known is
// -1. Parts may be negative when the client found the new leader (by a
// NotLeader answer) before the CM recorded it.
type Split struct {
	Election, CM, Reconnect time.Duration
}

// SplitOutage computes the Split of offsets from the kill.
func SplitOutage(elected, recorded, firstOK time.Duration) Split {
	part := func(a, b time.Duration, aKnown, bKnown bool) time.Duration {
		if !aKnown || !bKnown {
			return -1
		}
		return b - a
	}
	return Split{
		Election:  part(0, elected, true, elected > 0),
		CM:        part(elected, recorded, elected > 0, recorded > 0),
		Reconnect: part(recorded, firstOK, recorded > 0, firstOK > 0),
	}
}

// Spread is the median, minimum and maximum of xs (zero for none); the
// median of an even count is the lower middle.
type Spread struct {
	Median, Min, Max time.Duration
	N                int
}

// SpreadOf summarizes xs, skipping negative values (unknown).
func SpreadOf(xs []time.Duration) Spread {
	var ok []time.Duration
	for _, x := range xs {
		if x >= 0 {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return Spread{}
	}
	slices.Sort(ok)
	return Spread{Median: ok[(len(ok)-1)/2], Min: ok[0], Max: ok[len(ok)-1], N: len(ok)}
}
