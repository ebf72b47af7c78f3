package replica

import (
	"math/rand/v2"
	"sync"
	"time"
)

// snapKind says why a snapshot is taken.
type snapKind uint8

const (
	// snapBusy: the write count reached the snapshot point. Busy
	// snapshots move the log cut.
	snapBusy snapKind = iota + 1
	// snapIdle (diskless): a lull after writes, or writes that waited the
	// exposure bound (Schedule.MaxExposure). Idle snapshots do not move
	// the log cut: they come after as few as IdleMin writes, and counted
	// there they moved a leader's cut past a crashed member's snapshot
	// (see Driver.cutLog).
	snapIdle
)

// scheduler decides when snapshots are taken: busy ones by write count,
// idle ones in a lull (diskless), both spaced by the last snapshot's
// duration. It does no I/O and reads no clock: callers pass the time.
// One mutex guards all of it; Driver.MaybeSnapshot is the one caller
// that starts and finishes snapshots, so the decision and the run cannot
// interleave with another snapshot.
type scheduler struct {
	cfg      Schedule
	diskless bool

	mu sync.Mutex
	// rand picks the snapshot points.
	rand *rand.Rand
	// since counts writes since the newest snapshot started; at is the
	// randomised count that makes a busy snapshot due. bytes and atBytes
	// are the same for the writes' bytes (Schedule.SnapBytes).
	since, at      int
	bytes, atBytes int64
	// lastWrite is when a write was last counted; oldest is when the
	// oldest write since the newest snapshot started was counted.
	lastWrite, oldest time.Time
	// lastTook is how long the last snapshot took.
	lastTook time.Duration
	// running: a snapshot is being taken.
	running bool
	// spacedUntil: snapshots that are spaced wait until then.
	spacedUntil time.Time
	// declined counts the lulls that found too few writes or the spacing
	// still running (tests use it to see the rule applied).
	declined int
}

func newScheduler(cfg Schedule, diskless bool, r *rand.Rand) *scheduler {
	cfg.setDefaults()
	s := &scheduler{cfg: cfg, diskless: diskless, rand: r}
	s.at = s.nextAtLocked()
	s.atBytes = s.nextAtBytesLocked()
	return s
}

// nextAtBytesLocked randomises the byte point between SnapBytes/2 and
// SnapBytes, as nextAtLocked the count; no draw without a byte trigger.
func (s *scheduler) nextAtBytesLocked() int64 {
	if s.cfg.SnapBytes <= 0 {
		return 0
	}
	half := max(s.cfg.SnapBytes/2, 1)
	return half + s.rand.Int64N(half)
}

// busyDueLocked reports whether the writes since the newest snapshot
// started reached the count or the byte point.
func (s *scheduler) busyDueLocked() bool {
	return s.since >= s.at || (s.atBytes > 0 && s.bytes >= s.atBytes)
}

// nextAtLocked randomises the snapshot point between SnapCount/2 and
// SnapCount, as ZooKeeper does, so an ensemble's members do not all
// snapshot at once.
func (s *scheduler) nextAtLocked() int {
	half := max(s.cfg.SnapCount/2, 1)
	return half + s.rand.IntN(half)
}

// wrote counts n writes of size bytes together at now.
func (s *scheduler) wrote(n int, size int64, now time.Time) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	if s.since == 0 {
		s.oldest = now
	}
	s.since += n
	s.bytes += size
	s.lastWrite = now
	s.mu.Unlock()
}

// due reports whether a snapshot should start now, and which kind.
func (s *scheduler) due(now time.Time) (snapKind, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.since == 0 {
		return 0, false
	}
	if s.busyDueLocked() {
		// Diskless busy snapshots are not spaced: a checkpoint writes
		// every entry since the newest snapshot, and its size is the
		// restoration time after a leader failure. With a log, the
		// spacing holds a due snapshot back until it ends, whether or not
		// writes still come, so it runs in the lull after a burst.
		if s.diskless || !now.Before(s.spacedUntil) {
			return snapBusy, true
		}
		return 0, false
	}
	if !s.diskless {
		return 0, false
	}
	if s.agedLocked(now) {
		return snapIdle, true
	}
	if s.cfg.IdleQuiet < 0 || now.Sub(s.lastWrite) < s.cfg.IdleQuiet {
		return 0, false
	}
	if s.since < s.cfg.IdleMin || now.Before(s.spacedUntil) {
		s.declined++
		return 0, false
	}
	return snapIdle, true
}

// agedLocked (diskless) reports whether the oldest write outside every
// snapshot has waited the exposure bound at a low or moderate rate, and
// the spacing allows a snapshot.
func (s *scheduler) agedLocked(now time.Time) bool {
	if s.cfg.MaxExposure < 0 || now.Before(s.spacedUntil) {
		return false
	}
	age := now.Sub(s.oldest)
	if age < max(s.cfg.MaxExposure, 5*s.lastTook) {
		return false
	}
	// Below IdleMin writes per IdleQuiet (a rate, compared without
	// dividing): above it the count cadence comes soon enough and
	// sustained load keeps it.
	quiet := s.cfg.IdleQuiet
	if quiet <= 0 {
		quiet = 100 * time.Millisecond
	}
	return int64(s.since)*int64(quiet) < int64(s.cfg.IdleMin)*int64(age)
}

// start marks a snapshot of kind running: the writes counted so far are
// the ones it covers.
func (s *scheduler) start(kind snapKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = true
	s.since, s.bytes = 0, 0
	if kind == snapBusy {
		s.at = s.nextAtLocked()
		s.atBytes = s.nextAtBytesLocked()
	}
}

// finish marks the running snapshot done at now after took.
func (s *scheduler) finish(now time.Time, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = false
	s.lastTook = took
	s.spacedUntil = now.Add(time.Duration(s.cfg.Spacing) * took)
}

// idleDeclined returns how many lulls were declined.
func (s *scheduler) idleDeclined() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.declined
}
