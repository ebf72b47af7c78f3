package datatree

import (
	"encoding/binary"
	"slices"

	"github.com/corral-db/corral/wire"
)

// aclEntry is one interned ACL list, shared by every node that has it
// (ZooKeeper's ReferenceCountedACLCache). The list is immutable once
// interned, which is what lets Node.ACL and Event.ACL hand it out without
// copying.
type aclEntry struct {
	id   aclID // the entry's index in aclCache.ids
	acl  []wire.ACL
	hash uint64 // xxh64 of the list; part of node digests
	refs int
	next *aclEntry // collision chain within aclCache.m
}

// aclCache interns ACL lists by content. Lookups hash the list and compare
// it with the entries of that hash, so interning a list that is already
// present allocates nothing.
type aclCache struct {
	m map[uint64]*aclEntry
	// ids indexes the entries by id, which is what a node keeps (4 bytes
	// where a pointer is 8); ids[0] is nil, so a zero id is no list (a
	// free node slot). free lists the ids of forgotten entries.
	ids  []*aclEntry
	free []aclID
}

// aclID names an entry of a tree's aclCache.
type aclID uint32

func newACLCache() aclCache {
	return aclCache{m: make(map[uint64]*aclEntry), ids: []*aclEntry{nil}}
}

// entry returns the entry of id.
func (c *aclCache) entry(id aclID) *aclEntry { return c.ids[id] }

func hashACL(acl []wire.ACL) uint64 {
	h := uint64(len(acl))
	var b [4]byte
	for i := range acl {
		binary.LittleEndian.PutUint32(b[:], uint32(acl[i].Perms))
		h = xxh64(b[:], h)
		h = xxh64String(acl[i].ID.Scheme, h)
		h = xxh64String(acl[i].ID.ID, h^0x9e3779b97f4a7c15)
	}
	return h
}

// intern returns the entry for acl with one more reference. A nil list is
// ZooKeeper's "-1" ACL, OPEN_ACL_UNSAFE; an empty non-nil list stays empty
// (CheckPerm allows everything on it, as ZooKeeper does).
func (c *aclCache) intern(acl []wire.ACL) *aclEntry {
	if acl == nil {
		acl = wire.OpenACLUnsafe
	}
	h := hashACL(acl)
	for e := c.m[h]; e != nil; e = e.next {
		if slices.Equal(e.acl, acl) {
			e.refs++
			return e
		}
	}
	own := make([]wire.ACL, len(acl))
	copy(own, acl)
	e := &aclEntry{acl: own, hash: h, refs: 1, next: c.m[h]}
	if k := len(c.free); k > 0 {
		e.id = c.free[k-1]
		c.free = c.free[:k-1]
		c.ids[e.id] = e
	} else {
		e.id = aclID(len(c.ids))
		c.ids = append(c.ids, e)
	}
	c.m[h] = e
	return e
}

// release drops one reference and forgets the list when none remain.
func (c *aclCache) release(e *aclEntry) {
	e.refs--
	if e.refs > 0 {
		return
	}
	c.ids[e.id] = nil
	c.free = append(c.free, e.id)
	head := c.m[e.hash]
	if head == e {
		if e.next == nil {
			delete(c.m, e.hash)
		} else {
			c.m[e.hash] = e.next
		}
		return
	}
	for p := head; p != nil; p = p.next {
		if p.next == e {
			p.next = e.next
			return
		}
	}
}

// size is the number of distinct lists (ZooKeeper's aclCacheSize).
func (c *aclCache) size() int {
	n := 0
	for _, e := range c.m {
		for ; e != nil; e = e.next {
			n++
		}
	}
	return n
}
