package server

import "testing"

// TestWatchSet: a set answers the same below and above the size where it
// turns from a slice into a map, and each removes the watchers whose
// bits it clears.
func TestWatchSet(t *testing.T) {
	cs := make([]*conn, 3*watchSetSmall)
	for i := range cs {
		cs[i] = &conn{id: uint64(i)}
	}
	for _, n := range []int{1, watchSetSmall, watchSetSmall + 1, len(cs)} {
		s := &watchSet{path: "/p"}
		for i, c := range cs[:n] {
			s.set(c, modeStandard)
			s.set(c, s.get(c)|modePersist*uint8(i%2)) // every other one persistent too
		}
		if s.len() != n {
			t.Fatalf("n=%d: len %d", n, s.len())
		}
		for i, c := range cs[:n] {
			want := modeStandard
			if i%2 == 1 {
				want |= modePersist
			}
			if got := s.get(c); got != want {
				t.Fatalf("n=%d: conn %d mode %d, want %d", n, i, got, want)
			}
		}
		// Consume the standard watches: the persistent ones stay.
		seen := 0
		s.each(func(c *conn, mode uint8) uint8 { seen++; return mode &^ modeStandard })
		if seen != n || s.len() != n/2 {
			t.Fatalf("n=%d: each saw %d, %d left, want %d", n, seen, s.len(), n/2)
		}
		for i, c := range cs[:n] {
			if got, want := s.get(c), modePersist*uint8(i%2); got != want {
				t.Fatalf("n=%d after each: conn %d mode %d, want %d", n, i, got, want)
			}
			s.set(c, 0)
		}
		if s.len() != 0 {
			t.Fatalf("n=%d: %d left after removing all", n, s.len())
		}
	}
}
