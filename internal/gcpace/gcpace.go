package gcpace

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// maxHeadroom is the least garbage the collector lets accumulate before
// a cycle (the floor of the headroom), on a machine with 4 GiB or more.
// A server's live heap is mostly its tree; below twice this size the
// collector runs less often than GOGC=Proportion would have it.
const maxHeadroom = 64 << 20

// Proportion is the garbage, in percent of the live heap, the collector
// lets accumulate above the floor: the heap goal is live +
// max(live*Proportion/100, headroom). A large tree then costs half its
// size again, not twice it, and the collector marks it at most every
// half-tree of allocation.
const Proportion = 50

// DefaultHeadroom is maxHeadroom, or a sixty-fourth of the machine's
// memory if that is less (many servers on a small machine: a test
// suite's).
func DefaultHeadroom() uint64 {
	if m := physicalMemory(); m > 0 && m/64 < maxHeadroom {
		return m / 64
	}
	return maxHeadroom
}

// pollEvery is how often Run looks for a finished cycle. A goal set a
// little late only means one cycle at the previous goal.
const pollEvery = 100 * time.Millisecond

// maxPercent bounds GOGC when the live heap is tiny (a server just
// started): the goal is then live + headroom all the same.
const maxPercent = 1 << 20

// Enabled reports whether Run would tune the collector: not when GOGC is
// set in the environment.
func Enabled() bool {
	_, set := os.LookupEnv("GOGC")
	return !set
}

// Run tunes GOGC after each collection until ctx ends, then restores the
// setting it found. It does nothing if !Enabled() or headroom is 0.
func Run(ctx context.Context, headroom uint64, logger *slog.Logger) {
	if !Enabled() || headroom == 0 {
		return
	}
	samples := []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(samples)
	if samples[0].Value.Kind() != metrics.KindUint64 || samples[1].Value.Kind() != metrics.KindUint64 {
		logger.Warn("gcpace: runtime metrics missing; GOGC left as it is")
		return
	}
	prev := debug.SetGCPercent(Percent(samples[1].Value.Uint64(), headroom))
	defer debug.SetGCPercent(prev)
	cycles := samples[0].Value.Uint64()
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(samples)
		if c := samples[0].Value.Uint64(); c != cycles {
			cycles = c
			debug.SetGCPercent(Percent(samples[1].Value.Uint64(), headroom))
		}
	}
}

// minLive is the live heap Percent assumes at least. The runtime's
// smallest goal is 4 MiB scaled by GOGC/100, and before the first cycle
// it has measured no live heap: counted as less than 4 MiB, a tiny live
// heap would set a GOGC whose minimum goal is far above live+headroom
// (at 1 MiB and a 512 MiB headroom, a first goal of 2 GiB, which a
// server filling its tree never reached: no cycle at all).
const minLive = 4 << 20

// Percent is the GOGC that puts the next heap goal at live +
// max(live*Proportion/100, headroom).
func Percent(live, headroom uint64) int {
	live = max(live, minLive)
	if live*Proportion/100 >= headroom {
		return Proportion
	}
	p := float64(headroom) / float64(live) * 100 // no overflow for any headroom
	return int(min(max(p, Proportion), maxPercent))
}

// SetMemoryLimit sets the runtime's soft memory limit
// (debug.SetMemoryLimit) to limit bytes, the memory.limit key of
// zoo.cfg; near it the collector runs as often as it must, whatever
// GOGC says. It does nothing for 0 (no limit) or when GOMEMLIMIT is set
// in the environment, so an operator's choice wins. It returns whether
// it set the limit.
func SetMemoryLimit(limit int64) bool {
	if limit <= 0 {
		return false
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return false
	}
	debug.SetMemoryLimit(limit)
	return true
}
