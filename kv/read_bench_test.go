package kv

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkGet reads whole records from newBenchStore's store without a
// row cache, so that every Get reads pebble: "cold" reads rows drawn at
// random, "hot" one row that 2,000 puts have overwritten since the
// flush, so that its memtable holds each replaced version as a set and a
// point delete (`corral bench kv` workload C after A or W). "cached" is
// "hot" with the default row cache: a hit.
func BenchmarkGet(b *testing.B) {
	bs := newBenchStore(b, 64<<20, -1)
	const hot = 4242
	for range 2000 {
		bs.apply(bs.record(hot))
	}
	get := func(b *testing.B, row func() int) {
		cpu0 := cpuTime(b)
		for b.Loop() {
			cells, err := bs.Get("t", benchRowKey(row()), ReadOptions{})
			if err != nil || len(cells) != 10 {
				b.Fatalf("get: %d cells, %v", len(cells), err)
			}
		}
		b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	}
	b.Run("cold", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		get(b, func() int { return rng.IntN(benchRows) })
	})
	b.Run("hot", func(b *testing.B) { get(b, func() int { return hot }) })
	b.Run("cached", func(b *testing.B) {
		bs.rows = newRowCache(DefaultRowCacheSize)
		get(b, func() int { return hot })
	})
}
