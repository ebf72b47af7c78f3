package cm

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/wire"
)

// State is one reading of the whole configuration. A State is immutable
// once returned: a View publishes a new State for every change, so
// readers may keep and share one without locking.
type State struct {
	// Ring is nil until the configuration is initialized.
	Ring *ring.Ring
	// Groups holds every registered group.
	Groups map[ring.GroupID]GroupState
}

// GroupState is a group's registration and recorded leader.
type GroupState struct {
	Info GroupInfo
	// Leader is nil when no leader has recorded itself.
	Leader *Leader
}

// LeaderOf is the recorded leader of g, if any.
func (st *State) LeaderOf(g ring.GroupID) (Leader, bool) {
	if st == nil {
		return Leader{}, false
	}
	gs, ok := st.Groups[g]
	if !ok || gs.Leader == nil {
		return Leader{}, false
	}
	return *gs.Leader, true
}

// clone copies st's group map for a copy-on-write update.
func (st *State) clone() *State {
	return &State{Ring: st.Ring, Groups: maps.Clone(st.Groups)}
}

// Load reads the whole configuration: the ring (nil if not initialized)
// and every group with its leader. The reads are not one snapshot; each
// record is at least as new as when Load started.
func (s *Store) Load(ctx context.Context) (*State, error) {
	st := &State{Groups: map[ring.GroupID]GroupState{}}
	r, err := s.Ring(ctx)
	switch {
	case errors.Is(err, ErrNotInitialized):
	case err != nil:
		return nil, err
	default:
		st.Ring = r
	}
	kids, err := s.c.Children(ctx, s.l.groupsPath())
	if errors.Is(err, wire.CodeNoNode) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cm: list groups: %w", err)
	}
	for _, k := range kids {
		g, ok := parseGroupID(k)
		if !ok {
			continue // not ours; ignored
		}
		gs, present, err := s.loadGroup(ctx, g)
		if err != nil {
			return nil, err
		}
		if present {
			st.Groups[g] = gs
		}
	}
	return st, nil
}

// loadGroup reads g's registration and leader; present is false if g is
// not registered (any more).
func (s *Store) loadGroup(ctx context.Context, g ring.GroupID) (gs GroupState, present bool, err error) {
	gi, err := s.Group(ctx, g)
	if errors.Is(err, ErrUnregistered) {
		return GroupState{}, false, nil
	}
	if err != nil {
		return GroupState{}, false, err
	}
	gs.Info = gi
	l, ok, err := s.Leader(ctx, g)
	if err != nil {
		return GroupState{}, false, err
	}
	if ok {
		gs.Leader = &l
	}
	return gs, true, nil
}
