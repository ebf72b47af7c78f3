package datatree

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/corral-db/corral/wire"
)

// checkInvariants recomputes everything the tree maintains incrementally
// and compares.
func checkInvariants(t testing.TB, tr *Tree) {
	t.Helper()
	if err := invariantError(tr); err != nil {
		t.Fatal(err)
	}
}

func invariantError(tr *Tree) error {
	if tr.root == nil || tr.root.isFree() || tr.root.parent != 0 || tr.lookup(RootPath) != tr.root {
		return fmt.Errorf("root missing or stale")
	}
	var sum uint64
	var size int64
	eph := map[int64]map[string]struct{}{}
	ephCount := 0
	containers := map[string]struct{}{}
	ttls := map[string]struct{}{}
	refs := map[aclID]int{}
	paths := map[*Node]string{}
	packed := 0
	var walk func(p string, n *Node) error
	walk = func(p string, n *Node) error {
		if n.isFree() {
			return fmt.Errorf("%s: a free slot is linked in the tree", p)
		}
		if _, dup := paths[n]; dup {
			return fmt.Errorf("%s: reached twice", p)
		}
		paths[n] = p
		if got := tr.pathOf(n); got != p {
			return fmt.Errorf("%s: node's path rebuilds as %s", p, got)
		}
		if tr.lookup(p) != n {
			return fmt.Errorf("%s: lookup finds another node", p)
		}
		if err := childTableError(p, n); err != nil {
			return err
		}
		sum += tr.term(n, p)
		size += int64(len(p) + n.dataSize())
		refs[n.acl]++
		switch owner := n.owner(); kindOf(owner) {
		case kindEphemeral:
			if eph[owner] == nil {
				eph[owner] = map[string]struct{}{}
			}
			eph[owner][p] = struct{}{}
			ephCount++
		case kindContainer:
			containers[p] = struct{}{}
		case kindTTL:
			ttls[p] = struct{}{}
		}
		var err error
		n.eachChild(func(c *Node) {
			if err == nil {
				prefix := p
				if p == RootPath {
					prefix = ""
				}
				err = walk(prefix+"/"+c.baseName(), c)
			}
		})
		if err != nil {
			return err
		}
		if r := n.run(); r != nil {
			if ParentPath(p) != tr.packRoot {
				return fmt.Errorf("%s: a run outside the pack root %q", p, tr.packRoot)
			}
			live := 0
			var prev uint64
			r.each(0, func(e runEntry) bool {
				cp := p + "/" + r.name(e.num)
				if live > 0 && e.num <= prev || e.num > r.last {
					err = fmt.Errorf("%s: entry out of order", cp)
					return false
				}
				prev = e.num
				live++
				if n.child(r.name(e.num)) != nil {
					err = fmt.Errorf("%s: packed and a node", cp)
					return false
				}
				g := tr.Get(cp)
				if g == nil || g.czxid != e.czxid {
					err = fmt.Errorf("%s: Get does not find the packed entry", cp)
					return false
				}
				sum += tr.term(g, cp)
				size += int64(len(cp) + g.dataSize())
				refs[r.acl]++
				packed++
				return true
			})
			if err == nil && live != r.live {
				err = fmt.Errorf("%s: run counts %d live, holds %d", p, r.live, live)
			}
		}
		return err
	}
	if err := walk(RootPath, tr.root); err != nil {
		return err
	}
	if packed != tr.packed {
		return fmt.Errorf("%d packed entries counted, tree says %d", tr.packed, packed)
	}
	if err := slabError(tr, paths); err != nil {
		return err
	}
	if sum != tr.nodeSum {
		return fmt.Errorf("node digest sum %x, recomputed %x", tr.nodeSum, sum)
	}
	if size != tr.dataSize {
		return fmt.Errorf("data size %d, recomputed %d", tr.dataSize, size)
	}
	nonEmpty := map[int64]map[string]struct{}{}
	for id, set := range tr.ephemerals {
		if len(set) > 0 {
			nonEmpty[id] = pathSet(set, paths)
		}
	}
	if ephCount != tr.ephemeralCount || !equalIndex(eph, nonEmpty) {
		return fmt.Errorf("ephemeral index differs: %v vs %v", eph, nonEmpty)
	}
	if !equalSet(containers, pathSet(tr.containers, paths)) || !equalSet(ttls, pathSet(tr.ttls, paths)) {
		return fmt.Errorf("container/ttl index differs")
	}
	seen := 0
	for h, e := range tr.acls.m {
		for ; e != nil; e = e.next {
			seen++
			if e.hash != h || hashACL(e.acl) != h {
				return fmt.Errorf("acl entry in wrong bucket")
			}
			if e.refs != refs[e.id] {
				return fmt.Errorf("acl %v refs %d, used by %d nodes", e.acl, e.refs, refs[e.id])
			}
			if tr.acls.entry(e.id) != e {
				return fmt.Errorf("acl %v: its id %d names another entry", e.acl, e.id)
			}
		}
	}
	if seen != len(refs) {
		return fmt.Errorf("acl cache holds %d lists, nodes use %d", seen, len(refs))
	}
	var ss uint64
	for id, to := range tr.sessions {
		ss += sessionHash(id, to)
	}
	if ss != tr.sessionSum {
		return fmt.Errorf("session digest stale")
	}
	return nil
}

