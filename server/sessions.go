package server

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"
)

// session is the server's runtime view of a session: when it was last
// heard from and which connection holds it. The replicated part (id and
// timeout) lives in the data tree, so it survives restarts and snapshots.
type session struct {
	id      int64
	timeout atomic.Int32 // negotiated, ms
	// lastSeen is monotonic ms since the tracker started.
	lastSeen atomic.Int64
	closing  atomic.Bool
	// owner is the connection on this server that holds the session.
	owner atomic.Pointer[conn]
	// member is leader-local state: the member whose client connection
	// holds the session, as this leader last learned it (ZooKeeper's
	// SessionImpl.owner; see sessionmove.go). 0 is unknown: a new leader
	// knows no owners, and the first checked write adopts one. Written
	// under the server's prepMu.
	member atomic.Uint64
}

// sessionTracker expires sessions that have not been heard from for their
// timeout. Expiry is checked every tick/4, so a session expires between
// timeout and timeout+tick/4 after its last frame — inside ZooKeeper's
// bucketed window of [timeout, timeout+tick].
type sessionTracker struct {
	mu       sync.RWMutex
	sessions map[int64]*session
	start    time.Time
	nextID   int64
}

func newSessionTracker(serverID int64, now time.Time) *sessionTracker {
	// ZooKeeper's SessionTrackerImpl.initializeNextSessionId: the server id
	// in the high byte, then 40 bits of the clock, then a 16-bit counter.
	next := int64(uint64(now.UnixMilli())<<24>>8) | (serverID << 56)
	if next == minInt64 {
		next++
	}
	return &sessionTracker{sessions: map[int64]*session{}, start: time.Now(), nextID: next}
}

const minInt64 = -1 << 63

func (t *sessionTracker) nowMs() int64 { return time.Since(t.start).Milliseconds() }

// newID allocates an id that no live session uses, never 0 or MinInt64
// (the container marker).
func (t *sessionTracker) newID() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		id := t.nextID
		t.nextID++
		if id == 0 || id == minInt64 {
			continue
		}
		if _, used := t.sessions[id]; !used {
			return id
		}
	}
}

// add registers a committed session (createSession applied, or restored at
// start) and gives it a full timeout from now.
func (t *sessionTracker) add(id int64, timeout int32) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sessions[id]
	if s == nil {
		s = &session{id: id}
		t.sessions[id] = s
	}
	s.timeout.Store(timeout)
	s.lastSeen.Store(t.nowMs())
	return s
}

func (t *sessionTracker) get(id int64) *session {
	t.mu.RLock()
	s := t.sessions[id]
	t.mu.RUnlock()
	return s
}

func (t *sessionTracker) remove(id int64) *session {
	t.mu.Lock()
	s := t.sessions[id]
	delete(t.sessions, id)
	t.mu.Unlock()
	return s
}

func (t *sessionTracker) touch(s *session) {
	s.lastSeen.Store(t.nowMs())
}

// expired returns the sessions past their timeout and marks them closing,
// so they are expired once.
func (t *sessionTracker) expired(dst []*session) []*session {
	now := t.nowMs()
	t.mu.RLock()
	for _, s := range t.sessions {
		if s.closing.Load() {
			continue
		}
		if now-s.lastSeen.Load() > int64(s.timeout.Load()) {
			if s.closing.CompareAndSwap(false, true) {
				dst = append(dst, s)
			}
		}
	}
	t.mu.RUnlock()
	return dst
}

func (t *sessionTracker) count() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.sessions)
}

// expiryBuckets groups sessions by the time they will expire, rounded up
// to the tick, for the dump four-letter word.
func (t *sessionTracker) expiryBuckets(tick time.Duration, wallNow time.Time) map[int64][]int64 {
	out := map[int64][]int64{}
	now := t.nowMs()
	tickMs := tick.Milliseconds()
	if tickMs <= 0 {
		tickMs = 1
	}
	t.mu.RLock()
	for _, s := range t.sessions {
		at := wallNow.UnixMilli() + (s.lastSeen.Load() + int64(s.timeout.Load()) - now)
		at = (at/tickMs + 1) * tickMs
		out[at] = append(out[at], s.id)
	}
	t.mu.RUnlock()
	return out
}

// sessionPassword derives a session's 16-byte password from its id, so any
// member of an ensemble can check it without sharing state (ZooKeeper does
// the same with java.util.Random seeded by id ^ a constant).
func sessionPassword(id int64) []byte {
	var b [8 + len(passwordSalt)]byte
	binary.BigEndian.PutUint64(b[:8], uint64(id))
	copy(b[8:], passwordSalt)
	sum := sha256.Sum256(b[:])
	return sum[:16]
}

const passwordSalt = "corral-session-v1"

// touchAll gives every session a full timeout from now: a new leader does
// so, since the touches of its sessions went to the old one.
func (t *sessionTracker) touchAll() {
	now := t.nowMs()
	t.mu.RLock()
	for _, s := range t.sessions {
		s.lastSeen.Store(now)
	}
	t.mu.RUnlock()
}

// touchIDs touches the sessions a learner heard from (on the leader).
func (t *sessionTracker) touchIDs(ids []int64) {
	now := t.nowMs()
	t.mu.RLock()
	for _, id := range ids {
		if s := t.sessions[id]; s != nil {
			s.lastSeen.Store(now)
		}
	}
	t.mu.RUnlock()
}

// touchedSince lists the sessions heard from after ms (a learner reports
// them to the leader every tick).
func (t *sessionTracker) touchedSince(ms int64) []int64 {
	var out []int64
	t.mu.RLock()
	for id, s := range t.sessions {
		if s.lastSeen.Load() >= ms {
			out = append(out, id)
		}
	}
	t.mu.RUnlock()
	return out
}

// clearMembers forgets every session's owning member: a server that
// becomes leader learns the owners again from the reconnects (which
// revalidate with it) and the writes that follow, as ZooKeeper's new
// leader starts with a session tracker without owners. The caller holds
// prepMu.
func (t *sessionTracker) clearMembers() {
	t.mu.RLock()
	for _, s := range t.sessions {
		s.member.Store(0)
	}
	t.mu.RUnlock()
}

// clearClosing forgets which sessions are being closed: a leader that lost
// its leadership sets it when it preps a closeSession, and the
// transaction may never commit. A committed one removes the session anyway.
func (t *sessionTracker) clearClosing() {
	t.mu.RLock()
	for _, s := range t.sessions {
		s.closing.Store(false)
	}
	t.mu.RUnlock()
}
