package ring

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

var seeds = flag.Int("seeds", 200, "random rings per property test")

// randomRing builds a ring of 1..6 groups holding 1..5 tokens each. Tokens
// are drawn either over the whole space or from a tiny window near 0 or
// the top, so that wrap-around and adjacent tokens are common.
func randomRing(rng *rand.Rand) *Ring {
	ngroups := 1 + rng.IntN(6)
	used := map[uint64]bool{}
	var ts []Token
	for g := 1; g <= ngroups; g++ {
		for n := 1 + rng.IntN(5); n > 0; {
			t := randomPoint(rng)
			if used[t] {
				continue
			}
			used[t] = true
			ts = append(ts, Token{Token: t, Group: GroupID(g * 10)})
			n--
		}
	}
	r, err := New(rng.Uint64N(100), ts)
	if err != nil {
		panic(err)
	}
	return r
}

func randomPoint(rng *rand.Rand) uint64 {
	switch rng.IntN(3) {
	case 0:
		return rng.Uint64N(16)
	case 1:
		return math.MaxUint64 - rng.Uint64N(16)
	}
	return rng.Uint64()
}

// probes are the hashes worth checking on r: every token and its
// neighbours, both ends of the space, and random points.
func probes(rng *rand.Rand, rings ...*Ring) []uint64 {
	ps := []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1, 1 << 63}
	for _, r := range rings {
		for _, t := range r.tokens {
			ps = append(ps, t.Token-1, t.Token, t.Token+1)
		}
	}
	for i := 0; i < 64; i++ {
		ps = append(ps, randomPoint(rng))
	}
	return ps
}

// bruteOwner is the definition: the holder of the smallest token >= h,
// else of the smallest token.
func bruteOwner(r *Ring, h uint64) GroupID {
	best, min := -1, -1
	for i, t := range r.tokens {
		if min < 0 || t.Token < r.tokens[min].Token {
			min = i
		}
		if t.Token >= h && (best < 0 || t.Token < r.tokens[best].Token) {
			best = i
		}
	}
	if best < 0 {
		best = min
	}
	return r.tokens[best].Group
}

func newRNG(_ testing.TB, i int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(i), 0x72696e67))
}

