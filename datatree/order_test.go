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

func orderPaths(tr *Tree) []string {
	var out []string
	for _, n := range tr.order {
		if n != nil {
			out = append(out, n.path)
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

// TestOrderCompactsOnlyBetweenWalks: removals during a snapshot leave
// holes (the walk must not see nodes move under it) and every node that
// existed throughout is in the snapshot; the next removal after the walk
// compacts the order.
func TestOrderCompactsOnlyBetweenWalks(t *testing.T) {
	q := &quickApplier{tr: New(), zxid: 1}
	q.create(t, "/a")
	const n = 3000
	for i := range n {
		q.create(t, fmt.Sprintf("/a/n%05d", i))
	}
	const deleted = 2500
	yields := 0
	var buf bytes.Buffer
	err := q.tr.WriteSnapshot(&buf, func(write func()) {
		yields++
		if yields == 1 {
			// Between the first chunks, as apply would: most of the
			// tree goes, some is added.
			for i := range deleted {
				q.del(t, fmt.Sprintf("/a/n%05d", i))
			}
			q.create(t, "/b")
			if q.tr.holes != deleted {
				t.Errorf("holes %d during the walk, want %d (no compaction)", q.tr.holes, deleted)
			}
		}
		write()
	})
	if err != nil {
		t.Fatal(err)
	}
	if yields == 0 {
		t.Fatalf("the snapshot of %d nodes never yielded", n)
	}
	if q.tr.walkers.Load() != 0 {
		t.Fatalf("walkers %d after the snapshot", q.tr.walkers.Load())
	}
	checkInvariants(t, q.tr)
	got, err := ReadSnapshot(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i := deleted; i < n; i++ {
		if p := fmt.Sprintf("/a/n%05d", i); got.Get(p) == nil {
			t.Fatalf("%s existed throughout the snapshot and is not in it", p)
		}
	}
	q.del(t, fmt.Sprintf("/a/n%05d", n-1))
	if q.tr.holes != 0 || len(q.tr.order) != len(q.tr.nodes) {
		t.Fatalf("after a removal outside a walk: %d holes, order %d, nodes %d", q.tr.holes, len(q.tr.order), len(q.tr.nodes))
	}
	checkInvariants(t, q.tr)
	checkSnapshotRoundTrip(t, q.tr, snapshotBytes(t, q.tr))
}
