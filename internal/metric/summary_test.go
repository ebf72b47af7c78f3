package metric

import (
	"math"
	"sync"
	"testing"
	"time"
)

func TestSummaryCountsAndQuantiles(t *testing.T) {
	r := NewRegistry(nil)
	s := r.Summary("readlatency", "h", DetailAdvanced)
	if sn := s.Snapshot(); sn.Count != 0 || sn.Min != 0 || sn.Max != 0 || sn.Quantile(0.5) != 0 {
		t.Fatalf("empty summary: %+v", sn)
	}
	for v := int64(1); v <= 1000; v++ {
		s.Observe(v)
	}
	sn := s.Snapshot()
	if sn.Count != 1000 || sn.Sum != 500500 || sn.Min != 1 || sn.Max != 1000 {
		t.Fatalf("count/sum/min/max = %d/%d/%d/%d", sn.Count, sn.Sum, sn.Min, sn.Max)
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := q * 1000
		if got := sn.Quantile(q); math.Abs(got-want) > want/8+1 {
			t.Errorf("q%v = %v, want %v within 1/8", q, got, want)
		}
	}
	s.Observe(-5) // counts as 0
	if sn := s.Snapshot(); sn.Min != 0 || sn.Count != 1001 {
		t.Errorf("after a negative value: %+v", sn)
	}
	s.Reset()
	if sn := s.Snapshot(); sn.Count != 0 || sn.Quantile(0.5) != 0 {
		t.Errorf("after Reset: %+v", sn)
	}
}

func TestSummaryWindowForgetsOldValues(t *testing.T) {
	now := time.Unix(0, 0)
	r := NewRegistry(func() time.Time { return now })
	s := r.Summary("x", "h", DetailBasic)
	s.Observe(1000)
	now = now.Add(Window)
	s.Snapshot() // rotates: 1000 is in the previous window, still counted
	s.Observe(2)
	if q := s.Snapshot().Quantile(1); q < 900 {
		t.Errorf("max quantile %v forgot a value one window old", q)
	}
	now = now.Add(Window)
	if q := s.Snapshot().Quantile(1); q > 2 {
		t.Errorf("two windows on, max quantile = %v; 1000 should be gone", q)
	}
	now = now.Add(Window)
	if q := s.Snapshot().Quantile(1); q != 0 {
		t.Errorf("two windows on, quantile = %v, want 0 (no recent values)", q)
	}
	if sn := s.Snapshot(); sn.Count != 2 || sn.Max != 1000 {
		t.Errorf("count and max must stay cumulative: %+v", sn)
	}
}

func TestBucketsCoverValues(t *testing.T) {
	for _, v := range []int64{0, 1, 15, 16, 17, 100, 1 << 20, 1<<41 - 1, 1 << 50, math.MaxInt64} {
		i := bucketOf(v)
		if i < 0 || i >= numBuckets {
			t.Fatalf("bucketOf(%d) = %d out of range", v, i)
		}
		if v < 1<<40 {
			if mid := bucketMid(i); math.Abs(mid-float64(v)) > float64(v)/8+0.5 {
				t.Errorf("bucket of %d has middle %v", v, mid)
			}
		}
	}
}

func TestSummaryConcurrent(t *testing.T) {
	r := NewRegistry(nil)
	s := r.Summary("x", "h", DetailBasic)
	c := r.Counter("c", "h")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); i < 1000; i++ {
				s.Observe(i)
				c.Inc()
			}
		}()
	}
	wg.Wait()
	if sn := s.Snapshot(); sn.Count != 4000 || sn.Min != 0 || sn.Max != 999 || c.Load() != 4000 {
		t.Errorf("after concurrent observations: %+v, counter %d", sn, c.Load())
	}
	if r.Counter("c", "") != c || len(r.Counters()) != 1 || len(r.Summaries()) != 1 {
		t.Error("registry did not return the existing metrics")
	}
}
