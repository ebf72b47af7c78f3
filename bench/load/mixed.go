package load

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/corral-db/corral/wire"
)

// The ZooKeeper paper's saturation benchmark (§5.1) mixes reads and writes
// of 1 KiB: each request is a getData or a setData of one node. The mixed
// source here is that workload: getData and setData of nodes picked
// uniformly at random from a preloaded key space, in a given proportion.

// keyPicker maps a number in [0, total) onto the nodes of a key space, so
// a uniform number is a uniform node whatever the creators' counts. It is
// read-only once made and shared by every source of a phase.
type keyPicker struct {
	ks *KeySpace
	// creators are the creators with nodes; ends[i] is the number of nodes
	// of creators[0..i] together.
	creators []int
	ends     []int64
}

func NewKeyPicker(ks *KeySpace) (*keyPicker, error) {
	p := &keyPicker{ks: ks}
	var n int64
	for k, c := range ks.Counts {
		if c > 0 {
			n += c
			p.creators = append(p.creators, k)
			p.ends = append(p.ends, n)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("bench: key space %s/%s-* is empty", ks.Root, ks.Prefix)
	}
	return p, nil
}

// total is the number of nodes.
func (p *keyPicker) total() int64 { return p.ends[len(p.ends)-1] }

// AppendPath appends the path of node n, 0 <= n < total.
func (p *keyPicker) appendPath(dst []byte, n int64) []byte {
	i := sort.Search(len(p.ends), func(i int) bool { return p.ends[i] > n })
	first := int64(0)
	if i > 0 {
		first = p.ends[i-1]
	}
	return p.ks.AppendPath(dst, p.creators[i], n-first)
}

// ratioDeck is the number of requests over which the read share is exact.
const ratioDeck = 100

// MixedSource issues getData (no watch) and setData (version -1) of random
// Nodes, readPct of every 100 consecutive requests being reads. The order
// within each hundred is shuffled, so reads and writes interleave rather
// than arriving in runs; and the share is exact over every hundred rather
// than only on average, so a short phase still measures the ratio it is
// labelled with. One per connection; used by that connection's writer
// only.
type MixedSource struct {
	keys    *keyPicker
	readPct int
	data    []byte
	Rng     *rand.Rand
	deck    [ratioDeck]bool // true: read
	pos     int
	path    []byte
	// Reads and writes count the requests issued.
	Reads, Writes int64
}

// NewMixedSource makes a source over keys whose random choices derive
// from seed alone, so that a run is reproducible.
func NewMixedSource(keys *keyPicker, readPct int, data []byte, seed uint64) *MixedSource {
	s := &MixedSource{
		keys: keys, readPct: min(max(readPct, 0), ratioDeck), data: data,
		Rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
	}
	for i := range s.readPct {
		s.deck[i] = true
	}
	return s
}

// NextOp appends the next request and reports whether it is a read.
func (s *MixedSource) NextOp(e *wire.Encoder, xid int32) (read bool) {
	if s.pos == 0 {
		s.Rng.Shuffle(len(s.deck), func(i, j int) { s.deck[i], s.deck[j] = s.deck[j], s.deck[i] })
	}
	read = s.deck[s.pos]
	s.pos = (s.pos + 1) % ratioDeck
	s.path = s.keys.appendPath(s.path[:0], s.Rng.Int64N(s.keys.total()))
	if read {
		s.Reads++
		AppendGetData(e, xid, s.path)
	} else {
		s.Writes++
		AppendSetData(e, xid, s.path, s.data)
	}
	return read
}

func (s *MixedSource) Next(e *wire.Encoder, xid int32) { s.NextOp(e, xid) }
