package datatree

import (
	"cmp"
	"slices"

	"github.com/corral-db/corral/wire"
)

// Packed entries: a log's entries kept as a run, not as nodes.
//
// With a pack root set (SetPackRoot), the children of every node directly
// under it (a log's entries, docs/design/rlog.md) are packed when their
// state follows from what a run stores: a persistent node created with
// the log's entry name pattern (a prefix and a fixed number of digits),
// a number above every earlier one, the run's ACL, data of at most
// maxRawPacked bytes or in the EntryCodec's form, and a stat nobody has
// changed since (version, cversion and aversion 0, mzxid = pzxid = czxid,
// mtime = ctime, no children). Such an entry costs about a dozen bytes in
// its run (run.go) where a node costs ~100.
//
// Packing is the tree's own business: every read sees a packed entry as
// the node it stands for (Get builds a node for it; Children, NumChildren
// and the stats count it), the digest and the data size count it the
// same, and the snapshot writes it as a node. The first write that would
// change an entry's state (setData, setACL, delete, a create under it)
// first unpacks it into a node (unpackChild), so the transactions apply
// exactly as to nodes. A snapshot is read back into nodes; SetPackRoot
// packs them again.

// EntryCodec gives the data of packed entries a compact form.
type EntryCodec interface {
	// Pack appends the compact form of data, the data of an entry created
	// by the transaction czxid, to dst, and reports false if it has none.
	Pack(dst []byte, czxid int64, data []byte) ([]byte, bool)
	// Unpack returns the data Pack was given for czxid and packed.
	Unpack(czxid int64, packed []byte) []byte
}

// maxRawPacked is the most data bytes an entry keeps in its run without
// the codec; entries with more stay nodes.
const maxRawPacked = 1024

// SetPackRoot makes the tree pack the entries of the logs under root,
// those it holds now included, giving their data the codec's form where
// it accepts it (codec may be nil). Nothing a client can observe changes.
// It is meant for a tree just built or read, and may be called once.
func (t *Tree) SetPackRoot(root string, codec EntryCodec) {
	if t.packRoot != "" || !plausiblePath(root) {
		return
	}
	t.packRoot, t.codec = root, codec
	r := t.lookup(root)
	if r == nil {
		return
	}
	var logs []*Node
	r.eachChild(func(c *Node) { logs = append(logs, c) })
	for _, l := range logs {
		t.packChildren(l)
	}
}

// packable reports whether the node's state is what a packed entry
// restores: see the top of this file. n.rec is its record.
func packable(n *Node) bool {
	if n.owner() != 0 || n.numChildren() != 0 || n.cversion() != 0 || n.aversion() != 0 || n.pzxid() != n.czxid {
		return false
	}
	f := n.recFields()
	return f.version == 0 && f.dz == 0 && f.dt == 0
}

// packChildren packs the nodes among l's children that can form its run
// (l has none yet): those with the most common name pattern and ACL, in
// number order.
func (t *Tree) packChildren(l *Node) {
	if l.ext == nil || l.ext.kids == nil || l.ext.run != nil {
		return
	}
	type cand struct {
		n      *Node
		prefix string
		width  int
		num    uint64
	}
	type key struct {
		prefix string
		width  int
		acl    aclID
	}
	var cands []cand
	counts := make(map[key]int)
	l.eachChild(func(c *Node) {
		prefix, width, num, ok := splitEntryName(c.baseName())
		if !ok || !packable(c) {
			return
		}
		cands = append(cands, cand{c, prefix, width, num})
		counts[key{prefix, width, c.acl}]++
	})
	if len(cands) == 0 {
		return
	}
	var best key
	for k, c := range counts {
		if b := counts[best]; c > b || c == b && (k.prefix < best.prefix || k.prefix == best.prefix && k.width < best.width) {
			best = k
		}
	}
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(a.num, b.num) })
	r := &entryRun{prefix: best.prefix, width: best.width, acl: best.acl}
	var enc []byte
	for _, c := range cands {
		if c.prefix != best.prefix || c.width != best.width || c.n.acl != best.acl {
			continue
		}
		var ok bool
		enc, ok = t.encodeEntry(enc[:0], c.n.czxid, c.n.Data())
		if !ok {
			continue
		}
		r.add(c.num, c.n.czxid, c.n.ctime, enc)
		// The node's ACL reference passes to the entry; its term and size
		// stay counted.
		l.removeChild(c.n)
		t.recs.free(c.n)
		t.nodes.release(c.n)
		t.packed++
	}
	if r.live > 0 {
		l.extension().run = r
	}
}

