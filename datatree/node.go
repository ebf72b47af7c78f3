package datatree

import (
	"math"
	"unsafe"

	"github.com/corral-db/corral/wire"
)

// PStat is a node's stored metadata (ZooKeeper's StatPersisted). It differs
// from what clients see (wire.Stat): CVersion is the number of child
// creates, EphemeralOwner keeps the container and TTL markers, and the
// child count and data length are not stored.
type PStat struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	CVersion       int32 // child-create counter, the next sequential suffix
	Aversion       int32
	EphemeralOwner int64 // raw: session id, ContainerOwner or TTL encoding
	Pzxid          int64
}

// Ephemeral-owner encodings (ZooKeeper's EphemeralType). A session id must
// never collide with them: not math.MinInt64 and not 0xFF in the high byte
// with zero in the next two bytes (ZooKeeper limits server ids to 254 for
// this reason).
const (
	ContainerOwner int64 = math.MinInt64
	ttlMask        int64 = -0x0100000000000000 // 0xFF00000000000000
	ttlReserved    int64 = 0x00FFFF0000000000
	// MaxTTL is the largest TTL a TTL node can carry (2^40-1 ms).
	MaxTTL int64 = 1<<40 - 1
)

// TTLOwner is the ephemeralOwner of a TTL node (EphemeralType.TTL
// .toEphemeralOwner); ttl must be in 1..MaxTTL.
func TTLOwner(ttl int64) int64 { return ttlMask | (ttl & MaxTTL) }

type ownerKind uint8

const (
	kindPersistent ownerKind = iota
	kindEphemeral
	kindContainer
	kindTTL
)

func kindOf(owner int64) ownerKind {
	switch {
	case owner == 0:
		return kindPersistent
	case owner == ContainerOwner:
		return kindContainer
	case owner&ttlMask == ttlMask && owner&ttlReserved == 0:
		return kindTTL
	}
	return kindEphemeral
}

// Node is a znode. Callers get it from Tree.Get and read it under the same
// lock that protected the Get; they must not modify it or anything it
// returns. The slices Data and ACL return are never modified in place
// (setData and setACL replace them), so they may be used after the lock is
// released; the stat and children may not.
//
// A node is 128 bytes: a tree of a million znodes spends most of its heap
// on them. The path is stored once (the same string is the node's key in
// Tree.nodes and its base name is the parent's name for it); the data is a
// pointer and a length rather than a slice header; the children are a
// slice of pointers allocated only for parents, and each child keeps its
// index in it, so adding and removing one is O(1).
type Node struct {
	// path is the node's full path (the same string as its key in
	// Tree.nodes).
	path string
	// data and dataLen are the node's data, dataLen -1 for null data (see
	// setData and Data).
	data *byte
	acl  *aclEntry
	// kids are the node's children; nil until the first child.
	kids *childList
	// hash is this node's term in Tree.digest.
	hash uint64
	stat PStat
	// dataLen is len(data), or -1 for null data.
	dataLen int32
	// pos is the node's index in Tree.order, for snapshots; slot its index
	// in its parent's kids.
	pos  int32
	slot int32
}

// childList holds a parent's children in no particular order; each child's
// slot is its index here. A parent whose children are all gone keeps an
// empty one.
type childList struct {
	nodes []*Node
}

// setData makes b the node's data; a nil b is null data.
func (n *Node) setData(b []byte) {
	if b == nil {
		n.data, n.dataLen = nil, -1
		return
	}
	// SliceData of a non-nil empty slice is not nil, so an empty value
	// stays distinct from a null one.
	n.data, n.dataLen = unsafe.SliceData(b), int32(len(b))
}

// dataSize is len(n.Data()).
func (n *Node) dataSize() int { return int(max(n.dataLen, 0)) }

// addChild appends c to n's children.
func (n *Node) addChild(c *Node) {
	if n.kids == nil {
		n.kids = &childList{}
	}
	c.slot = int32(len(n.kids.nodes))
	n.kids.nodes = append(n.kids.nodes, c)
}

// removeChild takes c out of n's children (if it is there), moving the
// last child into its slot. A list emptied of many children is released.
func (n *Node) removeChild(c *Node) {
	if n.kids == nil {
		return
	}
	kids := n.kids.nodes
	i := int(c.slot)
	if i < 0 || i >= len(kids) || kids[i] != c {
		return
	}
	last := len(kids) - 1
	kids[i] = kids[last]
	kids[i].slot = int32(i)
	kids[last] = nil
	c.slot = -1
	n.kids.nodes = kids[:last]
	// An emptied list stays (a lock's parent gains and loses one child
	// over and over); one far larger than its children is shrunk.
	if cap(kids) > 64 && last < cap(kids)/4 {
		n.kids.nodes = append([]*Node(nil), kids[:last]...)
	}
}