// pathSet maps an index's nodes to their paths; a node not in the tree
// maps to a name that no path has.
func pathSet(set map[*Node]struct{}, paths map[*Node]string) map[string]struct{} {
	out := map[string]struct{}{}
	for n := range set {
		p, ok := paths[n]
		if !ok {
			p = fmt.Sprintf("(unlinked %p)", n)
		}
		out[p] = struct{}{}
	}
	return out
}

// childTableError checks n's child table: every child in the bucket its
// name hashes to, pointing back at n, counted; the load within bounds.
func childTableError(p string, n *Node) error {
	if n.ext == nil || n.ext.kids == nil {
		return nil
	}
	c := n.ext.kids
	buckets, count := 0, 0
	for si, seg := range c.segs {
		if si > 0 && cap(seg) != segSize {
			return fmt.Errorf("%s: segment %d of capacity %d", p, si, cap(seg))
		}
		if si < len(c.segs)-1 && len(seg) != segSize {
			return fmt.Errorf("%s: inner segment %d holds %d buckets", p, si, len(seg))
		}
		for bi, head := range seg {
			b := int32(buckets + bi)
			for k := c.nodes.node(head); k != nil; k = c.nodes.node(k.next) {
				count++
				if c.nodes.node(k.parent) != n {
					return fmt.Errorf("%s: child %q has another parent", p, k.baseName())
				}
				if h := nameHash(k.baseName()); k.tag() != uint8(h>>56) {
					return fmt.Errorf("%s: child %q has tag %#x, its hash %#x", p, k.baseName(), k.tag(), h)
				}
				if bucketOf(nameHash(k.baseName()), c.nb) != b {
					return fmt.Errorf("%s: child %q in bucket %d, belongs in %d", p, k.baseName(), b, bucketOf(nameHash(k.baseName()), c.nb))
				}
			}
		}
		buckets += len(seg)
	}
	if int32(buckets) != c.nb || int32(count) != c.n {
		return fmt.Errorf("%s: table has %d buckets and %d children, says %d and %d", p, buckets, count, c.nb, c.n)
	}
	if c.n > maxLoad*c.nb || (c.nb > 1 && c.n*minLoadInv < c.nb) {
		return fmt.Errorf("%s: %d children in %d buckets", p, c.n, c.nb)
	}
	return nil
}

// slabError checks the node allocator against the nodes the tree links:
// every live slot linked, every slab's count and free list right, the
// partial list holding exactly the slabs with free slots.
func slabError(tr *Tree, linked map[*Node]string) error {
	a := &tr.nodes
	live := 0
	partial := map[int32]bool{}
	for i, si := range a.partial {
		if a.info(si).partial != int32(i) {
			return fmt.Errorf("slab %d at partial[%d] says %d", si, i, a.info(si).partial)
		}
		partial[si] = true
	}
	spare := map[int32]bool{}
	for _, si := range a.spare {
		spare[si] = true
	}
	if len(a.ptrs) != int(a.n) {
		return fmt.Errorf("%d slab pointers for %d slab indexes", len(a.ptrs), a.n)
	}
	for si := int32(0); si < a.n; si++ {
		info := a.info(si)
		if a.ptrs[si] != info.s {
			return fmt.Errorf("slab %d: pointer out of step with its bookkeeping", si)
		}
		if info.s == nil {
			if !spare[si] || partial[si] {
				return fmt.Errorf("released slab %d not spare, or partial", si)
			}
			continue
		}
		used := 0
		for j := range info.s {
			n := &info.s[j]
			if n.slab() != si {
				return fmt.Errorf("slot %d of slab %d says slab %d", j, si, n.slab())
			}
			if n.isFree() {
				continue
			}
			used++
			if _, ok := linked[n]; !ok {
				return fmt.Errorf("slot %d of slab %d holds a node the tree does not link", j, si)
			}
		}
		free := 0
		for n := info.free; n != nil; n = tr.nodes.node(n.next) {
			if !n.isFree() || n.slab() != si {
				return fmt.Errorf("slab %d's free list holds a live or foreign slot", si)
			}
			free++
		}
		if used != int(info.used) || used+free != slabNodes {
			return fmt.Errorf("slab %d: %d used (says %d), %d free", si, used, info.used, free)
		}
		if partial[si] != (free > 0) {
			return fmt.Errorf("slab %d with %d free slots: in the partial list %v", si, free, partial[si])
		}
		live += used
	}
	if live != a.live || live != len(linked) {
		return fmt.Errorf("slabs hold %d nodes, count %d, the tree links %d", live, a.live, len(linked))
	}
	return nil
}

