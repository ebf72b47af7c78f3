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
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(samples)
	for _, s := range samples {
		if s.Value.Kind() != metrics.KindUint64 {
			logger.Warn("gcpace: runtime metrics missing; GOGC left as it is", "metric", s.Name)
			return
		}
	}
	prev := debug.SetGCPercent(Percent(samples[1].Value.Uint64(), headroom))
	defer debug.SetGCPercent(prev)
	cycles := samples[0].Value.Uint64()
	var idle idleRelease
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(samples)
		live := samples[1].Value.Uint64()
		if c := samples[0].Value.Uint64(); c != cycles {
			cycles = c
			debug.SetGCPercent(Percent(live, headroom))
		}
		// What a release can return: dead objects and free spans. Unused
		// bytes inside spans in use stay, so they are not counted: a
		// fragmented heap would otherwise be released over and over.
		objects, free := samples[3].Value.Uint64(), samples[5].Value.Uint64()
		releasable := free
		if objects > live {
			releasable += objects - live
		}
		if idle.observe(time.Now(), samples[2].Value.Uint64(), live, releasable) {
			start := time.Now()
			debug.FreeOSMemory()
			idle.took(time.Since(start))
			metrics.Read(samples)
			logger.Debug("gcpace: allocation stopped; returned the free heap to the OS",
				"releasableBefore", releasable>>20, "liveAfter", samples[1].Value.Uint64()>>20, "unit", "MiB", "took", time.Since(start))
		}
	}
}

// quietFor and quietBytes define a quiet process: one that allocated
// less than quietBytes in the last quietFor (a server whose write load
// stopped; sessions' pings and reads allocate far less).
const (
	quietFor   = 2 * time.Second
	quietBytes = 4 << 20
)

// releaseCostRatio bounds what idle releases cost: the time between two
// is at least this many times what the last one took (a collection, a
// mark of the whole tree, and returning the pages), and at least
// quietFor. A load that pauses every few seconds so spends at most about
// a hundredth of a CPU on them. A fixed spacing (30 s) left a member that
// did a little work after its release (a snapshot that the load's last
// writes had triggered, finishing after them) holding that work's
// garbage for the rest of the spacing; a release of a 200 MB tree takes
// tens of milliseconds, so the next may come seconds later.
const releaseCostRatio = 100

// idleRelease decides when a quiet process returns its free heap to the
// OS. Resident memory is what operators read, so the excess worth a
// release is small: a release costs one collection, spaced by its cost
// (releaseCostRatio), and only while the process is quiet. The collector keeps up to a goal's worth of heap (live + half of
// it, or the floor) resident, and the runtime's scavenger returns only
// what lies above the goal: after a burst of writes a server stays at
// its peak for as long as it is idle, though its live heap is two thirds
// of that or less. Once allocation has been quiet for quietFor and what a
// collection and a release would return (dead objects and free spans)
// exceeds a thirty-second of the live heap (at least releaseSlack),
// debug.FreeOSMemory collects and returns the rest. The next writes
// fault the pages back in as they need them.
type idleRelease struct {
	// since and allocs are the start of the quiet interval: the time and
	// the process's cumulative allocated bytes then.
	since  time.Time
	allocs uint64
	// last is the time of the last release, cost what it took.
	last time.Time
	cost time.Duration
}

// releaseSlack is the least releasable heap worth a release.
const releaseSlack = 4 << 20

// observe takes a reading (now, cumulative allocated bytes, live heap at
// the last collection, heap a release would return) and reports whether
// to release now.
func (r *idleRelease) observe(now time.Time, allocs, live, releasable uint64) bool {
	if r.since.IsZero() || allocs-r.allocs >= quietBytes {
		r.since, r.allocs = now, allocs
		return false
	}
	if now.Sub(r.since) < quietFor || (!r.last.IsZero() && now.Sub(r.last) < r.spacing()) {
		return false
	}
	if releasable <= max(live/32, releaseSlack) {
		return false
	}
	r.last = now
	return true
}

// took records what the release observe asked for took.
func (r *idleRelease) took(d time.Duration) { r.cost = d }

// spacing is the least time from the last release to the next.
func (r *idleRelease) spacing() time.Duration {
	return max(quietFor, releaseCostRatio*r.cost)
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
