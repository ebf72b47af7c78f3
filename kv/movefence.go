package kv

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/corral-db/corral/kv/ring"
)

// Fence is one hash interval a range move has taken away from this RG:
// rows hashing into [Lo, Hi] are refused (WrongRange naming To at
// RingVersion) from the fence's entry on, until a later move brings the
// interval back (OpSeal of a move into this RG lifts it).
type Fence struct {
	Lo, Hi      uint64 // inclusive hash bounds
	Move        uint64 // the move that fenced it
	To          uint32 // the RG the range moves to
	RingVersion uint64 // the ring version that gives it to To
}

// fenceSet is a sorted list of disjoint fences. It is immutable once
// published: add and lift return new sets.
type fenceSet []Fence

// maxFences bounds the fence set (a ring has at most 65,536 tokens, and a
// range splits into at most two spans).
const maxFences = 1 << 17

// spans returns a ring range as at most two inclusive hash intervals.
func spans(r ring.Range) [][2]uint64 {
	if r.Start < r.End {
		return [][2]uint64{{r.Start + 1, r.End}}
	}
	// Wrapping, or the whole ring when Start == End.
	var out [][2]uint64
	if r.Start != math.MaxUint64 {
		out = append(out, [2]uint64{r.Start + 1, math.MaxUint64})
	}
	return append(out, [2]uint64{0, r.End})
}

// find returns the fence holding hash h.
func (fs fenceSet) find(h uint64) (Fence, bool) {
	i, _ := slices.BinarySearchFunc(fs, h, func(f Fence, h uint64) int {
		switch {
		case f.Hi < h:
			return -1
		case f.Lo > h:
			return 1
		}
		return 0
	})
	if i < len(fs) && fs[i].Lo <= h && h <= fs[i].Hi {
		return fs[i], true
	}
	return Fence{}, false
}

// covers reports whether every hash of r is fenced by move.
func (fs fenceSet) covers(r ring.Range, move uint64) bool {
	for _, sp := range spans(r) {
		h := sp[0]
		for {
			f, ok := fs.find(h)
			if !ok || f.Move != move {
				return false
			}
			if f.Hi >= sp[1] {
				break
			}
			h = f.Hi + 1
		}
	}
	return true
}

// lift returns fs without any part of r.
func (fs fenceSet) lift(r ring.Range) fenceSet {
	out := fenceSet(slices.Clone(fs))
	for _, sp := range spans(r) {
		var next fenceSet
		for _, f := range out {
			if f.Hi < sp[0] || f.Lo > sp[1] {
				next = append(next, f)
				continue
			}
			if f.Lo < sp[0] {
				g := f
				g.Hi = sp[0] - 1
				next = append(next, g)
			}
			if f.Hi > sp[1] {
				g := f
				g.Lo = sp[1] + 1
				next = append(next, g)
			}
		}
		out = next
	}
	return out
}

// add returns fs with r fenced by f's move (f's bounds are ignored),
// replacing whatever fenced any part of r before.
func (fs fenceSet) add(r ring.Range, f Fence) (fenceSet, error) {
	out := fs.lift(r)
	for _, sp := range spans(r) {
		g := f
		g.Lo, g.Hi = sp[0], sp[1]
		out = append(out, g)
	}
	if len(out) > maxFences {
		return nil, fmt.Errorf("kv: %d fences exceed %d", len(out), maxFences)
	}
	slices.SortFunc(out, func(a, b Fence) int {
		switch {
		case a.Lo < b.Lo:
			return -1
		case a.Lo > b.Lo:
			return 1
		}
		return 0
	})
	return out, nil
}

const fenceLen = 8 + 8 + 8 + 4 + 8

func (fs fenceSet) encode() []byte {
	b := make([]byte, 0, 4+len(fs)*fenceLen)
	b = binary.BigEndian.AppendUint32(b, uint32(len(fs)))
	for _, f := range fs {
		b = binary.BigEndian.AppendUint64(b, f.Lo)
		b = binary.BigEndian.AppendUint64(b, f.Hi)
		b = binary.BigEndian.AppendUint64(b, f.Move)
		b = binary.BigEndian.AppendUint32(b, f.To)
		b = binary.BigEndian.AppendUint64(b, f.RingVersion)
	}
	return b
}

func decodeFences(b []byte) (fenceSet, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("kv: fence set of %d bytes", len(b))
	}
	n := binary.BigEndian.Uint32(b)
	b = b[4:]
	if uint64(len(b)) != uint64(n)*fenceLen {
		return nil, fmt.Errorf("kv: fence set of %d fences in %d bytes", n, len(b))
	}
	fs := make(fenceSet, n)
	for i := range fs {
		fs[i] = Fence{
			Lo: binary.BigEndian.Uint64(b), Hi: binary.BigEndian.Uint64(b[8:]),
			Move: binary.BigEndian.Uint64(b[16:]), To: binary.BigEndian.Uint32(b[24:]),
			RingVersion: binary.BigEndian.Uint64(b[28:]),
		}
		if fs[i].Lo > fs[i].Hi || i > 0 && fs[i-1].Hi >= fs[i].Lo {
			return nil, fmt.Errorf("kv: fence set out of order at %d", i)
		}
		b = b[fenceLen:]
	}
	return fs, nil
}