func TestHashIsXXH64(t *testing.T) {
	// XXH64 reference vectors (seed 0): the placement contract.
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"abc", 0x44bc2cf5ad770999},
	} {
		if got := Hash([]byte(c.in)); got != c.want {
			t.Errorf("Hash(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

func TestOwnerMatchesDefinition(t *testing.T) {
	for i := 0; i < *seeds; i++ {
		rng := newRNG(t, i)
		r := randomRing(rng)
		for _, h := range probes(rng, r) {
			want := bruteOwner(r, h)
			if got := r.OwnerOfHash(h); got != want {
				t.Fatalf("seed %d: %v\nOwnerOfHash(%#x) = %v, want %v", i, r, h, got, want)
			}
			rg, g := r.RangeOfHash(h)
			if g != want || !rg.Contains(h) {
				t.Fatalf("seed %d: %v\nRangeOfHash(%#x) = %v %v, want a range of %v containing it", i, r, h, rg, g, want)
			}
		}
	}
}

func TestRangesPartitionRing(t *testing.T) {
	for i := 0; i < *seeds; i++ {
		rng := newRNG(t, i)
		r := randomRing(rng)
		type owned struct {
			Range
			g GroupID
		}
		var all []owned
		for _, g := range r.Groups() {
			for _, rg := range r.Ranges(g) {
				all = append(all, owned{rg, g})
			}
		}
		// Every probe lies in exactly one range, and that range's group
		// owns it.
		for _, h := range probes(rng, r) {
			n := 0
			for _, o := range all {
				if o.Contains(h) {
					n++
					if o.g != r.OwnerOfHash(h) {
						t.Fatalf("seed %d: %v\n%#x in %v of %v, owner %v", i, r, h, o.Range, o.g, r.OwnerOfHash(h))
					}
				}
			}
			if n != 1 {
				t.Fatalf("seed %d: %v\n%#x lies in %d ranges %v", i, r, h, n, all)
			}
		}
		// The ranges tile the circle: sizes add up to 2^64, which is 0 in
		// uint64 arithmetic, unless one range is the whole ring.
		var sum uint64
		for _, o := range all {
			sum += o.Size()
		}
		if sum != 0 {
			t.Fatalf("seed %d: %v\nrange sizes add up to %#x, want 2^64: %v", i, r, sum, all)
		}
		if len(r.Groups()) == 1 && (len(all) != 1 || !all[0].Full()) {
			t.Fatalf("seed %d: a single group should own the whole ring, got %v", i, all)
		}
		// A group's merged ranges never touch each other.
		for _, g := range r.Groups() {
			rs := r.Ranges(g)
			for a := range rs {
				for b := range rs {
					if a != b && rs[a].End == rs[b].Start {
						t.Fatalf("seed %d: %v: ranges of %v not merged: %v", i, r, g, rs)
					}
				}
			}
		}
	}
}

// checkMoves asserts that the moves between a and b are exactly the
// changes of owner, and that they do not overlap.
func checkMoves(t *testing.T, seed int, rng *rand.Rand, a, b *Ring, moves []Move) {
	t.Helper()
	for _, h := range probes(rng, a, b) {
		var in []Move
		for _, m := range moves {
			if m.Range.Contains(h) {
				in = append(in, m)
			}
		}
		from, to := a.OwnerOfHash(h), b.OwnerOfHash(h)
		switch {
		case len(in) > 1:
			t.Fatalf("seed %d: %#x in %d moves %v", seed, h, len(in), in)
		case from == to && len(in) == 1:
			t.Fatalf("seed %d: %v -> %v\n%#x stays with %v but is in move %v", seed, a, b, h, from, in[0])
		case from != to && len(in) == 0:
			t.Fatalf("seed %d: %v -> %v\n%#x goes %v->%v but no move reports it: %v", seed, a, b, h, from, to, moves)
		case from != to && (in[0].From != from || in[0].To != to):
			t.Fatalf("seed %d: %#x goes %v->%v, move says %v", seed, h, from, to, in[0])
		}
	}
}

func TestAddGroupMovesOnlyReportedRanges(t *testing.T) {
	for i := 0; i < *seeds; i++ {
		rng := newRNG(t, i)
		r := randomRing(rng)
		var toks []uint64
		for n := 1 + rng.IntN(4); len(toks) < n; {
			p := randomPoint(rng)
			if !r.hasToken(p) && !slices.Contains(toks, p) {
				toks = append(toks, p)
			}
		}
		next, moves, err := r.AddGroup(99, toks)
		if err != nil {
			t.Fatalf("seed %d: AddGroup: %v", i, err)
		}
		if next.Version() != r.Version()+1 {
			t.Fatalf("seed %d: version %d after %d", i, next.Version(), r.Version())
		}
		if len(moves) == 0 {
			t.Fatalf("seed %d: adding a group moved nothing", i)
		}
		for _, m := range moves {
			if m.To != 99 {
				t.Fatalf("seed %d: move %v not to the new group", i, m)
			}
		}
		checkMoves(t, i, rng, r, next, moves)
		if got, want := next.Ranges(99), mergedRanges(moves); !slices.Equal(got, want) {
			t.Fatalf("seed %d: new group owns %v, moves gave it %v", i, got, want)
		}
		// Removing it again restores the old placement, moving back the
		// same ranges.
		back, moves2, err := next.RemoveGroup(99)
		if err != nil {
			t.Fatalf("seed %d: RemoveGroup: %v", i, err)
		}
		if !slices.Equal(back.tokens, r.tokens) {
			t.Fatalf("seed %d: add then remove: %v, want %v", i, back, r)
		}
		checkMoves(t, i, rng, next, back, moves2)
		if len(moves2) != len(moves) {
			t.Fatalf("seed %d: removal moves %v, addition moved %v", i, moves2, moves)
		}
		for k := range moves {
			if moves2[k].Range != moves[k].Range || moves2[k].From != moves[k].To || moves2[k].To != moves[k].From {
				t.Fatalf("seed %d: removal moves %v, addition moved %v", i, moves2, moves)
			}
		}
	}
}

func (r *Ring) hasToken(t uint64) bool {
	for _, x := range r.tokens {
		if x.Token == t {
			return true
		}
	}
	return false
}

// mergedRanges is the ranges of moves in ring order, touching ones joined,
// as Ranges reports them.
func mergedRanges(moves []Move) []Range {
	var out []Range
	for _, m := range moves {
		if n := len(out); n > 0 && out[n-1].End == m.Range.Start {
			out[n-1].End = m.Range.End
			continue
		}
		out = append(out, m.Range)
	}
	if n := len(out); n > 1 && out[n-1].End == out[0].Start {
		out[0].Start = out[n-1].Start
		out = out[:n-1]
	}
	return out
}

func TestRemoveGroupMovesOnlyReportedRanges(t *testing.T) {
	for i := 0; i < *seeds; i++ {
		rng := newRNG(t, i)
		r := randomRing(rng)
		gs := r.Groups()
		g := gs[rng.IntN(len(gs))]
		next, moves, err := r.RemoveGroup(g)
		if len(gs) == 1 {
			if !errors.Is(err, ErrLastGroup) {
				t.Fatalf("seed %d: removing the only group: %v, want ErrLastGroup", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("seed %d: RemoveGroup: %v", i, err)
		}
		if next.Has(g) || next.Version() != r.Version()+1 {
			t.Fatalf("seed %d: after removing %v: %v", i, g, next)
		}
		for _, m := range moves {
			if m.From != g {
				t.Fatalf("seed %d: move %v not from the removed group", i, m)
			}
		}
		if got, want := mergedRanges(moves), r.Ranges(g); !slices.Equal(got, want) {
			t.Fatalf("seed %d: moves %v, group owned %v", i, moves, want)
		}
		checkMoves(t, i, rng, r, next, moves)
	}
}

func TestAddGroupSeededIsDeterministic(t *testing.T) {
	r, err := Build([]GroupID{1, 2, 3}, 4, 7)
	if err != nil {
		t.Fatal(err)
	}
	a, ma, err := r.AddGroupSeeded(4, 4, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, mb, err := r.AddGroupSeeded(4, 4, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Encode(), b.Encode()) || !slices.Equal(ma, mb) {
		t.Fatalf("AddGroupSeeded not deterministic: %v vs %v", a, b)
	}
	// Build with all four groups places group 4 at the same tokens.
	whole, err := Build([]GroupID{4, 3, 2, 1}, 4, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(whole.tokens, a.tokens) {
		t.Fatalf("Build(1..4) = %v, Build(1..3)+AddGroupSeeded(4) = %v", whole, a)
	}
}

func TestBuild(t *testing.T) {
	a, err := Build([]GroupID{3, 1, 2}, 8, 42)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build([]GroupID{1, 2, 3}, 8, 42)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Encode(), b.Encode()) {
		t.Fatalf("group order changed the ring: %v vs %v", a, b)
	}
	c, err := Build([]GroupID{1, 2, 3}, 8, 43)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Encode(), c.Encode()) {
		t.Fatal("a different seed built the same ring")
	}
	if a.Len() != 24 || a.Version() != 1 || !slices.Equal(a.Groups(), []GroupID{1, 2, 3}) {
		t.Fatalf("Build: %v", a)
	}
	for _, g := range a.Groups() {
		n := 0
		for _, tk := range a.tokens {
			if tk.Group == g {
				n++
			}
		}
		if n != 8 {
			t.Fatalf("%v holds %d tokens, want 8", g, n)
		}
	}
	for _, c := range []struct {
		groups []GroupID
		per    int
		want   error
	}{
		{nil, 1, ErrNoTokens},
		{[]GroupID{1}, 0, ErrNoTokens},
		{[]GroupID{0}, 1, ErrZeroGroup},
		{[]GroupID{1, 1}, 1, ErrGroupExists},
		{[]GroupID{1, 2}, MaxTokens, ErrTooManyTokens},
	} {
		if _, err := Build(c.groups, c.per, 1); !errors.Is(err, c.want) {
			t.Errorf("Build(%v, %d): %v, want %v", c.groups, c.per, err, c.want)
		}
	}
}

func TestNewRejectsBadTokens(t *testing.T) {
	for _, c := range []struct {
		ts   []Token
		want error
	}{
		{nil, ErrNoTokens},
		{[]Token{{5, 0}}, ErrZeroGroup},
		{[]Token{{5, 1}, {5, 2}}, ErrDuplicateToken},
	} {
		if _, err := New(1, c.ts); !errors.Is(err, c.want) {
			t.Errorf("New(%v): %v, want %v", c.ts, err, c.want)
		}
	}
	r, _ := New(1, []Token{{5, 1}, {9, 2}})
	if _, _, err := r.AddGroup(1, []uint64{7}); !errors.Is(err, ErrGroupExists) {
		t.Errorf("AddGroup of a present group: %v", err)
	}
	if _, _, err := r.AddGroup(3, []uint64{9}); !errors.Is(err, ErrDuplicateToken) {
		t.Errorf("AddGroup on a held token: %v", err)
	}
	if _, _, err := r.AddGroup(3, nil); !errors.Is(err, ErrNoTokens) {
		t.Errorf("AddGroup with no tokens: %v", err)
	}
	if _, _, err := r.AddGroupSeeded(3, 1<<40, 1); !errors.Is(err, ErrNoTokens) {
		t.Errorf("AddGroupSeeded with absurdly many tokens: %v", err)
	}
	if _, _, err := r.RemoveGroup(3); !errors.Is(err, ErrNoSuchGroup) {
		t.Errorf("RemoveGroup of an absent group: %v", err)
	}
}

func TestEmptyRing(t *testing.T) {
	var r Ring
	if g := r.Owner([]byte("k")); g != 0 {
		t.Fatalf("empty ring owner %v", g)
	}
	if b := r.Split([][]byte{[]byte("k")}); b != nil {
		t.Fatalf("empty ring split %v", b)
	}
}

func TestSplit(t *testing.T) {
	r, err := Build([]GroupID{1, 2, 3, 4}, 4, 9)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, 200)
	for i := range keys {
		keys[i] = []byte{byte(rng.Uint32()), byte(rng.Uint32()), byte(i)}
	}
	batches := r.Split(keys)
	seen := make([]int, len(keys))
	for bi, b := range batches {
		if bi > 0 && batches[bi-1].Group >= b.Group {
			t.Fatalf("batches not in group order: %v", batches)
		}
		if !slices.IsSorted(b.Indexes) {
			t.Fatalf("batch %v lost the keys' order", b)
		}
		for _, i := range b.Indexes {
			seen[i]++
			if r.Owner(keys[i]) != b.Group {
				t.Fatalf("key %d in batch of %v, owned by %v", i, b.Group, r.Owner(keys[i]))
			}
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("key %d in %d batches", i, n)
		}
	}
}

func TestBisectTokens(t *testing.T) {
	one, _ := New(1, []Token{{100, 1}})
	if got := one.BisectTokens(1); !slices.Equal(got, []uint64{100 + 1<<63}) {
		t.Fatalf("bisect a single-token ring: %#x", got)
	}
	// Four groups added by bisection to a one-token ring split it evenly.
	r := one
	for g := GroupID(2); g <= 4; g++ {
		next, moves, err := r.AddGroup(g, r.BisectTokens(1))
		if err != nil {
			t.Fatal(err)
		}
		if len(moves) != 1 {
			t.Fatalf("adding %v: moves %v", g, moves)
		}
		r = next
	}
	for _, g := range r.Groups() {
		rs := r.Ranges(g)
		if len(rs) != 1 || rs[0].Size() != 1<<62 {
			t.Fatalf("%v owns %v, want a quarter of the ring: %v", g, rs, r)
		}
	}
	for i := 0; i < *seeds; i++ {
		rng := newRNG(t, i)
		r := randomRing(rng)
		n := 1 + rng.IntN(4)
		toks := r.BisectTokens(n)
		// Every pick halves the largest range available at its turn, so
		// the new group's tokens are distinct and new.
		if len(toks) == 0 {
			continue // a ring of adjacent tokens has nothing to halve
		}
		if _, _, err := r.AddGroup(99, toks); err != nil {
			t.Fatalf("seed %d: %v: bisected tokens %#x: %v", i, r, toks, err)
		}
		if r.Len() == 1 {
			continue // the whole ring: covered above
		}
		var largest uint64
		for _, tk := range r.tokens {
			rg, _ := r.RangeOfHash(tk.Token)
			largest = max(largest, rg.Size())
		}
		if rg, _ := r.RangeOfHash(toks[0]); rg.Size() != largest {
			t.Fatalf("seed %d: %v: first pick %#x not in a largest range", i, r, toks[0])
		}
	}
}
