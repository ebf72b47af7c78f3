package testutil

import (
	"flag"
	"math"
	"runtime"
	"time"
)

// LiveHeap is the heap that collections leave live, the least of five
// samples 20 ms apart: a background goroutine's short-lived buffer (a
// data log's spare preparer filling a segment with zeros, say) is then
// not counted as what a test measures. For tests that measure memory,
// never for timing.
func LiveHeap() int64 {
	least := int64(math.MaxInt64)
	for i := range 5 {
		if i > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		least = min(least, int64(ms.HeapAlloc))
	}
	return least
}

var memAppends = flag.Int("rlog.mem", 0, "memory-per-append tests (rlog, server): appends of 64 KiB to measure (default 512)")

// MemAppends is the number of appends a memory-per-append test measures:
// -rlog.mem if set (> 0), else 512.
func MemAppends() int {
	if *memAppends > 0 {
		return *memAppends
	}
	return 512
}

// TiBPerGiB is how many TiB of log a GiB of memory addresses at per bytes
// of memory per append of size bytes; +Inf when an append costs nothing
// measurable.
func TiBPerGiB(per float64, size int) float64 {
	if per <= 0 {
		return math.Inf(1)
	}
	return float64(size) / per / 1024
}
