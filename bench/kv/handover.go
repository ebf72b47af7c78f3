package kv

import (
	"bufio"
	"cmp"
	"io"
	"os"
	"regexp"
	"slices"
	"sync/atomic"
	"time"
)

// The zero-throughput window at a handover (issue 23: ≤ 100 ms; the
// paper's ≈ 100 ms): every completed operation of a measured interval is
// counted in fine buckets (1 ms, or more for an interval longer than
// maxFineBuckets ms); a window without a completion is a run of empty
// buckets. The handovers are the moments a member logged that it leads
// (`msg="kv member role" state=leading`, at info, as `corral server`
// logs by default); each is given the longest empty run near it.

// maxFineBuckets bounds the fine series of one measured interval.
const maxFineBuckets = 1 << 20

// HandoverSlack is how far from a handover's logged moment an empty run
// may begin or end to count as its window: the old leader stops
// proposing before the new one logs that it leads, and clients find the
// new leader after.
const HandoverSlack = 250 * time.Millisecond

// completions counts completions per fine bucket; threads add to it
// concurrently.
type completions struct {
	width   time.Duration
	buckets []atomic.Int64
}

func newCompletions(d time.Duration) *completions {
	w := max(time.Millisecond, (d+maxFineBuckets-1)/maxFineBuckets)
	return &completions{width: w, buckets: make([]atomic.Int64, int((d+w-1)/w))}
}

// add counts a completion at offset at from the interval's start.
func (c *completions) add(at time.Duration) {
	if i := int(at / c.width); at >= 0 && i < len(c.buckets) {
		c.buckets[i].Add(1)
	}
}

func (c *completions) counts() []int64 {
	out := make([]int64, len(c.buckets))
	for i := range c.buckets {
		out[i] = c.buckets[i].Load()
	}
	return out
}

// ZeroRun is a run of empty buckets: From and Len as durations from the
// series' start.
type ZeroRun struct {
	From, Len time.Duration
}

// zeroRuns are the runs of empty buckets of counts, in order.
func zeroRuns(counts []int64, width time.Duration) []ZeroRun {
	var out []ZeroRun
	start := -1
	for i := 0; i <= len(counts); i++ {
		if i < len(counts) && counts[i] == 0 {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, ZeroRun{From: time.Duration(start) * width, Len: time.Duration(i-start) * width})
			start = -1
		}
	}
	return out
}

// LongestZero is the longest run of empty buckets (zero if none).
func LongestZero(counts []int64, width time.Duration) ZeroRun {
	var best ZeroRun
	for _, r := range zeroRuns(counts, width) {
		if r.Len > best.Len {
			best = r
		}
	}
	return best
}

// ZeroNear is the longest run of empty buckets that overlaps
// [at-slack, at+slack] (zero if none).
func ZeroNear(counts []int64, width, at, slack time.Duration) ZeroRun {
	var best ZeroRun
	for _, r := range zeroRuns(counts, width) {
		if r.From <= at+slack && r.From+r.Len >= at-slack && r.Len > best.Len {
			best = r
		}
	}
	return best
}

// Handover is a member taking the lead during a measured interval.
type Handover struct {
	// AtMs is the moment the member logged it leads, from the measured
	// interval's start.
	AtMs   float64 `json:"at_ms"`
	Member string  `json:"member"`
	// ZeroMs is the longest window without a completed operation near
	// it (ZeroNear, HandoverSlack).
	ZeroMs float64 `json:"zero_window_ms"`
}

// leadingLine matches a member's `corral server` log line saying it leads
// (the epoch on it is the member's state as the election ends, not the
// new epoch, so it is not read).
var leadingLine = regexp.MustCompile(`^time=(\S+) .*msg="kv member role".* state=leading `)

// leadsIn are the moments in [from, to) at which the log rd says its
// member took the lead.
func leadsIn(rd io.Reader, from, to time.Time) (at []time.Time) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := leadingLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil || t.Before(from) || !t.Before(to) {
			continue
		}
		at = append(at, t)
	}
	return at
}

// handovers reads the members' logs for the leads taken in [from, to)
// and gives each its zero-throughput window from counts.
func (s *System) handovers(from, to time.Time, counts []int64, width time.Duration) []Handover {
	var out []Handover
	for _, m := range s.Members {
		f, err := os.Open(m.logPath)
		if err != nil {
			continue
		}
		// The log's times are to the millisecond: from is truncated so a
		// lead logged in the interval's first millisecond counts.
		ats := leadsIn(f, from.Truncate(time.Millisecond), to)
		f.Close()
		for _, t := range ats {
			off := max(t.Sub(from), 0) // a lead logged in the first millisecond
			z := ZeroNear(counts, width, off, HandoverSlack)
			out = append(out, Handover{AtMs: msFloat(off), Member: m.Name, ZeroMs: msFloat(z.Len)})
		}
	}
	slices.SortStableFunc(out, func(a, b Handover) int { return cmp.Compare(a.AtMs, b.AtMs) })
	return out
}

func msFloat(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
