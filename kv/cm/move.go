package cm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/wire"
)

// The pending move lives in <root>/move, {"v":1, ...Move}; at most one
// move runs at a time. Views ignore the znode: clients learn a move only
// from the ring switch (and from the source's WrongRange answers).

func (l layout) movePath() string { return l.root + "/move" }

type moveRecord struct {
	V int `json:"v"`
	Move
}

func encodeMove(m Move) []byte {
	b, _ := json.Marshal(moveRecord{V: recordV1, Move: m}) // plain fields: cannot fail
	return b
}

func decodeMove(b []byte) (Move, error) {
	var r moveRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return Move{}, fmt.Errorf("%w: move: %v", ErrBadRecord, err)
	}
	if r.V != recordV1 {
		return Move{}, fmt.Errorf("%w: move record version %d", ErrBadRecord, r.V)
	}
	if err := r.Move.validate(); err != nil {
		return Move{}, err
	}
	return r.Move, nil
}

// PendingMove reads the recorded move, if any.
func (s *Store) PendingMove(ctx context.Context) (Move, bool, error) {
	b, _, err := s.c.Get(ctx, s.l.movePath())
	if errors.Is(err, wire.CodeNoNode) {
		return Move{}, false, nil
	}
	if err != nil {
		return Move{}, false, fmt.Errorf("cm: read move: %w", err)
	}
	m, err := decodeMove(b)
	return m, err == nil, err
}

// BeginMove records m as the pending move. It fails with ErrMovePending
// if another move is recorded, and with ErrMoveConflict unless the
// stored ring is the one m starts from (both checked in one multi with
// the create, so neither can change in between).
func (s *Store) BeginMove(ctx context.Context, m Move) error {
	if err := m.validate(); err != nil {
		return err
	}
	for range maxAttempts {
		r, st, err := s.ringStat(ctx)
		if err != nil {
			return err
		}
		if step, err := NextStep(r, m); err != nil || step != StepCopy {
			return fmt.Errorf("%w: %v on %v", ErrMoveConflict, m, r)
		}
		_, err = s.c.Multi(ctx,
			client.CheckOp(s.l.ringPath(), st.Version),
			client.CreateOp(s.l.movePath(), encodeMove(m), openACL, client.ModePersistent))
		switch {
		case err == nil:
			return nil
		case errors.Is(err, wire.CodeNodeExists):
			cur, ok, rerr := s.PendingMove(ctx)
			if rerr == nil && ok && cur == m {
				return nil // recorded already (a retried call)
			}
			return fmt.Errorf("%w: %v", ErrMovePending, cur)
		case errors.Is(err, wire.CodeBadVersion):
			continue
		}
		return fmt.Errorf("cm: record move: %w", err)
	}
	return errors.New("cm: record move: too much contention")
}

// SwitchRing stores the ring m produces, unless it is stored already.
// It is the move's commit point: from it on the range is To's. The ring
// write is a multi that also checks m is still the recorded move, so a
// move whose record is gone (finished or removed by another mover) never
// switches.
func (s *Store) SwitchRing(ctx context.Context, m Move) (*ring.Ring, error) {
	for range maxAttempts {
		r, st, err := s.ringStat(ctx)
		if err != nil {
			return nil, err
		}
		step, err := NextStep(r, m)
		if err != nil || step == StepDrop {
			return r, err
		}
		b, mst, err := s.c.Get(ctx, s.l.movePath())
		if errors.Is(err, wire.CodeNoNode) {
			return nil, fmt.Errorf("%w: %v is no longer recorded", ErrMoveConflict, m)
		}
		if err != nil {
			return nil, fmt.Errorf("cm: read move: %w", err)
		}
		if cur, err := decodeMove(b); err != nil || cur != m {
			return nil, fmt.Errorf("%w: %v is no longer recorded", ErrMoveConflict, m)
		}
		nr, err := MoveTarget(r, m)
		if err != nil {
			return nil, err
		}
		ops := []client.Op{client.SetDataOp(s.l.ringPath(), nr.Encode(), st.Version), client.CheckOp(s.l.movePath(), mst.Version)}
		ops = append(ops, s.registeredChecks(nr)...)
		res, err := s.c.Multi(ctx, ops...)
		if err == nil {
			return nr, nil
		}
		if len(res) > 1 && (errors.Is(res[0].Err, wire.CodeBadVersion) || errors.Is(res[1].Err, wire.CodeBadVersion) || errors.Is(res[1].Err, wire.CodeNoNode)) {
			continue // the ring or the record changed since read: decide again
		}
		return nil, s.ringMultiErr(nr, res, err, errors.New("cm: ring switch"))
	}
	return nil, errors.New("cm: ring switch: too much contention")
}

