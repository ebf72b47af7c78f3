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
// returns, nor keep it: once the node is deleted its memory holds another
// node. The slices Data and Tree.ACL return and the names Children
// returns are never modified in place (setData and setACL replace them),
// so they may be used after the lock is released; the stat and children
// may not.
//
// A node is 48 bytes, allocated in slabs (slab.go), and a tree of a million
// znodes spends most of its heap on them and their records. No full path is
// stored: a node holds its base name and its parent, and is found by walking
// the path's segments through each parent's child table (children.go); the
// few places that need a node's path (the snapshot, the ephemeral and
// container indexes' callers) rebuild it from the parents. The base name,
// the data, its length and its version are one record in the tree's arena
// (arena.go), reached by one pointer, with the rest of what changes only
// when the data does: the data's length, its version, mzxid and mtime. A
// data change writes a new record anyway, so keeping them there costs four
// varints where the node would spend 24 bytes; mzxid and mtime are stored
// as their distance from czxid and ctime, one byte each on a node whose
// data was never set. The stat fields that nearly every
// leaf leaves at their initial value (pzxid = czxid, the child-create
// counter, aversion and ephemeralOwner 0) and the child table live in an
// extension allocated only for the nodes that need one: parents,
// ephemeral, container and TTL nodes, nodes whose ACL was set. The node's
// digest term is not stored either; a change recomputes it before and
// after (see term).
type Node struct {
	// rec is the node's record in the tree's arena (arena.go): the length
	// of its base name (a uvarint; 0 for the root), the name, the data's
	// length + 1 (a uvarint; 0 for null data), the data version (a uvarint
	// of its 32 bits), mzxid - czxid and mtime - ctime (varints) and the
	// data. Nil only for a free slot.
	rec *byte
	ext *nodeExt

	// czxid and ctime never change once the node has its record: the
	// record's mzxid and mtime are relative to them.
	czxid, ctime int64
	// parent is the node's parent (none for the root). next is the next
	// node in the parent's bucket chain, or, for a free slot, the next
	// free slot of the slab. References, not pointers: half the size, and
	// nothing for the collector to trace.
	parent, next nodeRef
	// acl is the node's ACL list in the tree's aclCache; 0 only for a
	// free slot.
	acl aclID
	// slabTag is the index of the node's slab in Tree.nodes (low
	// slabBits) and the top byte of its name's hash (see
	// childTable.get).
	slabTag uint32
}

const slabBits = 24

// slab is the index of the node's slab.
func (n *Node) slab() int32 { return int32(n.slabTag & (1<<slabBits - 1)) }

// tag is the top byte of the hash of the node's name, set when it is
// added to its parent's table.
func (n *Node) tag() uint8 { return uint8(n.slabTag >> slabBits) }

func (n *Node) setTag(tag uint8) {
	n.slabTag = n.slabTag&(1<<slabBits-1) | uint32(tag)<<slabBits
}

// nodeExt holds the stat fields that most leaves leave at their initial
// value, and the children.
type nodeExt struct {
	pzxid    int64
	owner    int64 // ephemeralOwner, raw
	cversion int32 // child-create counter
	aversion int32
	// kids is nil until the first child; a parent whose children are all
	// gone keeps its (empty) table.
	kids *childTable
	// run holds the packed children (pack.go), nil if none were ever
	// packed.
	run *entryRun
}

// extension returns the node's extension, allocating it (with the initial
// values the node's fields imply) the first time.
func (n *Node) extension() *nodeExt {
	if n.ext == nil {
		n.ext = &nodeExt{pzxid: n.czxid}
	}
	return n.ext
}

func (n *Node) pzxid() int64 {
	if n.ext == nil {
		return n.czxid
	}
	return n.ext.pzxid
}

func (n *Node) owner() int64 {
	if n.ext == nil {
		return 0
	}
	return n.ext.owner
}

func (n *Node) cversion() int32 {
	if n.ext == nil {
		return 0
	}
	return n.ext.cversion
}

func (n *Node) aversion() int32 {
	if n.ext == nil {
		return 0
	}
	return n.ext.aversion
}

func (n *Node) setPzxid(z int64) {
	if n.ext == nil && z == n.czxid {
		return
	}
	n.extension().pzxid = z
}

func (n *Node) setAversion(v int32) {
	if n.ext == nil && v == 0 {
		return
	}
	n.extension().aversion = v
}

