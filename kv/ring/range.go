package ring

import "fmt"

// Range is the arc (Start, End] of the ring: every hash h with Start < h <=
// End, wrapping past the top of the 64-bit space when End <= Start. When
// Start == End the range is the whole ring (a ring with a single token).
type Range struct {
	Start uint64 // exclusive
	End   uint64 // inclusive
}

// Contains reports whether hash h lies in r.
func (r Range) Contains(h uint64) bool {
	if r.Start < r.End {
		return r.Start < h && h <= r.End
	}
	// Wrapping (or whole-ring when Start == End).
	return h > r.Start || h <= r.End
}

// Size is the number of hashes in r; the whole ring (2^64) is reported as
// 0, since it does not fit in a uint64. Use Full to tell the two apart.
func (r Range) Size() uint64 { return r.End - r.Start }

// Full reports whether r is the whole ring.
func (r Range) Full() bool { return r.Start == r.End }

func (r Range) String() string { return fmt.Sprintf("(%#016x,%#016x]", r.Start, r.End) }
