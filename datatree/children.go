package datatree

import (
	"hash/maphash"
	"math/bits"
)

// childTable is a parent's children, indexed by name: a hash table with
// separate chaining through Node.next, grown and shrunk by linear hashing
// (Litwin), so that it never rehashes as a whole. Adding a child splits at
// most one bucket (moving its two or so entries); removing one merges at
// most two. A parent of a million children therefore costs no pause in
// the apply path when its table grows, where a table that doubles at once
// would stop every write for the whole rehash.
//
// The buckets live in segments of segSize, so that adding a bucket never
// copies more than one segment (the first, which grows by doubling up to
// segSize) plus the small slice of segment headers.
//
// With nb buckets, 2^L <= nb < 2^(L+1), a name of hash h is in bucket
// h mod 2^(L+1) if that is below nb, else in h mod 2^L: buckets below
// nb-2^L have been split in this round, the others not yet.
//
// Per child this costs the next reference in the node and 4 bytes of
// bucket for every one to two children (the load stays between minLoad and
// maxLoad).
type childTable struct {
	nodes *nodeAlloc // where the children live
	n     int32      // children
	nb    int32      // buckets, at least 1
	segs  [][]nodeRef
}

const (
	segShift = 9
	segSize  = 1 << segShift
	segMask  = segSize - 1
	// A bucket is split when the table holds more than maxLoad children a
	// bucket, and the last one merged when it holds fewer than one for
	// every minLoadInv buckets.
	maxLoad    = 2
	minLoadInv = 2
)

// nameSeed seeds the names' hashes: random per process, so that no client
// can choose names that all land in one bucket. The buckets' order, and so
// the order Children lists names in, differs between processes; ZooKeeper's
// (a HashSet's) is unspecified too.
var nameSeed = maphash.MakeSeed()

func nameHash(name string) uint64 { return maphash.String(nameSeed, name) }

func newChildTable(a *nodeAlloc) *childTable {
	return &childTable{nodes: a, nb: 1, segs: [][]nodeRef{make([]nodeRef, 1)}}
}

// bucketOf is the bucket of hash h in a table of nb buckets.
func bucketOf(h uint64, nb int32) int32 {
	level := uint(bits.Len32(uint32(nb)) - 1)
	b := int32(h & (1<<(level+1) - 1))
	if b >= nb {
		b = int32(h & (1<<level - 1))
	}
	return b
}

func (c *childTable) bucket(b int32) *nodeRef {
	return &c.segs[b>>segShift][b&segMask]
}

// get returns the child named name, or nil. Each node of the chain
// keeps the top byte of its name's hash (Node.tag): a node of another name
// is passed over, but for one in 256, without reading its name, which
// lives elsewhere in memory.
func (c *childTable) get(name string) *Node {
	h := nameHash(name)
	tag := uint8(h >> 56)
	for n := c.nodes.node(*c.bucket(bucketOf(h, c.nb))); n != nil; n = c.nodes.node(n.next) {
		if n.tag() == tag && n.baseName() == name {
			return n
		}
	}
	return nil
}

// add inserts n, whose name no child has.
func (c *childTable) add(n *Node) {
	h := nameHash(n.baseName())
	n.setTag(uint8(h >> 56))
	head := c.bucket(bucketOf(h, c.nb))
	n.next = *head
	*head = c.nodes.ref(n)
	c.n++
	if c.n > maxLoad*c.nb {
		c.split()
	}
}

// remove takes n out of the table, if it is there.
func (c *childTable) remove(n *Node) {
	r := c.nodes.ref(n)
	for p := c.bucket(bucketOf(nameHash(n.baseName()), c.nb)); *p != 0; p = &c.nodes.node(*p).next {
		if *p == r {
			*p = n.next
			n.next = 0
			c.n--
			// At most two: the load was in bounds before.
			for c.nb > 1 && c.n*minLoadInv < c.nb {
				c.merge()
			}
			return
		}
	}
}

// split adds bucket nb, moving into it the entries of the bucket it splits
// from (nb - 2^L) whose hash says so.
func (c *childTable) split() {
	level := uint(bits.Len32(uint32(c.nb)) - 1)
	from := c.nb - 1<<level
	to := c.nb
	c.appendBucket()
	mask := uint64(1)<<(level+1) - 1
	src, dst := c.bucket(from), c.bucket(to)
	r := *src
	*src = 0
	for r != 0 {
		n := c.nodes.node(r)
		next := n.next
		if int32(nameHash(n.baseName())&mask) == to {
			n.next = *dst
			*dst = r
		} else {
			n.next = *src
			*src = r
		}
		r = next
	}
	c.nb++
}

// merge undoes the last split: the last bucket's entries go back to the
// bucket it was split from, and the bucket is dropped.
func (c *childTable) merge() {
	last := c.nb - 1
	level := uint(bits.Len32(uint32(last)) - 1)
	into := c.bucket(last - 1<<level)
	src := c.bucket(last)
	for r := *src; r != 0; {
		n := c.nodes.node(r)
		next := n.next
		n.next = *into
		*into = r
		r = next
	}
	*src = 0
	c.dropBucket()
	c.nb--
}

// appendBucket adds an empty bucket at index nb (nb itself is the
// caller's to raise).
func (c *childTable) appendBucket() {
	s := int(c.nb >> segShift)
	if s == len(c.segs) {
		c.segs = append(c.segs, make([]nodeRef, 0, segSize))
	}
	c.segs[s] = append(c.segs[s], 0)
}

// dropBucket removes the (empty) bucket at index nb-1, releasing a
// segment it empties and shrinking the first one when it is mostly
// unused.
func (c *childTable) dropBucket() {
	b := c.nb - 1
	s := int(b >> segShift)
	c.segs[s] = c.segs[s][:len(c.segs[s])-1]
	switch {
	case s > 0 && len(c.segs[s]) == 0:
		c.segs[s] = nil
		c.segs = c.segs[:s]
	case s == 0 && cap(c.segs[0]) > 8 && len(c.segs[0]) < cap(c.segs[0])/4:
		c.segs[0] = append([]nodeRef(nil), c.segs[0]...)
	}
}

// each calls f with every child. f must not add or remove children, but
// may free the node it is given (its next reference is read before).
func (c *childTable) each(f func(n *Node)) {
	for _, seg := range c.segs {
		for _, r := range seg {
			for r != 0 {
				n := c.nodes.node(r)
				next := n.next
				f(n)
				r = next
			}
		}
	}
}
