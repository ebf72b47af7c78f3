package metric

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// Detail is ZooKeeper's MetricsContext.DetailLevel: a basic summary
// reports its median only; an advanced one the 50th, 90th, 95th, 99th and
// 99.9th percentiles.
type Detail int

const (
	DetailBasic Detail = iota
	DetailAdvanced
)

// Window is how long observations stay in a summary's quantiles: between
// one and two Windows, as the histogram is rotated once a Window.
const Window = time.Minute

// Summary is a distribution of non-negative integer observations (ms,
// bytes, counts): cumulative count, sum, min and max, and quantiles over
// the last Window or two. Safe for concurrent use; Observe never blocks.
type Summary struct {
	name   string
	help   string
	detail Detail

	count, sum atomic.Int64
	// min is stored +1 so that the zero value means "none yet".
	min1, max atomic.Int64

	// cur takes observations; prev is the window before. rotMu
	// serialises rotation (readers only); observers never take it.
	cur     atomic.Pointer[histogram]
	rotMu   sync.Mutex
	prev    *histogram
	curFrom time.Time
	now     func() time.Time
}

func newSummary(name, help string, d Detail, now func() time.Time) *Summary {
	s := &Summary{name: name, help: help, detail: d, now: now}
	s.cur.Store(new(histogram))
	s.prev = new(histogram)
	s.curFrom = now()
	return s
}

// Name is the metric's ZooKeeper name, e.g. "readlatency".
func (s *Summary) Name() string { return s.name }

// Help describes the metric for Prometheus.
func (s *Summary) Help() string { return s.help }

// Detail is the summary's level.
func (s *Summary) Detail() Detail { return s.detail }

// Observe records one value; negative values count as 0.
func (s *Summary) Observe(v int64) {
	if v < 0 {
		v = 0
	}
	s.count.Add(1)
	s.sum.Add(v)
	for {
		m := s.min1.Load()
		if m != 0 && m-1 <= v || s.min1.CompareAndSwap(m, v+1) {
			break
		}
	}
	for {
		m := s.max.Load()
		if v <= m || s.max.CompareAndSwap(m, v) {
			break
		}
	}
	s.cur.Load().add(v)
}

// ObserveDuration records d in whole milliseconds, truncated as
// ZooKeeper's Time.currentElapsedTime differences are.
func (s *Summary) ObserveDuration(d time.Duration) { s.Observe(d.Milliseconds()) }

// Reset forgets every observation (stat_reset).
func (s *Summary) Reset() {
	s.rotMu.Lock()
	defer s.rotMu.Unlock()
	s.count.Store(0)
	s.sum.Store(0)
	s.min1.Store(0)
	s.max.Store(0)
	s.cur.Store(new(histogram))
	s.prev = new(histogram)
	s.curFrom = s.now()
}

// Snapshot is a summary's state at one moment.
type Snapshot struct {
	Count, Sum, Min, Max int64
	hist                 histogram
	n                    uint64 // observations in hist
}

// Avg is ZooKeeper's getAvg before rounding: Sum/Count, 0 when empty.
func (sn *Snapshot) Avg() float64 {
	if sn.Count == 0 {
		return 0
	}
	return float64(sn.Sum) / float64(sn.Count)
}

// Quantile estimates the q-quantile (0 <= q <= 1) of the recent window;
// 0 with no recent observation.
func (sn *Snapshot) Quantile(q float64) float64 {
	if sn.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(sn.n)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i := range sn.hist.b {
		seen += sn.hist.b[i].Load()
		if seen >= rank {
			return bucketMid(i)
		}
	}
	return bucketMid(len(sn.hist.b) - 1)
}

// Snapshot reads the summary, rotating its window if due.
func (s *Summary) Snapshot() *Snapshot {
	s.rotMu.Lock()
	now := s.now()
	if now.Sub(s.curFrom) >= Window {
		s.prev = s.cur.Swap(new(histogram))
		s.curFrom = now
	}
	sn := &Snapshot{Count: s.count.Load(), Sum: s.sum.Load(), Max: s.max.Load()}
	if m := s.min1.Load(); m > 0 {
		sn.Min = m - 1
	}
	cur := s.cur.Load()
	for i := range sn.hist.b {
		v := s.prev.b[i].Load() + cur.b[i].Load()
		sn.hist.b[i].Store(v)
		sn.n += v
	}
	s.rotMu.Unlock()
	return sn
}

// The histogram is log-linear: values below linearBuckets have a bucket
// each; above, each power of two is split into subBuckets.
const (
	linearBuckets = 16
	subBits       = 3
	subBuckets    = 1 << subBits
	maxExp        = 40 // values of 2^41 and more share the last bucket
	numBuckets    = linearBuckets + (maxExp-3)*subBuckets
)

type histogram struct{ b [numBuckets]atomic.Uint64 }

func (h *histogram) add(v int64) { h.b[bucketOf(v)].Add(1) }

func bucketOf(v int64) int {
	if v < linearBuckets {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 1 // >= 4
	if e > maxExp {
		return numBuckets - 1
	}
	sub := int(uint64(v)>>(e-subBits)) & (subBuckets - 1)
	return linearBuckets + (e-4)*subBuckets + sub
}

// bucketMid is the middle of bucket i's range (its value below
// linearBuckets).
func bucketMid(i int) float64 {
	if i < linearBuckets {
		return float64(i)
	}
	e := (i-linearBuckets)/subBuckets + 4
	sub := (i - linearBuckets) % subBuckets
	width := uint64(1) << (e - subBits)
	lo := uint64(1)<<e + uint64(sub)*width
	return float64(lo) + float64(width-1)/2
}
