package metric

import "testing"

// BenchmarkObserve is the per-request cost readlatency adds to the hot
// path.
func BenchmarkObserve(b *testing.B) {
	s := NewRegistry(nil).Summary("readlatency", "", DetailAdvanced)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var v int64
		for pb.Next() {
			s.Observe(v & 1023)
			v++
		}
	})
}

// BenchmarkSnapshot is the cost of one scrape's read of a summary.
func BenchmarkSnapshot(b *testing.B) {
	s := NewRegistry(nil).Summary("readlatency", "", DetailAdvanced)
	for i := int64(0); i < 1000; i++ {
		s.Observe(i)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sn := s.Snapshot()
		_ = sn.Quantile(0.99)
	}
}
