package durability

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestSecondCounter(t *testing.T) {
	s := newSecondCounter(2500 * time.Millisecond)
	for _, off := range []time.Duration{
		-time.Nanosecond, // before the interval: not counted
		0, 999 * time.Millisecond,
		time.Second, 1500 * time.Millisecond, 1999 * time.Millisecond,
		2 * time.Second,
		3 * time.Second, // past the last bucket: not counted
	} {
		s.add(off)
	}
	if got, want := s.values(), []int64{2, 3, 1}; !slices.Equal(got, want) {
		t.Errorf("buckets %v, want %v", got, want)
	}
	if n := len(newSecondCounter(0).values()); n != 0 {
		t.Errorf("empty interval has %d buckets", n)
	}
	if n := len(newSecondCounter(20 * time.Second).values()); n != 20 {
		t.Errorf("20s has %d buckets", n)
	}
}

func TestSummarizeSeries(t *testing.T) {
	// The partial third second is left out.
	st := SummarizeSeries([]int64{100, 300, 7}, 2500*time.Millisecond)
	want := SeriesStats{Seconds: 2, Mean: 200, Min: 100, Max: 300, Stddev: 100}
	if st != want {
		t.Errorf("got %+v, want %+v", st, want)
	}
	if st := SummarizeSeries([]int64{5}, 500*time.Millisecond); st != (SeriesStats{}) {
		t.Errorf("no whole second: %+v", st)
	}
	// Fewer values than seconds (a phase that stopped early).
	st = SummarizeSeries([]int64{4, 4}, 10*time.Second)
	if st.Seconds != 2 || st.Mean != 4 || st.Stddev != 0 {
		t.Errorf("short series: %+v", st)
	}
}

func TestCPUPercents(t *testing.T) {
	r := []time.Duration{10 * time.Second, 10*time.Second + 500*time.Millisecond, 12 * time.Second, 11 * time.Second}
	got := cpuPercents(r, time.Second)
	want := []float64{50, 150, 0} // a reading that went back yields 0
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("got %v, want %v", got, want)
		}
	}
	if cpuPercents(r[:1], time.Second) != nil {
		t.Error("one reading gives no interval")
	}
}