// packCreate applies a create as a packed entry if it can be one (see
// the top of this file) and reports whether it did. The create's checks
// are done and the parent raised; acl holds the reference for the new
// entry.
func (t *Tree) packCreate(parent *Node, parentPath, path string, acl *aclEntry, data []byte, zxid, time int64) bool {
	if ParentPath(parentPath) != t.packRoot {
		return false
	}
	name := BaseName(path)
	r := parent.run()
	var num uint64
	if r == nil {
		prefix, width, n, ok := splitEntryName(name)
		if !ok {
			return false
		}
		r, num = &entryRun{prefix: prefix, width: width, acl: acl.id}, n
	} else {
		n, ok := r.parse(name)
		if !ok || acl.id != r.acl || (r.any && n <= r.last) {
			return false
		}
		num = n
	}
	var ok bool
	t.packBuf, ok = t.encodeEntry(t.packBuf[:0], zxid, data)
	if !ok {
		return false
	}
	r.add(num, zxid, time, t.packBuf)
	parent.extension().run = r
	t.packed++
	t.nodeSum += t.entryTerm(path, data, acl, zxid, time)
	t.dataSize += int64(len(path) + len(data))
	t.quotaCreatedSize(path, len(data))
	return true
}

// entryPStat is the stored stat of a packed entry created at zxid and
// time: nothing changed since.
func entryPStat(zxid, time int64) PStat {
	return PStat{Czxid: zxid, Mzxid: zxid, Ctime: time, Mtime: time, Pzxid: zxid}
}

// entryStat fills out with the stat of a packed entry (Node.Stat).
func entryStat(out *wire.Stat, zxid, time int64, dataLen int) {
	*out = wire.Stat{Czxid: zxid, Mzxid: zxid, Ctime: time, Mtime: time, DataLength: int32(dataLen), Pzxid: zxid}
}

// entryTerm is the digest term (Tree.term) of a packed entry.
func (t *Tree) entryTerm(path string, data []byte, acl *aclEntry, zxid, time int64) uint64 {
	return termOf(path, data, acl.hash, entryPStat(zxid, time))
}

// encodeEntry appends the encoded data of an entry created at czxid
// (runBlock.buf), and false if the entry must stay a node.
func (t *Tree) encodeEntry(dst []byte, czxid int64, data []byte) ([]byte, bool) {
	if t.codec != nil && data != nil {
		if p, ok := t.codec.Pack(t.codecBuf[:0], czxid, data); ok {
			t.codecBuf = p
			return encodePacked(dst, p), true
		}
	}
	if len(data) > maxRawPacked {
		return dst, false
	}
	return encodeRaw(dst, data), true
}

// decodeEntry is the data of an entry created at czxid whose encoded data
// is enc. Raw data shares the run's memory, which is never modified.
func (t *Tree) decodeEntry(czxid int64, enc []byte) []byte {
	b, packed := splitData(enc)
	if packed {
		return t.codec.Unpack(czxid, b)
	}
	return b
}

// run is the node's run of packed children, or nil.
func (n *Node) run() *entryRun {
	if n.ext == nil {
		return nil
	}
	return n.ext.run
}

