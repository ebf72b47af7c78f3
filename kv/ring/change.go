package ring

import (
	"cmp"
	"fmt"
	"slices"
)

// Move is one range changing owner between two rings: every hash in Range
// belonged to From and belongs to To.
type Move struct {
	Range Range
	From  GroupID
	To    GroupID
}

func (m Move) String() string { return fmt.Sprintf("%v %v->%v", m.Range, m.From, m.To) }

// AddGroup returns a ring one version newer in which g also holds tokens,
// and the moves that take g's new ranges from their previous owners. Each
// new token t takes the range (p, t], p its predecessor on the new ring,
// from the group that held the first old token after t. Adjacent moves
// between the same pair of groups are merged.
func (r *Ring) AddGroup(g GroupID, tokens []uint64) (*Ring, []Move, error) {
	if g == 0 {
		return nil, nil, ErrZeroGroup
	}
	if r.Has(g) {
		return nil, nil, fmt.Errorf("%w: %v", ErrGroupExists, g)
	}
	if len(tokens) == 0 {
		return nil, nil, ErrNoTokens
	}
	ts := r.Tokens()
	for _, t := range tokens {
		ts = append(ts, Token{Token: t, Group: g})
	}
	next, err := New(r.version+1, ts)
	if err != nil {
		return nil, nil, err
	}
	return next, Diff(r, next), nil
}

// AddGroupSeeded is AddGroup with n tokens chosen by SeededTokens.
func (r *Ring) AddGroupSeeded(g GroupID, n int, seed uint64) (*Ring, []Move, error) {
	taken := make(map[uint64]bool, len(r.tokens))
	for _, t := range r.tokens {
		taken[t.Token] = true
	}
	return r.AddGroup(g, SeededTokens(g, n, seed, taken))
}

// RemoveGroup returns a ring one version newer without g, and the moves
// that hand each of g's ranges to the group holding the next token after
// it on the new ring.
func (r *Ring) RemoveGroup(g GroupID) (*Ring, []Move, error) {
	if !r.Has(g) {
		return nil, nil, fmt.Errorf("%w: %v", ErrNoSuchGroup, g)
	}
	var ts []Token
	for _, t := range r.tokens {
		if t.Group != g {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return nil, nil, ErrLastGroup
	}
	next, err := New(r.version+1, ts)
	if err != nil {
		return nil, nil, err
	}
	return next, Diff(r, next), nil
}

// Diff lists the ranges whose owner differs between a and b, in ring
// order starting after the smallest token of either ring, with adjacent
// ranges between the same pair of groups merged. Both rings must be
// non-empty.
func Diff(a, b *Ring) []Move {
	if a.Len() == 0 || b.Len() == 0 {
		return nil
	}
	// The union of both rings' tokens cuts the circle into arcs on each of
	// which both rings have a single owner: the owner of the arc's end.
	cuts := make([]uint64, 0, a.Len()+b.Len())
	for _, t := range a.tokens {
		cuts = append(cuts, t.Token)
	}
	for _, t := range b.tokens {
		cuts = append(cuts, t.Token)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var moves []Move
	for i, end := range cuts {
		start := cuts[(i+len(cuts)-1)%len(cuts)]
		from, to := a.OwnerOfHash(end), b.OwnerOfHash(end)
		if from == to {
			continue
		}
		if n := len(moves); n > 0 && moves[n-1].Range.End == start && moves[n-1].From == from && moves[n-1].To == to {
			moves[n-1].Range.End = end
			continue
		}
		moves = append(moves, Move{Range: Range{Start: start, End: end}, From: from, To: to})
	}
	// The last move may continue into the first across the wrap.
	if n := len(moves); n > 1 && moves[n-1].Range.End == moves[0].Range.Start &&
		moves[n-1].From == moves[0].From && moves[n-1].To == moves[0].To {
		moves[0].Range.Start = moves[n-1].Range.Start
		moves = moves[:n-1]
	}
	return moves
}

// Batch is the part of a multi-key request one group serves: the indexes
// into the caller's key slice, in their original order.
type Batch struct {
	Group   GroupID
	Indexes []int
}

// Split groups keys by owner for a multi-get, one Batch per group in
// ascending group order. On an empty ring it returns nil.
func (r *Ring) Split(keys [][]byte) []Batch {
	if r == nil || len(r.tokens) == 0 {
		return nil
	}
	pos := make(map[GroupID]int)
	var out []Batch
	for i, k := range keys {
		g := r.Owner(k)
		j, ok := pos[g]
		if !ok {
			j = len(out)
			pos[g] = j
			out = append(out, Batch{Group: g})
		}
		out[j].Indexes = append(out[j].Indexes, i)
	}
	slices.SortFunc(out, func(a, b Batch) int { return cmp.Compare(a.Group, b.Group) })
	return out
}

// BisectTokens picks n new tokens that each halve the largest range at
// the time of picking (the new tokens included), so that a group added
// with them takes its ranges from the most loaded ones. Ties go to the
// range earliest in ring order. It returns nil on an empty ring or when
// no range can be halved any more.
func (r *Ring) BisectTokens(n int) []uint64 {
	if r.Len() == 0 || n <= 0 || n > MaxTokens {
		return nil
	}
	pts := make([]uint64, 0, r.Len()+n)
	for _, t := range r.tokens {
		pts = append(pts, t.Token)
	}
	var out []uint64
	for range n {
		// The largest range (prev, pts[i]]; a single point owns all 2^64.
		best, bestSize, full := -1, uint64(0), len(pts) == 1
		for i := range pts {
			size := pts[i] - pts[(i+len(pts)-1)%len(pts)]
			if best < 0 || size > bestSize {
				best, bestSize = i, size
			}
		}
		if !full && bestSize < 2 {
			return out // nothing left to halve
		}
		start := pts[(best+len(pts)-1)%len(pts)]
		half := bestSize / 2
		if full {
			half = 1 << 63
		}
		mid := start + half
		out = append(out, mid)
		pts = append(pts, mid)
		slices.Sort(pts)
	}
	return out
}
