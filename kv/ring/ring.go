package ring

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// GroupID names a replica group. Zero is not a group: it is what lookups on
// an empty ring return.
type GroupID uint32

func (g GroupID) String() string { return "rg" + strconv.FormatUint(uint64(g), 10) }

// Token is one point a group holds on the ring.
type Token struct {
	Token uint64
	Group GroupID
}

// MaxTokens bounds a ring's size, so that a decoded or built ring cannot ask
// for unbounded memory.
const MaxTokens = 1 << 16

// Errors returned for bad input; callers test them with errors.Is.
var (
	ErrNoTokens       = errors.New("ring: no tokens")
	ErrTooManyTokens  = fmt.Errorf("ring: more than %d tokens", MaxTokens)
	ErrZeroGroup      = errors.New("ring: group id 0 is reserved")
	ErrDuplicateToken = errors.New("ring: token held twice")
	ErrGroupExists    = errors.New("ring: group already on the ring")
	ErrNoSuchGroup    = errors.New("ring: group not on the ring")
	ErrLastGroup      = errors.New("ring: cannot remove the only group")
)

// Ring is an immutable placement of groups' tokens on the hash ring. The
// zero Ring is empty: every lookup returns group 0.
type Ring struct {
	version uint64
	tokens  []Token // sorted by Token, strictly increasing
}

// New builds a ring at the given version from explicit tokens, in any
// order. Every token must be distinct and every group nonzero.
func New(version uint64, tokens []Token) (*Ring, error) {
	if len(tokens) == 0 {
		return nil, ErrNoTokens
	}
	if len(tokens) > MaxTokens {
		return nil, ErrTooManyTokens
	}
	ts := slices.Clone(tokens)
	slices.SortFunc(ts, func(a, b Token) int { return cmp.Compare(a.Token, b.Token) })
	for i, t := range ts {
		if t.Group == 0 {
			return nil, ErrZeroGroup
		}
		if i > 0 && ts[i-1].Token == t.Token {
			return nil, fmt.Errorf("%w: %#x by %v and %v", ErrDuplicateToken, t.Token, ts[i-1].Group, t.Group)
		}
	}
	return &Ring{version: version, tokens: ts}, nil
}

// Build places each group at perGroup tokens derived from seed alone:
// token i of group g is xxHash64(seed, g, i, attempt) (each little-endian,
// 8+4+4+4 bytes), with attempt counting up from 0 past any collision. The
// result depends only on (groups as a set, perGroup, seed): the same inputs
// build the same ring everywhere. The ring starts at version 1.
func Build(groups []GroupID, perGroup int, seed uint64) (*Ring, error) {
	if len(groups) == 0 || perGroup <= 0 {
		return nil, ErrNoTokens
	}
	if len(groups)*perGroup > MaxTokens || perGroup > MaxTokens {
		return nil, ErrTooManyTokens
	}
	gs := slices.Clone(groups)
	slices.Sort(gs)
	for i, g := range gs {
		if g == 0 {
			return nil, ErrZeroGroup
		}
		if i > 0 && gs[i-1] == g {
			return nil, fmt.Errorf("%w: %v", ErrGroupExists, g)
		}
	}
	used := make(map[uint64]bool, len(gs)*perGroup)
	var ts []Token
	for _, g := range gs {
		for _, t := range SeededTokens(g, perGroup, seed, used) {
			used[t] = true
			ts = append(ts, Token{Token: t, Group: g})
		}
	}
	return New(1, ts)
}

// SeededTokens returns n tokens for group g derived from seed as Build
// does, skipping any token in taken (which it does not modify). It
// returns nil unless 0 < n <= MaxTokens.
func SeededTokens(g GroupID, n int, seed uint64, taken map[uint64]bool) []uint64 {
	if n <= 0 || n > MaxTokens {
		return nil
	}
	out := make([]uint64, 0, n)
	mine := make(map[uint64]bool, n)
	var buf [20]byte
	binary.LittleEndian.PutUint64(buf[0:], seed)
	binary.LittleEndian.PutUint32(buf[8:], uint32(g))
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(buf[12:], uint32(i))
		for attempt := uint32(0); ; attempt++ {
			binary.LittleEndian.PutUint32(buf[16:], attempt)
			t := xxhash.Sum64(buf[:])
			if !taken[t] && !mine[t] {
				mine[t] = true
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// Version is the ring's configuration version; every change raises it.
// Servers answer a request for a row they no longer own with the version
// they hold, so that a client can tell a stale ring from a stale server.
func (r *Ring) Version() uint64 { return r.version }

// Len is the number of tokens.
func (r *Ring) Len() int { return len(r.tokens) }

// Tokens returns a copy of the ring's tokens in ring order.
func (r *Ring) Tokens() []Token { return slices.Clone(r.tokens) }

// Groups returns the distinct groups on the ring, ascending.
func (r *Ring) Groups() []GroupID {
	var gs []GroupID
	for _, t := range r.tokens {
		gs = append(gs, t.Group)
	}
	slices.Sort(gs)
	return slices.Compact(gs)
}

// Has reports whether g holds any token.
func (r *Ring) Has(g GroupID) bool {
	for _, t := range r.tokens {
		if t.Group == g {
			return true
		}
	}
	return false
}

// successor is the index of the first token at or after h, wrapping to 0.
func (r *Ring) successor(h uint64) int {
	i := sort.Search(len(r.tokens), func(i int) bool { return r.tokens[i].Token >= h })
	if i == len(r.tokens) {
		return 0
	}
	return i
}

// OwnerOfHash is the group owning hash h: the holder of the first token at
// or after h, wrapping. It returns 0 on an empty ring.
func (r *Ring) OwnerOfHash(h uint64) GroupID {
	if r == nil || len(r.tokens) == 0 {
		return 0
	}
	return r.tokens[r.successor(h)].Group
}

// Owner is the group owning row key.
func (r *Ring) Owner(key []byte) GroupID { return r.OwnerOfHash(Hash(key)) }

// rangeAt is the range token i owns: (token i-1, token i].
func (r *Ring) rangeAt(i int) Range {
	prev := r.tokens[(i+len(r.tokens)-1)%len(r.tokens)].Token
	return Range{Start: prev, End: r.tokens[i].Token}
}

// RangeOfHash is the range, owned by a single token, that contains h.
func (r *Ring) RangeOfHash(h uint64) (Range, GroupID) {
	if r == nil || len(r.tokens) == 0 {
		return Range{}, 0
	}
	i := r.successor(h)
	return r.rangeAt(i), r.tokens[i].Group
}

// Ranges returns the ranges g owns in ring order, one per token, with
// adjacent ranges of g merged into one.
func (r *Ring) Ranges(g GroupID) []Range {
	var out []Range
	for i, t := range r.tokens {
		if t.Group != g {
			continue
		}
		rg := r.rangeAt(i)
		if n := len(out); n > 0 && out[n-1].End == rg.Start {
			out[n-1].End = rg.End
			continue
		}
		out = append(out, rg)
	}
	// The first and the last range may meet across the wrap.
	if n := len(out); n > 1 && out[n-1].End == out[0].Start {
		out[0].Start = out[n-1].Start
		out = out[:n-1]
	}
	return out
}

// String lists the tokens, for logs and test failures.
func (r *Ring) String() string {
	s := fmt.Sprintf("ring v%d [", r.version)
	for i, t := range r.tokens {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%#016x:%v", t.Token, t.Group)
	}
	return s + "]"
}
