package load

import (
	"fmt"
	"strconv"

	"github.com/corral-db/corral/wire"
)

// Workload names what the connections of a phase send.
type Workload string

const (
	// WorkloadCreate creates persistent nodes at unique paths.
	WorkloadCreate Workload = "create"
	// WorkloadSet overwrites the data of nodes a create phase made.
	WorkloadSet Workload = "set"
	// WorkloadGet reads nodes a create phase made.
	WorkloadGet Workload = "get"
	// WorkloadSeqCreate is WorkloadCreate measured with one connection and
	// one request in flight: the latency a sequential client sees.
	WorkloadSeqCreate Workload = "seqcreate"
)

// ParseWorkload accepts the names above.
func ParseWorkload(s string) (Workload, error) {
	switch w := Workload(s); w {
	case WorkloadCreate, WorkloadSet, WorkloadGet, WorkloadSeqCreate:
		return w, nil
	}
	return "", fmt.Errorf("bench: unknown workload %q (want create, set, get or seqcreate)", s)
}

// Creates reports whether the workload creates nodes.
func (w Workload) Creates() bool { return w == WorkloadCreate || w == WorkloadSeqCreate }

// KeySpace names the nodes a create phase made: creator k made
// Root/Prefix-k-i for every i < Counts[k]. set and get phases address
// exactly these nodes, so they need no listing of the tree.
type KeySpace struct {
	Root   string
	Prefix string
	Counts []int64
}

// Total is the number of nodes in the key space.
func (k *KeySpace) Total() int64 {
	var n int64
	for _, c := range k.Counts {
		n += c
	}
	return n
}

func (k *KeySpace) AppendPath(dst []byte, creator int, i int64) []byte {
	dst = append(dst, k.Root...)
	dst = append(dst, '/')
	dst = append(dst, k.Prefix...)
	dst = append(dst, '-')
	dst = strconv.AppendInt(dst, int64(creator), 10)
	dst = append(dst, '-')
	return strconv.AppendInt(dst, i, 10)
}

// Path returns the path of node i of creator.
func (k *KeySpace) Path(creator int, i int64) string {
	return string(k.AppendPath(nil, creator, i))
}

// source produces one connection's requests. It is used by that
// connection's writer goroutine only.
type source interface {
	Next(e *wire.Encoder, xid int32)
}

// createSource creates node i = 0, 1, 2, ... of its creator index.
type createSource struct {
	ks      *KeySpace
	creator int
	issued  int64
	data    []byte
	path    []byte
}

func (s *createSource) Next(e *wire.Encoder, xid int32) {
	s.path = s.ks.AppendPath(s.path[:0], s.creator, s.issued)
	s.issued++
	AppendCreate(e, xid, s.path, s.data)
}

// keyCursor walks the nodes of one creator cyclically.
type keyCursor struct {
	ks      *KeySpace
	creator int
	count   int64
	i       int64
	path    []byte
}

// NewKeyCursor spreads worker w over the creators that made nodes, and
// starts it at a different offset from other workers on the same creator so
// that they do not touch the same node in lockstep.
func NewKeyCursor(ks *KeySpace, w int) (*keyCursor, error) {
	var creators []int
	for k, c := range ks.Counts {
		if c > 0 {
			creators = append(creators, k)
		}
	}
	if len(creators) == 0 {
		return nil, fmt.Errorf("bench: key space %s/%s-* is empty", ks.Root, ks.Prefix)
	}
	k := creators[w%len(creators)]
	count := ks.Counts[k]
	round := int64(w / len(creators))
	return &keyCursor{ks: ks, creator: k, count: count, i: (round * 7919) % count}, nil
}

func (c *keyCursor) NextPath() []byte {
	c.path = c.ks.AppendPath(c.path[:0], c.creator, c.i)
	c.i++
	if c.i == c.count {
		c.i = 0
	}
	return c.path
}

type setSource struct {
	keys *keyCursor
	data []byte
}

func (s *setSource) Next(e *wire.Encoder, xid int32) {
	AppendSetData(e, xid, s.keys.NextPath(), s.data)
}

type getSource struct {
	keys *keyCursor
}

func (s *getSource) Next(e *wire.Encoder, xid int32) {
	AppendGetData(e, xid, s.keys.NextPath())
}

// Value returns n bytes of deterministic, non-repeating-looking data.
func Value(n int) []byte { return ValueFrom(2463534242, n) }

// ValueFrom is Value from another (non-zero) seed: the same seed gives the
// same bytes.
func ValueFrom(seed uint32, n int) []byte {
	b := make([]byte, n)
	x := seed
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
