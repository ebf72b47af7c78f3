package datatree

import (
	"fmt"
	"testing"
)

// TestChildTableGrowsOneBucketAtATime: a parent's table never rehashes as
// a whole. Each add adds at most one bucket, a full segment is never
// copied (only the first, which is at most segSize buckets, grows by
// reallocation), each remove drops at most two buckets, and a table
// emptied of many children shrinks back to one bucket.
func TestChildTableGrowsOneBucketAtATime(t *testing.T) {
	const n = 5 * segSize * maxLoad
	var na nodeAlloc
	c := newChildTable(&na)
	parent := na.alloc()
	parent.ext = &nodeExt{kids: c}
	nodes := make([]*Node, n)
	// The first bucket of each full segment, to check it never moves.
	firsts := map[int]*nodeRef{}
	for i := range nodes {
		k := na.alloc()
		k.parent = na.ref(parent)
		k.setTestName(fmt.Sprintf("c%d", i))
		nodes[i] = k
		before := c.nb
		c.add(k)
		if c.nb-before > 1 {
			t.Fatalf("add %d: %d buckets became %d", i, before, c.nb)
		}
		for s := 1; s < len(c.segs); s++ {
			if firsts[s] == nil {
				firsts[s] = &c.segs[s][0]
			} else if firsts[s] != &c.segs[s][0] {
				t.Fatalf("add %d: segment %d was reallocated", i, s)
			}
		}
		if i%997 == 0 {
			if err := childTableError("/p", parent); err != nil {
				t.Fatalf("after %d adds: %v", i+1, err)
			}
		}
	}
	if c.n != n || c.nb <= segSize*2 {
		t.Fatalf("%d children in %d buckets", c.n, c.nb)
	}
	for i, k := range nodes {
		if c.get(k.baseName()) != k {
			t.Fatalf("child %d not found", i)
		}
	}
	if c.get("c-none") != nil {
		t.Fatal("found a child never added")
	}
	for i, k := range nodes {
		before := c.nb
		c.remove(k)
		if before-c.nb > 2 {
			t.Fatalf("remove %d: %d buckets became %d", i, before, c.nb)
		}
		if c.get(k.baseName()) != nil {
			t.Fatalf("child %d found after its removal", i)
		}
		if i%997 == 0 {
			if err := childTableError("/p", parent); err != nil {
				t.Fatalf("after %d removes: %v", i+1, err)
			}
		}
	}
	if c.n != 0 || c.nb != 1 || len(c.segs) != 1 || cap(c.segs[0]) > 8 {
		t.Fatalf("emptied table: %d children, %d buckets, %d segments, first of capacity %d", c.n, c.nb, len(c.segs), cap(c.segs[0]))
	}
}

// TestChildTableLookupWithCollidingPrefixes: names that differ only in
// length or in their last byte are told apart.
func TestChildTableLookupWithCollidingPrefixes(t *testing.T) {
	var na nodeAlloc
	c := newChildTable(&na)
	names := []string{"a", "aa", "aaa", "ab", "b", "ba", "a\x00", "é", "e"}
	for _, name := range names {
		k := na.alloc()
		k.setTestName(name)
		c.add(k)
	}
	for _, name := range names {
		if k := c.get(name); k == nil || k.baseName() != name {
			t.Errorf("get(%q) = %v", name, k)
		}
	}
	for _, name := range []string{"", "aaaa", "c", "a\x00\x00"} {
		if c.get(name) != nil {
			t.Errorf("get(%q) found a node", name)
		}
	}
}

// setTestName gives a node made outside any tree the base name name (a
// record of its own, null data).
func (n *Node) setTestName(name string) {
	n.rec = &appendRecord(nil, name, recStat{}, nil)[0]
}
