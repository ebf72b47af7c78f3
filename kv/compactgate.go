package kv

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// compactionGate is the store's pebble.CompactionScheduler (pebble v2.1's
// Options.Experimental.CompactionScheduler): it lets compactions run as
// pebble's own ConcurrencyLimitScheduler does (as many at once as
// DB.GetAllowedWithoutPermission says) except while held. A leader holds
// its compactions so that leadership can move to a cooler member before
// they run (docs/design/kv.md, "Compaction-aware leader change"); a
// follower never holds them. Flushes and delete-only compactions do not
// go through a scheduler, so a hold never stops a flush.
//
// pebble calls TrySchedule with its DB mutex held, and the scheduler's
// mutexes come after the DB's: the gate never calls GetWaitingCompaction
// or Schedule with mu held. Those calls are made by one goroutine per
// registration (granter), woken by a release, by a finished compaction,
// by pebble's UpdateGetAllowedWithoutPermission and every
// grantPollInterval, as pebble's default scheduler samples.
//
// The gate outlives the pebble.DB: InstallSnapshot closes the database
// (Unregister) and opens another (Register) with the same gate, and the
// hold carries over.
type compactionGate struct {
	mu sync.Mutex
	// db is the registered database; nil when none is.
	db pebble.DBForCompaction // guarded by mu
	// running counts the granted compactions not yet Done; gen numbers
	// registrations, so a handle of an earlier one counts for nothing.
	running int    // guarded by mu
	gen     uint64 // guarded by mu
	// hold refuses every compaction while set.
	hold bool // guarded by mu
	// stop ends the current registration's granter; stopped is closed
	// when it has returned.
	stop, stopped chan struct{} // guarded by mu

	// poke wakes the granter (buffered: a poke is never lost or blocks).
	poke chan struct{}

	// held counts the times pebble asked for a compaction and the gate
	// refused because of a hold (pebble asks once, then waits for a
	// grant, so about once per compaction held); granted counts the
	// compactions it let run.
	held, granted atomic.Int64
	// holds and releases count the gate's turns to held and back;
	// stallReleases those of the releases the store made because L0 was
	// near the write stall (Store.releaseNearStallLocked).
	holds, releases, stallReleases atomic.Int64
}

// grantPollInterval is how often the granter asks pebble whether a
// compaction waits, as pebble's ConcurrencyLimitScheduler does: pebble
// does not tell the scheduler about every change that makes one due.
const grantPollInterval = 100 * time.Millisecond

func newCompactionGate() *compactionGate {
	return &compactionGate{poke: make(chan struct{}, 1)}
}

var _ pebble.CompactionScheduler = (*compactionGate)(nil)

// Register starts a registration for db (pebble calls it once per Open).
func (g *compactionGate) Register(_ int, db pebble.DBForCompaction) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.db = db
	g.gen++
	g.running = 0
	g.stop, g.stopped = make(chan struct{}), make(chan struct{})
	go g.granter(db, g.stop, g.stopped)
}

// Unregister ends the registration: once it returns the gate calls the
// database no more.
func (g *compactionGate) Unregister() {
	g.mu.Lock()
	stop, stopped := g.stop, g.stopped
	g.db, g.stop, g.stopped = nil, nil, nil
	g.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

// TrySchedule is pebble asking to start a compaction now (with its DB
// mutex held).
func (g *compactionGate) TrySchedule() (bool, pebble.CompactionGrantHandle) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.db == nil {
		return false, nil
	}
	if g.hold {
		g.held.Add(1)
		return false, nil
	}
	// GetAllowedWithoutPermission takes no DB mutex: callable here.
	if g.db.GetAllowedWithoutPermission() > g.running {
		g.running++
		g.granted.Add(1)
		return true, grantHandle{g, g.gen}
	}
	return false, nil
}

// UpdateGetAllowedWithoutPermission: pebble may allow more compactions
// now (after a flush).
func (g *compactionGate) UpdateGetAllowedWithoutPermission() { g.wake() }

func (g *compactionGate) wake() {
	select {
	case g.poke <- struct{}{}:
	default:
	}
}

// setHold holds or releases compactions; a release lets the waiting ones
// start at once.
func (g *compactionGate) setHold(hold bool) {
	g.mu.Lock()
	changed := g.hold != hold
	g.hold = hold
	g.mu.Unlock()
	switch {
	case changed && hold:
		g.holds.Add(1)
	case changed:
		g.releases.Add(1)
		g.wake()
	}
}

// isHeld reports whether compactions are held.
func (g *compactionGate) isHeld() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hold
}

// state reports whether compactions are held and whether pebble has one
// waiting to start. The caller keeps the database open meanwhile (the
// store's dbMu), so it is not unregistered under the call.
func (g *compactionGate) state() (hold, waiting bool) {
	g.mu.Lock()
	hold, db := g.hold, g.db
	g.mu.Unlock()
	if db != nil {
		// pebble's mutex comes before the gate's: called without mu.
		waiting, _ = db.GetWaitingCompaction()
	}
	return hold, waiting
}

// granter grants waiting compactions while the gate is not held, until
// stop is closed.
func (g *compactionGate) granter(db pebble.DBForCompaction, stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	t := time.NewTicker(grantPollInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-g.poke:
		}
		g.grant(db, stop)
	}
}

// grant starts as many waiting compactions as pebble allows, with mu
// released while it calls the database.
func (g *compactionGate) grant(db pebble.DBForCompaction, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		g.mu.Lock()
		if g.hold || g.db != db || db.GetAllowedWithoutPermission() <= g.running {
			g.mu.Unlock()
			return
		}
		// Counted before Schedule, so a compaction that ends at once
		// cannot make running negative; given back if pebble declines.
		g.running++
		h := grantHandle{g, g.gen}
		g.mu.Unlock()
		waiting, _ := db.GetWaitingCompaction()
		accepted := waiting && db.Schedule(h)
		g.mu.Lock()
		if !accepted {
			if h.gen == g.gen {
				g.running--
			}
			g.mu.Unlock()
			return
		}
		g.granted.Add(1)
		g.mu.Unlock()
	}
}

// grantHandle is what a granted compaction reports to.
type grantHandle struct {
	g   *compactionGate
	gen uint64
}

func (h grantHandle) Started()                                          {}
func (h grantHandle) MeasureCPU(pebble.CompactionGoroutineKind)         {}
func (h grantHandle) CumulativeStats(pebble.CompactionGrantHandleStats) {}

// Done: the compaction ended; another may start.
func (h grantHandle) Done() {
	h.g.mu.Lock()
	if h.gen == h.g.gen {
		h.g.running--
	}
	h.g.mu.Unlock()
	h.g.wake()
}
