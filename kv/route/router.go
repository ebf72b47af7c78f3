package route

import (
	"errors"
	"fmt"
	"sync"

	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
)

// Target is where a request for one group goes.
type Target struct {
	Group ring.GroupID
	// Addr is the leader's API address.
	Addr string
	// Epoch is the zab epoch in which Addr leads, as far as known.
	Epoch uint64
	// RingVersion is the ring version the routing was made with.
	RingVersion uint64
}

// Action says what a client should do after a routing error.
type Action uint8

const (
	// NotRouting: the error is not a routing error; handle it otherwise.
	NotRouting Action = iota
	// RetryNow: the route changed; Route again and send at once.
	RetryNow
	// WaitConfig: wait for a newer configuration (View.Changed, or re-read
	// the CM after a timeout), then Route again.
	WaitConfig
	// Backoff: the server is behind the client (it has not yet applied the
	// ring the client routes by); retry the same route after a pause.
	Backoff
)

func (a Action) String() string {
	switch a {
	case NotRouting:
		return "NotRouting"
	case RetryNow:
		return "RetryNow"
	case WaitConfig:
		return "WaitConfig"
	case Backoff:
		return "Backoff"
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Router holds the latest configuration and the corrections learnt from
// servers. It is safe for concurrent use.
type Router struct {
	mu sync.Mutex
	// Guarded by mu.
	st *cm.State
	// learnt holds leaders (or "none known", Addr "") reported by
	// NotLeader in epochs newer than st's; dropped once st catches up.
	learnt map[ring.GroupID]cm.Leader
	// wantRing is the newest ring version a server reported (WrongRange);
	// routing waits until st's ring reaches it.
	wantRing uint64
	// updated is closed (and replaced) by each Update or learnt leader.
	updated chan struct{}
}

// New returns a Router with no configuration: Route fails with ErrNoRing
// until Update.
func New() *Router {
	return &Router{learnt: map[ring.GroupID]cm.Leader{}, updated: make(chan struct{})}
}

// Updated returns a channel closed at the next change of what the Router
// knows (an Update, or a leader learnt from NotLeader). Take it before
// Route, so that a change between the two is not missed.
func (r *Router) Updated() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.updated
}

// changedLocked wakes the waiters of Updated.
func (r *Router) changedLocked() {
	close(r.updated)
	r.updated = make(chan struct{})
}

// Update installs a new configuration. A State whose ring is older than
// the one held keeps the held ring (the CM's ring version never goes
// down; an older one is a stale read). Learnt leaders the State has caught
// up with are dropped.
func (r *Router) Update(st *cm.State) {
	if st == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st != nil && r.st.Ring != nil && (st.Ring == nil || st.Ring.Version() < r.st.Ring.Version()) {
		st = &cm.State{Ring: r.st.Ring, Groups: st.Groups}
	}
	r.st = st
	for g, l := range r.learnt {
		if cur, ok := st.LeaderOf(g); ok && cur.Epoch >= l.Epoch {
			delete(r.learnt, g)
		}
	}
	r.changedLocked()
}

// Route is the target for a row key.
func (r *Router) Route(key []byte) (Target, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ringReadyLocked(); err != nil {
		return Target{}, err
	}
	return r.targetLocked(r.st.Ring.Owner(key))
}

// RouteGroup is the target for group g.
func (r *Router) RouteGroup(g ring.GroupID) (Target, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ringReadyLocked(); err != nil {
		return Target{}, err
	}
	return r.targetLocked(g)
}

// Groups are the groups on the ring, in increasing order.
func (r *Router) Groups() ([]ring.GroupID, error) {
	gs, _, err := r.GroupsAt()
	return gs, err
}

// GroupsAt is Groups and the version of the ring they are read from (a
// scan of every group sends that version to each).
func (r *Router) GroupsAt() ([]ring.GroupID, uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ringReadyLocked(); err != nil {
		return nil, 0, err
	}
	return r.st.Ring.Groups(), r.st.Ring.Version(), nil
}

// Batch is the part of a multi-key request bound for one group: indexes
// into the caller's keys, in order, and where to send them (or why they
// cannot be sent yet).
type Batch struct {
	Target  Target
	Indexes []int
	Err     error
}

// Split groups keys by owning group for a multi-get.
func (r *Router) Split(keys [][]byte) ([]Batch, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ringReadyLocked(); err != nil {
		return nil, err
	}
	var out []Batch
	for _, b := range r.st.Ring.Split(keys) {
		t, err := r.targetLocked(b.Group)
		out = append(out, Batch{Target: t, Indexes: b.Indexes, Err: err})
	}
	return out, nil
}

func (r *Router) ringReadyLocked() error {
	if r.st == nil || r.st.Ring == nil {
		return ErrNoRing
	}
	if v := r.st.Ring.Version(); v < r.wantRing {
		return fmt.Errorf("%w: have v%d, a server has v%d", ErrRingBehind, v, r.wantRing)
	}
	return nil
}

// leaderLocked is g's newest known leader: learnt or recorded.
func (r *Router) leaderLocked(g ring.GroupID) (cm.Leader, bool) {
	l, ok := r.st.LeaderOf(g)
	if x, learnt := r.learnt[g]; learnt && (!ok || x.Epoch > l.Epoch) {
		return x, true
	}
	return l, ok
}

func (r *Router) targetLocked(g ring.GroupID) (Target, error) {
	t := Target{Group: g, RingVersion: r.st.Ring.Version()}
	if _, ok := r.st.Groups[g]; !ok {
		return t, fmt.Errorf("%w: %v", ErrUnknownGroup, g)
	}
	l, ok := r.leaderLocked(g)
	if !ok || l.Addr == "" {
		return t, fmt.Errorf("%w: %v", ErrNoLeader, g)
	}
	t.Addr, t.Epoch = l.Addr, l.Epoch
	return t, nil
}

// Observe takes the error a server answered a request routed to t with,
// learns from it, and says what to do next.
//
//   - NotLeader from an epoch newer than any known for the group: its
//     leader is adopted (RetryNow), or, if it names none, recorded as "none
//     known in that epoch" so that Route waits for the CM (WaitConfig).
//     From an epoch no newer: stale news, ignored; RetryNow if the route
//     has changed since t was made, else WaitConfig.
//   - WrongRange with a ring version newer than the one held: Route fails
//     with ErrRingBehind until Update brings that version (WaitConfig).
//     With a version no newer than t's: the server lags (Backoff).
func (r *Router) Observe(t Target, err error) Action {
	var nl *NotLeader
	var wr *WrongRange
	switch {
	case errors.As(err, &nl):
		r.mu.Lock()
		defer r.mu.Unlock()
		g := nl.Group
		if g == 0 {
			g = t.Group
		}
		cur, ok := r.leaderLockedSafe(g)
		if !ok || nl.Epoch > cur.Epoch {
			r.learnt[g] = cm.Leader{Epoch: nl.Epoch, ID: nl.LeaderID, Addr: nl.LeaderAddr}
			r.changedLocked()
			if nl.LeaderAddr == "" {
				return WaitConfig
			}
			return RetryNow
		}
		if cur.Addr != "" && (cur.Epoch > t.Epoch || cur.Addr != t.Addr) {
			return RetryNow
		}
		return WaitConfig
	case errors.As(err, &wr):
		r.mu.Lock()
		defer r.mu.Unlock()
		have := uint64(0)
		if r.st != nil && r.st.Ring != nil {
			have = r.st.Ring.Version()
		}
		switch {
		case wr.RingVersion > have:
			r.wantRing = max(r.wantRing, wr.RingVersion)
			return WaitConfig
		case have > t.RingVersion:
			return RetryNow // the ring changed since t was routed
		}
		return Backoff
	}
	return NotRouting
}

// leaderLockedSafe is leaderLocked tolerating a Router without a State.
func (r *Router) leaderLockedSafe(g ring.GroupID) (cm.Leader, bool) {
	if r.st == nil {
		l, ok := r.learnt[g]
		return l, ok
	}
	return r.leaderLocked(g)
}
