package rlog

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/zab"
)

// Proposer runs requests against a State: Local alone, Member in a
// replica group.
type Proposer interface {
	// Do prepares, replicates and applies one request. A nil error with
	// Result.Err set is the operation's own failure (an *Error); an error
	// returned means the outcome is unknown or this member cannot serve
	// (not the leader: ErrNotLeader).
	Do(ctx context.Context, req Mutation) (Result, error)
	State() *State
}

// ErrNotLeader is returned by Member.Do on a member that is not the
// leader: the request must go to the leader.
var ErrNotLeader = errors.New("rlog: not the leader")

// Member is a State replicated by a replica.Driver: requests go through
// Prepare on the leader and are proposed; every member applies them.
type Member struct {
	s *State
	d *replica.Driver
	// mu orders Prepare and the proposal, so that the leader's view
	// assigns offsets in zxid order.
	mu sync.Mutex
}

// NewMember wires s to d. Call it before d runs; cfg is the Config the
// driver is built from: NewMember sets its OnSoftState to reset the
// leader's view on every change of role (chaining any already set).
func NewMember(s *State, cfg *replica.Config) *Member {
	prev := cfg.OnSoftState
	cfg.OnSoftState = func(p, c zab.SoftState) {
		if p.State != c.State || p.Phase != c.Phase || p.Leader != c.Leader || p.Epoch != c.Epoch {
			s.ResetPrepare()
		}
		if prev != nil {
			prev(p, c)
		}
	}
	return &Member{s: s}
}

// Attach sets the driver, once built.
func (mb *Member) Attach(d *replica.Driver) { mb.d = d }

// State returns the member's State.
func (mb *Member) State() *State { return mb.s }

// Do prepares req against the leader's view, proposes it and waits until
// this member has applied it.
func (mb *Member) Do(ctx context.Context, req Mutation) (Result, error) {
	mb.mu.Lock()
	if !mb.d.SoftState().Established() {
		mb.mu.Unlock()
		return Result{}, ErrNotLeader
	}
	prop, dup, err := mb.s.Prepare(req)
	if err != nil {
		mb.mu.Unlock()
		return Result{Offset: -1, Err: err}, nil
	}
	if dup != nil {
		mb.mu.Unlock()
		return *dup, nil
	}
	data := Encode(nil, &prop)
	var ch <-chan Result
	_, err = mb.d.ProposeWith(func(z zab.Zxid) ([]byte, error) {
		ch = mb.s.wait(z)
		return data, nil
	})
	if err != nil {
		mb.s.ResetPrepare()
		mb.mu.Unlock()
		if errors.Is(err, zab.ErrNotLeader) {
			return Result{}, ErrNotLeader
		}
		return Result{}, fmt.Errorf("rlog: proposing: %w", err)
	}
	mb.mu.Unlock()
	select {
	case res := <-ch:
		if _, ok := CodeOf(res.Err); !ok {
			return Result{}, res.Err
		}
		return res, nil
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// Driver returns the member's driver.
func (mb *Member) Driver() *replica.Driver { return mb.d }