// setStat stores the parts of s outside the record (the child-create
// counter and pzxid included), giving the node an extension only if s
// needs one. Czxid and ctime are set before the record is written
// (Tree.newNode); version, mzxid and mtime are the record's (arena.put).
func (n *Node) setStat(s PStat) {
	if n.ext == nil && s.Pzxid == s.Czxid && s.CVersion == 0 && s.Aversion == 0 && s.EphemeralOwner == 0 {
		return
	}
	e := n.extension()
	e.pzxid, e.owner, e.cversion, e.aversion = s.Pzxid, s.EphemeralOwner, s.CVersion, s.Aversion
}

// baseName returns the node's name within its parent ("" for the root).
// The string shares the node's record, which is never modified.
func (n *Node) baseName() string {
	l, k := n.nameLen()
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(n.rec), k)), l)
}

// nameLen decodes the length of the node's name at the start of its
// record: the length, and the bytes its uvarint takes.
func (n *Node) nameLen() (l, k int) {
	x, k := recUvarint(unsafe.Pointer(n.rec))
	return int(x), k
}

// recFields is the record's fields after the name (Node.recFields).
type recFields struct {
	dataLen, version int32 // dataLen is -1 for null data
	dz, dt           int64 // mzxid - czxid, mtime - ctime
	dataOff          int   // where the data starts
}

// recFields decodes the record's fields after the name.
func (n *Node) recFields() recFields {
	l, k := n.nameLen()
	off := k + l
	d, dk := recUvarint(unsafe.Add(unsafe.Pointer(n.rec), off))
	off += dk
	v, vk := recUvarint(unsafe.Add(unsafe.Pointer(n.rec), off))
	off += vk
	dz, zk := recUvarint(unsafe.Add(unsafe.Pointer(n.rec), off))
	off += zk
	dt, tk := recUvarint(unsafe.Add(unsafe.Pointer(n.rec), off))
	return recFields{
		dataLen: int32(d) - 1,
		version: int32(uint32(v)),
		dz:      unzigzag(dz),
		dt:      unzigzag(dt),
		dataOff: off + tk,
	}
}

// unzigzag is the value of a varint's uvarint (binary.AppendVarint).
func unzigzag(x uint64) int64 { return int64(x>>1) ^ -int64(x&1) }

// mzxid is the zxid of the node's last data change (its creation's if
// none).
func (n *Node) mzxid() int64 { return n.czxid + n.recFields().dz }

// mtime is the time of the node's last data change.
func (n *Node) mtime() int64 { return n.ctime + n.recFields().dt }

// recUvarint decodes the uvarint at p, which the arena wrote: the value
// and the bytes it takes. The one-byte case is inlined.
func recUvarint(p unsafe.Pointer) (uint64, int) {
	if b := *(*byte)(p); b < 0x80 {
		return uint64(b), 1
	}
	return recUvarintLong(p)
}

func recUvarintLong(p unsafe.Pointer) (uint64, int) {
	var x uint64
	var s uint
	for i := 0; ; i++ {
		b := *(*byte)(unsafe.Add(p, i))
		if b < 0x80 {
			return x | uint64(b)<<s, i + 1
		}
		x |= uint64(b&0x7f) << s
		s += 7
	}
}

// recSize is the size of the node's record.
func (n *Node) recSize() int {
	f := n.recFields()
	return f.dataOff + int(max(f.dataLen, 0))
}

// dataSize is len(n.Data()).
func (n *Node) dataSize() int {
	return int(max(n.recFields().dataLen, 0))
}

// version is the node's data version.
func (n *Node) version() int32 {
	return n.recFields().version
}

// numChildren is the number of children.
func (n *Node) numChildren() int {
	if n.ext == nil {
		return 0
	}
	c := 0
	if n.ext.kids != nil {
		c = int(n.ext.kids.n)
	}
	if n.ext.run != nil {
		c += n.ext.run.live
	}
	return c
}

// child returns the child named name, or nil.
func (n *Node) child(name string) *Node {
	if n.ext == nil || n.ext.kids == nil {
		return nil
	}
	return n.ext.kids.get(name)
}

// addChild adds c, which has its name and no parent yet, to n's children;
// a holds both.
func (n *Node) addChild(a *nodeAlloc, c *Node) {
	e := n.extension()
	if e.kids == nil {
		e.kids = newChildTable(a)
	}
	c.parent = a.ref(n)
	e.kids.add(c)
}

// removeChild takes c out of n's children (if it is there).
func (n *Node) removeChild(c *Node) {
	if n.ext == nil || n.ext.kids == nil {
		return
	}
	n.ext.kids.remove(c)
}

// eachChild calls f with every child, in no particular order. f must not
// add or remove n's children, but may free the child it is given.
func (n *Node) eachChild(f func(c *Node)) {
	if n.ext == nil || n.ext.kids == nil {
		return
	}
	n.ext.kids.each(f)
}

