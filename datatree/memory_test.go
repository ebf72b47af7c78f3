package datatree

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

var (
	memFull    = flag.Bool("mem", false, "TestMemoryPerZnode: build the full-size trees (1,000,000 and 100,000 znodes)")
	memProfile = flag.String("mem.profile", "", "TestMemoryPerZnode: write a heap profile of each tree, while it is live, to this prefix + the shape's name")
	memOnly    = flag.String("mem.shape", "", "TestMemoryPerZnode: build only the shapes whose name contains this")
)

// memShape is a tree TestMemoryPerZnode builds: count znodes of size bytes
// of data, under parents of fanout children each.
type memShape struct {
	name   string
	count  int
	size   int
	fanout int
	// path of the i-th znode; its parent is created first.
	path   func(i int) string
	parent func(i int) string
	// shared makes each txn's data a slice of its encoded record, as the
	// leader's proposals are (txn.AppendShared); otherwise the data is its
	// own allocation, as a follower's decoded txns are.
	shared bool
}

func memShapes(scale int) []memShape {
	flat := func(i int) string { return fmt.Sprintf("/app/%d/%d", i/1000, i) }
	flatParent := func(i int) string { return fmt.Sprintf("/app/%d", i/1000) }
	seq := func(i int) string { return fmt.Sprintf("/queue/%d/item-%010d", i/10000, i%10000) }
	seqParent := func(i int) string { return fmt.Sprintf("/queue/%d", i/10000) }
	return []memShape{
		{name: "1M×100B", count: 1_000_000 / scale, size: 100, path: flat, parent: flatParent},
		{name: "100k×1KiB", count: 100_000 / scale, size: 1024, path: seq, parent: seqParent},
		{name: "1M×100B/leader", count: 1_000_000 / scale, size: 100, path: flat, parent: flatParent, shared: true},
		{name: "100k×1KiB/leader", count: 100_000 / scale, size: 1024, path: seq, parent: seqParent, shared: true},
	}
}

func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// buildMemShape applies the shape's creates to a fresh tree, as the server
// does (one txn per create, data not shared with anything but the tree).
func buildMemShape(s memShape) *Tree {
	tr := New()
	var r Result
	zxid := int64(0)
	apply := func(tx *txn.Txn) {
		zxid++
		h := txn.Header{Zxid: zxid, Time: zxid, Type: tx.Type, SessionID: 1}
		if s.shared {
			_ = txn.AppendShared(make([]byte, 0, txn.SizeHint(tx)), &h, tx)
		}
		r.Events = r.Events[:0]
		tr.Apply(&h, tx, &r)
		if r.Err != wire.CodeOK {
			panic(fmt.Sprintf("create %s: %v", tx.Path, r.Err))
		}
	}
	root := s.parent(0)
	root = root[:len(root)-len(BaseName(root))-1]
	apply(&txn.Txn{Type: wire.OpCreate, Path: root, ParentCVersion: -1})
	last := ""
	for i := 0; i < s.count; i++ {
		if p := s.parent(i); p != last {
			apply(&txn.Txn{Type: wire.OpCreate, Path: p, ParentCVersion: -1})
			last = p
		}
		data := make([]byte, s.size)
		data[0] = byte(i)
		apply(&txn.Txn{Type: wire.OpCreate, Path: s.path(i), Data: data, ACL: wire.OpenACLUnsafe, ParentCVersion: -1})
	}
	return tr
}

// TestMemoryPerZnode reports the live heap a tree costs per znode, and its
// ratio to the raw bytes it holds (paths + data, ApproximateDataSize). By
// default it builds trees a hundredth of the size; -mem builds 1,000,000
// znodes of 100 B and 100,000 of 1 KiB. The breakdown by allocation site:
//
//	go test -run TestMemoryPerZnode -mem -mem.shape=1M -memprofilerate=512 \
//	    -mem.profile=/tmp/tree.heap ./datatree
//	go tool pprof -top -sample_index=inuse_space /tmp/tree.heap.1Mx100B
func TestMemoryPerZnode(t *testing.T) {
	scale := 100
	if *memFull {
		scale = 1
	}
	for _, s := range memShapes(scale) {
		if !strings.Contains(s.name, *memOnly) {
			continue
		}
		before := liveHeap()
		tr := buildMemShape(s)
		after := liveHeap()
		nodes := tr.NodeCount()
		raw := tr.ApproximateDataSize()
		heap := int64(after) - int64(before)
		per := float64(heap) / float64(nodes)
		rawPer := float64(raw) / float64(nodes)
		t.Logf("%-17s %8d znodes: %7.1f heap bytes/znode, %7.1f raw bytes/znode, ratio %.2f",
			s.name, nodes, per, rawPer, per/rawPer)
		// A bound far above any representation worth keeping: it fails
		// only if a node starts costing a kilobyte more than its bytes.
		if per-rawPer > 1024 {
			t.Errorf("%s: %.0f bytes/znode of overhead", s.name, per-rawPer)
		}
		if *memProfile != "" {
			writeHeapProfile(t, *memProfile+"."+strings.NewReplacer("×", "x", "/", "-").Replace(s.name))
		}
		runtime.KeepAlive(tr)
	}
}

// writeHeapProfile writes the heap profile as of now (the last
// collection's live objects) to file. Read it with
// go tool pprof -top -sample_index=inuse_space file.
func writeHeapProfile(t *testing.T, file string) {
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("heap profile in %s", file)
}