// packedNode builds a node standing for entry e of parent's run r: a
// node of its own, in no slab and no table, which reads as the entry
// would as a node (Get's callers only read the nodes they get).
func (t *Tree) packedNode(parent *Node, r *entryRun, e runEntry) *Node {
	data := t.decodeEntry(e.czxid, e.data)
	var f recStat
	if data != nil {
		f.dl = uint64(len(data)) + 1
	}
	name := r.appendName(make([]byte, 0, len(r.prefix)+r.width+len(data)+8), e.num)
	rec := appendRecord(nil, string(name), f, data)
	return &Node{rec: &rec[0], czxid: e.czxid, ctime: e.ctime, parent: t.nodes.ref(parent), acl: r.acl}
}

// getPacked is Get for a path that names no node, whose parent is
// parent: the packed entry name of parent's run, or nil.
func (t *Tree) getPacked(parent *Node, name string) *Node {
	r := parent.run()
	if r == nil {
		return nil
	}
	num, ok := r.parse(name)
	if !ok {
		return nil
	}
	e, ok := r.get(num)
	if !ok {
		return nil
	}
	return t.packedNode(parent, r, e)
}

// lookupWrite is lookup for a transaction about to change the node at
// path: a packed entry there is unpacked into a node first.
func (t *Tree) lookupWrite(path string) *Node {
	n, parent, name := t.walk(path)
	if n == nil && parent != nil && t.packRoot != "" {
		return t.unpackChild(parent, name)
	}
	return n
}

// unpackChild turns p's packed child name, if there is one, into a node
// with the same state and returns it; nil if there is none. Nothing a
// client sees changes: the entry's digest term, data size and ACL
// reference pass to the node.
func (t *Tree) unpackChild(p *Node, name string) *Node {
	r := p.run()
	if r == nil {
		return nil
	}
	num, ok := r.parse(name)
	if !ok {
		return nil
	}
	e, ok := r.get(num)
	if !ok {
		return nil
	}
	data := t.decodeEntry(e.czxid, e.data)
	r.remove(num)
	t.packed--
	n := t.newNode(name, t.acls.entry(r.acl), data,
		entryPStat(e.czxid, e.ctime))
	p.addChild(&t.nodes, n)
	return n
}

// dropRun removes every packed child of n (whose path is path) from the
// sums and indexes, as removeDescendants does for nodes.
func (t *Tree) dropRun(path string, n *Node) {
	r := n.run()
	if r == nil {
		return
	}
	acl := t.acls.entry(r.acl)
	var b []byte
	r.each(0, func(e runEntry) bool {
		b = r.appendName(append(append(b[:0], path...), '/'), e.num)
		data := t.decodeEntry(e.czxid, e.data)
		t.nodeSum -= t.entryTerm(string(b), data, acl, e.czxid, e.ctime)
		t.dataSize -= int64(len(b) + len(data))
		return true
	})
	for range r.live {
		t.acls.release(acl)
	}
	t.packed -= r.live
	n.ext.run = nil
}

// eachPacked calls f with the name, czxid, ctime and data of every packed
// child of n, in number order.
func (t *Tree) eachPacked(n *Node, f func(name string, czxid, ctime int64, data []byte)) {
	r := n.run()
	if r == nil {
		return
	}
	r.each(0, func(e runEntry) bool {
		f(r.name(e.num), e.czxid, e.ctime, t.decodeEntry(e.czxid, e.data))
		return true
	})
}

// EachChildData calls f with the data of every child of the node at path,
// its packed entries included, without building a node for a packed one
// as Get does: a walk over a log of millions of entries (the data log's
// check of what the tree names) costs their data, not a node each. f must
// not keep data past its call nor call the tree. The caller holds the
// tree as Get's callers do.
func (t *Tree) EachChildData(path string, f func(data []byte)) {
	n, _, _ := t.walk(path)
	if n == nil {
		return
	}
	n.eachChild(func(c *Node) { f(c.Data()) })
	t.eachPacked(n, func(_ string, _, _ int64, data []byte) { f(data) })
}

// PackedCount is the number of packed entries (they count in NodeCount).
func (t *Tree) PackedCount() int { return t.packed }
