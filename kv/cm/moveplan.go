package cm

import (
	"errors"
	"fmt"
	"slices"

	"github.com/corral-db/corral/kv/ring"
)

// Move is a range move as the configuration manager records it while it
// runs (<root>/move): the range ending at Token, (Start, Token], goes
// from From to To, and ring version Ring is the one that gives it to To.
// The record is what makes a move resumable: whoever finds it finishes
// it (docs/design/kv-sharding.md, "Range moves").
type Move struct {
	ID    uint64       `json:"id"`
	Token uint64       `json:"token"`
	Start uint64       `json:"start"`
	From  ring.GroupID `json:"from"`
	To    ring.GroupID `json:"to"`
	Ring  uint64       `json:"ring"`
	// Abort, when set, is the id under which the move is being undone
	// (MarkAbort): the ring is not switched, the target's copy is
	// dropped and the source's fence lifted.
	Abort uint64 `json:"abort,omitempty"`
}

// Range is the hash range the move takes.
func (m Move) Range() ring.Range { return ring.Range{Start: m.Start, End: m.Token} }

func (m Move) String() string {
	return fmt.Sprintf("move %x: %v %v->%v (ring v%d)", m.ID, m.Range(), m.From, m.To, m.Ring)
}

func (m Move) validate() error {
	if m.ID == 0 || m.From == 0 || m.To == 0 || m.From == m.To || m.Ring == 0 || m.Abort == m.ID {
		return fmt.Errorf("%w: %+v", ErrBadRecord, m)
	}
	return nil
}

// Errors of move planning.
var (
	ErrNoSuchToken = errors.New("cm: no such token on the ring")
	ErrSameOwner   = errors.New("cm: the range already belongs to that group")
	// ErrMoveConflict: the stored ring is neither the one a move started
	// from nor the one it produces; the move cannot go on.
	ErrMoveConflict = errors.New("cm: the ring changed under a pending move")
	// ErrMovePending: another move is recorded; finish it first.
	ErrMovePending = errors.New("cm: another range move is pending")
)

// PlanMove plans moving the range ending at token from its owner on r to
// group to. id names the move (nonzero, unique).
func PlanMove(r *ring.Ring, token uint64, to ring.GroupID, id uint64) (Move, error) {
	if to == 0 {
		return Move{}, ring.ErrZeroGroup
	}
	i := slices.IndexFunc(r.Tokens(), func(t ring.Token) bool { return t.Token == token })
	if i < 0 {
		return Move{}, fmt.Errorf("%w: %#x", ErrNoSuchToken, token)
	}
	rg, from := r.RangeOfHash(token)
	if from == to {
		return Move{}, fmt.Errorf("%w: %#x is %v's", ErrSameOwner, token, to)
	}
	return Move{ID: id, Token: token, Start: rg.Start, From: from, To: to, Ring: r.Version() + 1}, nil
}

// MoveStep is what a move still has to do, given the stored ring.
type MoveStep int

const (
	// StepCopy: the ring still gives the range to From. Fence it in
	// From, copy it to To, seal To, then switch the ring.
	StepCopy MoveStep = iota + 1
	// StepDrop: the ring gives the range to To. Drop it from From, then
	// delete the record.
	StepDrop
	// StepAbort: the move is being undone (Abort set; the ring still
	// gives the range to From). Seal the move in To (no more ingests),
	// fence and drop the range there under the Abort id, seal the move
	// in From (lifting its fence), store ring version Ring with the range
	// still From's (AbortRing: clients the fence sent to wait for that
	// version find it), then delete the record.
	StepAbort
)

func (s MoveStep) String() string {
	switch s {
	case StepCopy:
		return "copy"
	case StepDrop:
		return "drop"
	case StepAbort:
		return "abort"
	}
	return fmt.Sprintf("step(%d)", int(s))
}

// NextStep decides where a recorded move stands on the stored ring r.
func NextStep(r *ring.Ring, m Move) (MoveStep, error) {
	rg, owner := r.RangeOfHash(m.Token)
	switch {
	case m.Abort != 0 && (r.Version() == m.Ring-1 || r.Version() == m.Ring) && owner == m.From && rg == m.Range():
		// Ring m.Ring may already be stored with the range unmoved
		// (AbortRing).
		return StepAbort, nil
	case m.Abort != 0:
	case r.Version() >= m.Ring && owner == m.To && rg.End == m.Token:
		return StepDrop, nil
	case r.Version() == m.Ring-1 && owner == m.From && rg == m.Range():
		return StepCopy, nil
	}
	return 0, fmt.Errorf("%w: %v, stored %v", ErrMoveConflict, m, r)
}

// ErrCannotAbort: the move's ring switch has committed; it can only be
// finished (or moved back by another move).
var ErrCannotAbort = errors.New("cm: the move has switched the ring; resume it instead")

// MoveTarget is the ring m produces from r (r must stand at StepCopy).
func MoveTarget(r *ring.Ring, m Move) (*ring.Ring, error) {
	if st, err := NextStep(r, m); err != nil || st != StepCopy {
		return nil, fmt.Errorf("%w: %v from %v", ErrMoveConflict, m, r)
	}
	ts := r.Tokens()
	for i := range ts {
		if ts[i].Token == m.Token {
			ts[i].Group = m.To
		}
	}
	return ring.New(m.Ring, ts)
}

// PlanRemoval picks the next range to move off g, to retire it: g's first
// token, to the other group holding the fewest tokens (the lowest id on a
// tie). ok is false once g holds no tokens.
func PlanRemoval(r *ring.Ring, g ring.GroupID) (token uint64, to ring.GroupID, ok bool, err error) {
	count := map[ring.GroupID]int{}
	for _, t := range r.Tokens() {
		count[t.Group]++
		if t.Group == g && !ok {
			token, ok = t.Token, true
		}
	}
	if !ok {
		return 0, 0, false, nil
	}
	for h, n := range count {
		if h == g {
			continue
		}
		if to == 0 || n < count[to] || n == count[to] && h < to {
			to = h
		}
	}
	if to == 0 {
		return 0, 0, false, ring.ErrLastGroup
	}
	return token, to, true, nil
}