// numChildren is the number of children.
func (n *Node) numChildren() int {
	if n.kids == nil {
		return 0
	}
	return len(n.kids.nodes)
}

// childNodes returns the children; the caller must not keep or modify it.
func (n *Node) childNodes() []*Node {
	if n.kids == nil {
		return nil
	}
	return n.kids.nodes
}

// Data returns the node's data (nil if the node was created with null
// data). Callers must not modify it.
func (n *Node) Data() []byte {
	if n.dataLen < 0 {
		return nil
	}
	return unsafe.Slice(n.data, n.dataLen)
}

// ACL returns the node's ACL list, shared with every node that has the
// same list. Callers must not modify it.
func (n *Node) ACL() []wire.ACL { return n.acl.acl }

// Persisted returns the stored stat.
func (n *Node) Persisted() PStat { return n.stat }

// NumChildren is the number of children.
func (n *Node) NumChildren() int { return n.numChildren() }

// Children appends the base names of the node's children, in no
// particular order (ZooKeeper returns hash-set order too).
func (n *Node) Children(dst []string) []string {
	for _, c := range n.childNodes() {
		dst = append(dst, BaseName(c.path))
	}
	return dst
}

// Stat fills out with the stat a client sees (DataNode.copyStat): cversion
// is 2*creates - numChildren (creates plus deletes), ephemeralOwner is 0
// for container and TTL nodes.
func (n *Node) Stat(out *wire.Stat) {
	nc := int32(n.numChildren())
	out.Czxid = n.stat.Czxid
	out.Mzxid = n.stat.Mzxid
	out.Ctime = n.stat.Ctime
	out.Mtime = n.stat.Mtime
	out.Version = n.stat.Version
	out.Cversion = n.stat.CVersion*2 - nc
	out.Aversion = n.stat.Aversion
	out.EphemeralOwner = n.stat.EphemeralOwner
	if kindOf(n.stat.EphemeralOwner) != kindEphemeral {
		out.EphemeralOwner = 0
	}
	out.DataLength = int32(n.dataSize())
	out.NumChildren = nc
	out.Pzxid = n.stat.Pzxid
}

// IsEphemeral reports whether the node belongs to a session.
func (n *Node) IsEphemeral() bool { return kindOf(n.stat.EphemeralOwner) == kindEphemeral }

// IsContainer reports whether the node is a container.
func (n *Node) IsContainer() bool { return n.stat.EphemeralOwner == ContainerOwner }

// TTL returns the node's time to live in ms, and whether it is a TTL node.
func (n *Node) TTL() (int64, bool) {
	if kindOf(n.stat.EphemeralOwner) != kindTTL {
		return 0, false
	}
	return n.stat.EphemeralOwner & MaxTTL, true
}

// rehash recomputes the node's digest term from its path, data, ACL and
// stat. It does not touch the tree's sum; callers do. The data's hash is
// not kept (8 bytes a node): a stat-only change, mostly a parent's counter
// and pzxid when a child comes or goes, hashes the path and data again.
func (n *Node) rehash() {
	n.rehashContent(contentHash(n.path, n.Data()))
}

// rehashContent is rehash with the content hash already computed.
func (n *Node) rehashContent(content uint64) {
	s := &n.stat
	h := mix(content, n.acl.hash)
	h = mix(h, uint64(s.Czxid))
	h = mix(h, uint64(s.Mzxid))
	h = mix(h, uint64(s.Ctime))
	h = mix(h, uint64(s.Mtime))
	h = mix(h, uint64(uint32(s.Version))|uint64(uint32(s.CVersion))<<32)
	h = mix(h, uint64(uint32(s.Aversion)))
	h = mix(h, uint64(s.EphemeralOwner))
	h = mix(h, uint64(s.Pzxid))
	n.hash = h
}

func contentHash(path string, data []byte) uint64 {
	// A nil and an empty data hash differently: clients can tell them apart
	// (getData returns a null buffer for nil).
	seed := xxh64String(path, 0)
	if data == nil {
		return mix(seed, 0x6e696c) // "nil"
	}
	return xxh64(data, seed)
}