// EndMove deletes the record of move id (nothing if another is recorded
// or none is).
func (s *Store) EndMove(ctx context.Context, id uint64) error {
	for range maxAttempts {
		b, st, err := s.c.Get(ctx, s.l.movePath())
		if errors.Is(err, wire.CodeNoNode) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cm: read move: %w", err)
		}
		if m, err := decodeMove(b); err == nil && m.ID != id {
			return nil
		}
		err = s.c.Delete(ctx, s.l.movePath(), st.Version)
		switch {
		case err == nil, errors.Is(err, wire.CodeNoNode):
			return nil
		case errors.Is(err, wire.CodeBadVersion):
			continue
		}
		return fmt.Errorf("cm: end move: %w", err)
	}
	return errors.New("cm: end move: too much contention")
}

// MarkAbort marks the recorded move m to be undone under id abort: the
// record is rewritten with Abort set, in a multi with a check of the
// ring version it starts from, so it happens only before the switch (and
// after it, SwitchRing of the unmarked move fails: the record differs).
// It returns the marked move; one already marked is returned as it is.
func (s *Store) MarkAbort(ctx context.Context, m Move, abort uint64) (Move, error) {
	for range maxAttempts {
		r, rst, err := s.ringStat(ctx)
		if err != nil {
			return Move{}, err
		}
		b, mst, err := s.c.Get(ctx, s.l.movePath())
		if errors.Is(err, wire.CodeNoNode) {
			return Move{}, fmt.Errorf("%w: %v is no longer recorded", ErrMoveConflict, m)
		}
		if err != nil {
			return Move{}, fmt.Errorf("cm: read move: %w", err)
		}
		cur, err := decodeMove(b)
		if err != nil {
			return Move{}, err
		}
		if cur.ID != m.ID {
			return Move{}, fmt.Errorf("%w: %v is no longer recorded", ErrMoveConflict, m)
		}
		if cur.Abort != 0 {
			return cur, nil
		}
		step, err := NextStep(r, cur)
		if err != nil {
			return Move{}, err
		}
		if step != StepCopy {
			return Move{}, fmt.Errorf("%w: %v", ErrCannotAbort, cur)
		}
		marked := cur
		marked.Abort = abort
		_, err = s.c.Multi(ctx,
			client.CheckOp(s.l.ringPath(), rst.Version),
			client.SetDataOp(s.l.movePath(), encodeMove(marked), mst.Version))
		switch {
		case err == nil:
			return marked, nil
		case errors.Is(err, wire.CodeBadVersion):
			continue
		}
		return Move{}, fmt.Errorf("cm: mark move aborted: %w", err)
	}
	return Move{}, errors.New("cm: mark move aborted: too much contention")
}

var errRingStored = errors.New("cm: ring already stored")

// AbortRing stores, for an aborted move, ring version m.Ring holding the
// same tokens as the ring the move started from. The source's fence told
// clients to wait for that version; with it they find the range where it
// was. Nothing is written once the ring is at m.Ring or newer.
func (s *Store) AbortRing(ctx context.Context, m Move) error {
	_, err := s.UpdateRing(ctx, func(cur *ring.Ring) (*ring.Ring, error) {
		if cur.Version() >= m.Ring {
			return nil, errRingStored
		}
		if step, err := NextStep(cur, m); err != nil || step != StepAbort {
			return nil, fmt.Errorf("%w: aborting %v on %v", ErrMoveConflict, m, cur)
		}
		return ring.New(m.Ring, cur.Tokens())
	})
	if errors.Is(err, errRingStored) {
		return nil
	}
	return err
}