// Data returns the node's data (nil if the node was created with null
// data). Callers must not modify it.
func (n *Node) Data() []byte {
	f := n.recFields()
	return n.dataAt(f.dataLen, f.dataOff)
}

// dataAt is Data, given the record's data length and offset (recFields).
func (n *Node) dataAt(d int32, off int) []byte {
	switch {
	case d < 0:
		return nil
	case d == 0:
		return emptyData
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(n.rec), off)), d)
}

// Persisted returns the stored stat.
func (n *Node) Persisted() PStat {
	h := n.recFields()
	return PStat{
		Czxid:          n.czxid,
		Mzxid:          n.czxid + h.dz,
		Ctime:          n.ctime,
		Mtime:          n.ctime + h.dt,
		Version:        h.version,
		CVersion:       n.cversion(),
		Aversion:       n.aversion(),
		EphemeralOwner: n.owner(),
		Pzxid:          n.pzxid(),
	}
}

// NumChildren is the number of children.
func (n *Node) NumChildren() int { return n.numChildren() }

// Children appends the base names of the node's children, in no
// particular order (ZooKeeper returns hash-set order too): the nodes',
// then the packed entries' in number order (pack.go). A node's name shares
// its storage, a packed entry's is built; both stay valid after the lock
// is released.
func (n *Node) Children(dst []string) []string {
	n.eachChild(func(c *Node) { dst = append(dst, c.baseName()) })
	if r := n.run(); r != nil {
		r.each(0, func(e runEntry) bool {
			dst = append(dst, r.name(e.num))
			return true
		})
	}
	return dst
}

// Stat fills out with the stat a client sees (DataNode.copyStat): cversion
// is 2*creates - numChildren (creates plus deletes), ephemeralOwner is 0
// for container and TTL nodes.
func (n *Node) Stat(out *wire.Stat) {
	nc := int32(n.numChildren())
	h := n.recFields()
	out.Czxid = n.czxid
	out.Mzxid = n.czxid + h.dz
	out.Ctime = n.ctime
	out.Mtime = n.ctime + h.dt
	d := h.dataLen
	out.Version = h.version
	out.Cversion = n.cversion()*2 - nc
	out.Aversion = n.aversion()
	out.EphemeralOwner = n.owner()
	if kindOf(out.EphemeralOwner) != kindEphemeral {
		out.EphemeralOwner = 0
	}
	out.DataLength = max(d, 0)
	out.NumChildren = nc
	out.Pzxid = n.pzxid()
}

// IsEphemeral reports whether the node belongs to a session.
func (n *Node) IsEphemeral() bool { return kindOf(n.owner()) == kindEphemeral }

// IsContainer reports whether the node is a container.
func (n *Node) IsContainer() bool { return n.owner() == ContainerOwner }

// TTL returns the node's time to live in ms, and whether it is a TTL node.
func (n *Node) TTL() (int64, bool) {
	o := n.owner()
	if kindOf(o) != kindTTL {
		return 0, false
	}
	return o & MaxTTL, true
}

// term is the node's term in Tree.nodeSum, computed from its path (which
// the caller knows: the txn names it), data, ACL and stat. It is not
// stored (8 bytes a node): a change subtracts the term before and adds it
// after, hashing the path and data twice.
func (t *Tree) term(n *Node, path string) uint64 {
	r := n.recFields()
	return termOf(path, n.dataAt(r.dataLen, r.dataOff), t.acls.entry(n.acl).hash, PStat{
		Czxid: n.czxid, Mzxid: n.czxid + r.dz, Ctime: n.ctime, Mtime: n.ctime + r.dt,
		Version: r.version, CVersion: n.cversion(), Aversion: n.aversion(),
		EphemeralOwner: n.owner(), Pzxid: n.pzxid(),
	})
}

// termOf is the digest term of a node with the given path, data, ACL
// hash and stored stat.
func termOf(path string, data []byte, aclHash uint64, s PStat) uint64 {
	h := mix(contentHash(path, data), aclHash)
	h = mix(h, uint64(s.Czxid))
	h = mix(h, uint64(s.Mzxid))
	h = mix(h, uint64(s.Ctime))
	h = mix(h, uint64(s.Mtime))
	h = mix(h, uint64(uint32(s.Version))|uint64(uint32(s.CVersion))<<32)
	h = mix(h, uint64(uint32(s.Aversion)))
	h = mix(h, uint64(s.EphemeralOwner))
	h = mix(h, uint64(s.Pzxid))
	return h
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
