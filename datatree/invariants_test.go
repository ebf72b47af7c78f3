package datatree

import (
	"bytes"
	"fmt"
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
	if tr.nodes[RootPath] == nil || tr.root != tr.nodes[RootPath] {
		return fmt.Errorf("root missing or stale")
	}
	var sum uint64
	var size int64
	eph := map[int64]map[string]struct{}{}
	ephCount := 0
	containers := map[string]struct{}{}
	ttls := map[string]struct{}{}
	refs := map[*aclEntry]int{}
	for p, n := range tr.nodes {
		if p != RootPath {
			parent := tr.nodes[ParentPath(p)]
			if parent == nil {
				return fmt.Errorf("%s: parent missing", p)
			}
			if k := parent.childNodes(); n.slot < 0 || int(n.slot) >= len(k) || k[n.slot] != n {
				return fmt.Errorf("%s: not in its parent's children at its slot %d", p, n.slot)
			}
		}
		if n.path != p {
			return fmt.Errorf("%s: node says its path is %s", p, n.path)
		}
		for i, c := range n.childNodes() {
			if tr.nodes[c.path] != c || ParentPath(c.path) != p || int(c.slot) != i {
				return fmt.Errorf("%s: child %q at %d not in the map, or not its child, or slot %d", p, c.path, i, c.slot)
			}
		}
		h := n.hash
		n.rehash()
		if h != n.hash {
			return fmt.Errorf("%s: stale node hash", p)
		}
		sum += n.hash
		size += int64(len(p) + n.dataSize())
		refs[n.acl]++
		switch kindOf(n.stat.EphemeralOwner) {
		case kindEphemeral:
			if eph[n.stat.EphemeralOwner] == nil {
				eph[n.stat.EphemeralOwner] = map[string]struct{}{}
			}
			eph[n.stat.EphemeralOwner][p] = struct{}{}
			ephCount++
		case kindContainer:
			containers[p] = struct{}{}
		case kindTTL:
			ttls[p] = struct{}{}
		}
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
			nonEmpty[id] = set
		}
	}
	if ephCount != tr.ephemeralCount || !equalIndex(eph, nonEmpty) {
		return fmt.Errorf("ephemeral index differs: %v vs %v", eph, tr.ephemerals)
	}
	if !equalSet(containers, tr.containers) || !equalSet(ttls, tr.ttls) {
		return fmt.Errorf("container/ttl index differs")
	}
	seen := 0
	for h, e := range tr.acls.m {
		for ; e != nil; e = e.next {
			seen++
			if e.hash != h || hashACL(e.acl) != h {
				return fmt.Errorf("acl entry in wrong bucket")
			}
			if e.refs != refs[e] {
				return fmt.Errorf("acl %v refs %d, used by %d nodes", e.acl, e.refs, refs[e])
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
	return orderError(tr)
}

// orderError checks Tree.order: every node once, at its pos, under its
// path; the holes counted.
func orderError(tr *Tree) error {
	holes, live := 0, 0
	for i, n := range tr.order {
		if n == nil {
			holes++
			continue
		}
		live++
		if int(n.pos) != i {
			return fmt.Errorf("order[%d] is %s with pos %d", i, n.path, n.pos)
		}
		if tr.nodes[n.path] != n {
			return fmt.Errorf("order[%d] is %s, which the map does not hold", i, n.path)
		}
	}
	if holes != tr.holes {
		return fmt.Errorf("order has %d holes, counted %d", holes, tr.holes)
	}
	if live != len(tr.nodes) {
		return fmt.Errorf("order holds %d nodes, the map %d", live, len(tr.nodes))
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

// diffTrees describes the first differences between two trees, for failure
// messages that say more than "digests differ".
func diffTrees(a, b *Tree) string {
	var out []string
	for p, n := range a.nodes {
		m := b.nodes[p]
		switch {
		case m == nil:
			out = append(out, "only in first: "+p)
		case n.stat != m.stat:
			out = append(out, fmt.Sprintf("%s: stat %+v vs %+v", p, n.stat, m.stat))
		case !bytes.Equal(n.Data(), m.Data()) || (n.Data() == nil) != (m.Data() == nil):
			out = append(out, p+": data differs")
		case !slices.Equal(n.acl.acl, m.acl.acl):
			out = append(out, fmt.Sprintf("%s: acl %v vs %v", p, n.acl.acl, m.acl.acl))
		case n.numChildren() != m.numChildren():
			out = append(out, fmt.Sprintf("%s: %d vs %d children", p, n.numChildren(), m.numChildren()))
		}
	}
	for p := range b.nodes {
		if a.nodes[p] == nil {
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
