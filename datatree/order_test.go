package datatree

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

// quickApplier applies without checking the invariants after every
// transaction, for trees of thousands of nodes.
type quickApplier struct {
	tr   *Tree
	zxid int64
	r    Result
}

func (q *quickApplier) apply(t *testing.T, tx *txn.Txn) {
	t.Helper()
	q.zxid++
	q.r.Events = q.r.Events[:0]
	q.tr.Apply(&txn.Header{Zxid: q.zxid, Time: q.zxid, Type: tx.Type}, tx, &q.r)
	if q.r.Err != wire.CodeOK {
		t.Fatalf("%v %s: %v", tx.Type, tx.Path, q.r.Err)
	}
}

func (q *quickApplier) create(t *testing.T, path string) {
	t.Helper()
	q.apply(t, &txn.Txn{Type: wire.OpCreate, Path: path, Data: []byte(path), ACL: wire.OpenACLUnsafe, ParentCVersion: -1})
}

func (q *quickApplier) del(t *testing.T, path string) {
	t.Helper()
	q.apply(t, &txn.Txn{Type: wire.OpDelete, Path: path})
}

// orderPaths lists the paths in the order a snapshot walks them: the
// slabs' order.
func orderPaths(tr *Tree) []string {
	var out []string
	for si := int32(0); si < tr.nodes.n; si++ {
		s := tr.nodes.slabAt(si)
		if s == nil {
			continue
		}
		for j := range s {
			if !s[j].isFree() {
				out = append(out, tr.pathOf(&s[j]))
			}
		}
	}
	return out
}

// TestSnapshotWalksInsertionOrder: a snapshot lists the nodes in the order
// they were created, and a tree read from it keeps that order.
func TestSnapshotWalksInsertionOrder(t *testing.T) {
	q := &quickApplier{tr: New(), zxid: 1}
	want := orderPaths(q.tr)
	for i := range 50 {
		p := fmt.Sprintf("/n%03d", 49-i) // names against the creation order
		q.create(t, p)
		want = append(want, p)
	}
	q.create(t, "/n000/c")
	want = append(want, "/n000/c")
	checkInvariants(t, q.tr)
	if got := orderPaths(q.tr); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	back, err := ReadSnapshot(bytes.NewReader(snapshotBytes(t, q.tr)))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, back)
	if got := orderPaths(back); !slices.Equal(got, want) {
		t.Fatalf("order read back %v, want %v", got, want)
	}
}

// TestSnapshotWalkWhileTreeChanges: removals and creates between a
// snapshot's chunks empty and release slabs and reuse slots under the walk;
// every node that existed throughout is still in the snapshot, and the
// tree's bookkeeping holds.
func TestSnapshotWalkWhileTreeChanges(t *testing.T) {
	q := &quickApplier{tr: New(), zxid: 1}
	q.create(t, "/a")
	const n = 3000
	for i := range n {
		q.create(t, fmt.Sprintf("/a/n%05d", i))
	}
	slabsBefore := liveSlabs(q.tr)
	const deleted = 2500
	yields := 0
	var buf bytes.Buffer
	err := q.tr.WriteSnapshot(&buf, func(write func()) {
		yields++
		if yields == 1 {
			// Between the first chunks, as apply would: most of the
			// tree goes, some is added in the slots it left.
			for i := range deleted {
				q.del(t, fmt.Sprintf("/a/n%05d", i))
			}
			if got := liveSlabs(q.tr); got >= slabsBefore {
				t.Errorf("%d slabs after deleting %d of %d nodes, %d before: none released", got, deleted, n, slabsBefore)
			}
			for i := range 100 {
				q.create(t, fmt.Sprintf("/b%d", i))
			}
			checkInvariants(t, q.tr)
		}
		write()
	})
	if err != nil {
		t.Fatal(err)
	}
	if yields == 0 {
		t.Fatalf("the snapshot of %d nodes never yielded", n)
	}
	checkInvariants(t, q.tr)
	got, err := ReadSnapshot(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, got)
	for i := deleted; i < n; i++ {
		if p := fmt.Sprintf("/a/n%05d", i); got.Get(p) == nil {
			t.Fatalf("%s existed throughout the snapshot and is not in it", p)
		}
	}
	checkSnapshotRoundTrip(t, q.tr, snapshotBytes(t, q.tr))
}

func liveSlabs(tr *Tree) int {
	c := 0
	for si := int32(0); si < tr.nodes.n; si++ {
		if tr.nodes.slabAt(si) != nil {
			c++
		}
	}
	return c
}

// TestSlabsReleased: a tree that grows and shrinks back gives its slabs
// back, keeping at most one empty one, and fills freed slots before it
// takes new slabs.
func TestSlabsReleased(t *testing.T) {
	q := &quickApplier{tr: New(), zxid: 1}
	base := liveSlabs(q.tr)
	q.create(t, "/a")
	const n = 20 * slabNodes
	for round := range 3 {
		for i := range n {
			q.create(t, fmt.Sprintf("/a/n%d", i))
		}
		if got, want := liveSlabs(q.tr), (q.tr.NodeCount()+slabNodes-1)/slabNodes+1; got > want {
			t.Fatalf("round %d: %d slabs for %d nodes, want at most %d", round, got, q.tr.NodeCount(), want)
		}
		for i := range n {
			q.del(t, fmt.Sprintf("/a/n%d", i))
		}
		checkInvariants(t, q.tr)
		if got := liveSlabs(q.tr); got > base+1 {
			t.Fatalf("round %d: %d slabs after deleting everything, %d at the start", round, got, base)
		}
	}
}