func equalSet(a, b map[string]struct{}) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func equalIndex(a, b map[int64]map[string]struct{}) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !equalSet(v, b[k]) {
			return false
		}
	}
	return true
}

// dumpNode is a node as a snapshot records it.
type dumpNode struct {
	path string
	data []byte
	acl  []wire.ACL
	st   PStat
}

// dumpTree lists the tree's nodes by path.
func dumpTree(tr *Tree) map[string]dumpNode {
	out := map[string]dumpNode{}
	var walk func(p string, n *Node)
	walk = func(p string, n *Node) {
		out[p] = dumpNode{path: p, data: n.Data(), acl: tr.ACL(n), st: n.Persisted()}
		tr.eachPacked(n, func(name string, czxid, ctime int64, data []byte) {
			cp := p + "/" + name
			out[cp] = dumpNode{path: cp, data: data, acl: tr.acls.entry(n.run().acl).acl, st: entryPStat(czxid, ctime)}
		})
		n.eachChild(func(c *Node) {
			prefix := p
			if p == RootPath {
				prefix = ""
			}
			walk(prefix+"/"+c.baseName(), c)
		})
	}
	walk(RootPath, tr.root)
	return out
}

// diffTrees describes the first differences between two trees, for failure
// messages that say more than "digests differ".
func diffTrees(a, b *Tree) string {
	var out []string
	da, db := dumpTree(a), dumpTree(b)
	for p, n := range da {
		m, ok := db[p]
		switch {
		case !ok:
			out = append(out, "only in first: "+p)
		case n.st != m.st:
			out = append(out, fmt.Sprintf("%s: stat %+v vs %+v", p, n.st, m.st))
		case !bytes.Equal(n.data, m.data) || (n.data == nil) != (m.data == nil):
			out = append(out, p+": data differs")
		case !slices.Equal(n.acl, m.acl):
			out = append(out, fmt.Sprintf("%s: acl %v vs %v", p, n.acl, m.acl))
		case a.Get(p).numChildren() != b.Get(p).numChildren():
			out = append(out, fmt.Sprintf("%s: %d vs %d children", p, a.Get(p).numChildren(), b.Get(p).numChildren()))
		}
	}
	for p := range db {
		if _, ok := da[p]; !ok {
			out = append(out, "only in second: "+p)
		}
	}
	if len(a.sessions) != len(b.sessions) {
		out = append(out, fmt.Sprintf("sessions %v vs %v", a.sessions, b.sessions))
	}
	slices.Sort(out)
	if len(out) > 20 {
		out = append(out[:20], "...")
	}
	return fmt.Sprint(out)
}

// encodeSnapshot writes nodes (in the order given) and sessions in the
// snapshot format, for hand-made fuzzy snapshots: a writer that missed a
// node, or caught one from another moment.
func encodeSnapshot(lastZxid int64, sessions map[int64]int32, nodes []dumpNode) []byte {
	b := []byte(snapMagic)
	b = append(b, snapVersion)
	b = binary.AppendVarint(b, lastZxid)
	b = binary.AppendUvarint(b, uint64(len(nodes)))
	for id, to := range sessions {
		b = append(b, tagSession)
		b = binary.AppendVarint(b, id)
		b = binary.AppendVarint(b, int64(to))
	}
	for i, n := range nodes {
		b = append(b, tagACL)
		b = binary.AppendUvarint(b, uint64(i+1))
		b = binary.AppendUvarint(b, uint64(len(n.acl)))
		for _, a := range n.acl {
			b = binary.AppendVarint(b, int64(a.Perms))
			b = appendSnapString(b, a.ID.Scheme)
			b = appendSnapString(b, a.ID.ID)
		}
		b = append(b, tagNode)
		b = appendSnapString(b, n.path)
		if n.data == nil {
			b = append(b, 0)
		} else {
			b = binary.AppendUvarint(b, uint64(len(n.data))+1)
			b = append(b, n.data...)
		}
		s := n.st
		b = binary.AppendUvarint(b, uint64(i+1))
		for _, v := range []int64{s.Czxid, s.Mzxid, s.Ctime, s.Mtime, int64(s.Version), int64(s.CVersion), int64(s.Aversion), s.EphemeralOwner, s.Pzxid} {
			b = binary.AppendVarint(b, v)
		}
	}
	b = append(b, tagEnd)
	b = binary.AppendUvarint(b, uint64(len(nodes)))
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

func statOf(t testing.TB, tr *Tree, path string) wire.Stat {
	t.Helper()
	n := tr.Get(path)
	if n == nil {
		t.Fatalf("%s does not exist", path)
	}
	var s wire.Stat
	n.Stat(&s)
	return s
}
