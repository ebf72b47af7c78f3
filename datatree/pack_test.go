package datatree

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

const packTestRoot = "/logs"

var packSeeds = flag.Int("pack.seeds", 0, "TestFuzzySnapshotReplayPacked: seeds to run (default 6, 2 with -short)")

// testCodec packs data "ref:" + the entry's czxid (8 bytes) into one byte,
// as the server's codec packs a data-log reference.
type testCodec struct{}

func testRef(czxid int64) []byte { return binary.BigEndian.AppendUint64([]byte("ref:"), uint64(czxid)) }

func (testCodec) Pack(dst []byte, czxid int64, data []byte) ([]byte, bool) {
	if !bytes.Equal(data, testRef(czxid)) {
		return dst, false
	}
	return append(dst, 'R'), true
}

func (testCodec) Unpack(czxid int64, _ []byte) []byte { return testRef(czxid) }

// diffResults compares two Apply results, events included.
func diffResults(a, b *Result) string {
	switch {
	case a.Err != b.Err || a.Path != b.Path:
		return fmt.Sprintf("err/path %v %q vs %v %q", a.Err, a.Path, b.Err, b.Path)
	case a.Stat != b.Stat:
		return fmt.Sprintf("stat %+v vs %+v", a.Stat, b.Stat)
	case !slices.Equal(a.Multi, b.Multi):
		return fmt.Sprintf("multi %+v vs %+v", a.Multi, b.Multi)
	case len(a.Events) != len(b.Events):
		return fmt.Sprintf("events %+v vs %+v", a.Events, b.Events)
	}
	for i := range a.Events {
		x, y := a.Events[i], b.Events[i]
		if x.Type != y.Type || x.Path != y.Path || x.Zxid != y.Zxid || !slices.Equal(x.ACL, y.ACL) {
			return fmt.Sprintf("event %d: %+v vs %+v", i, x, y)
		}
	}
	return ""
}

// logOp is a transaction on the logs under packTestRoot: mostly appends
// (some of which cannot be packed: big data, another ACL, ephemeral, a
// foreign name), trims and deletes, and the writes that unpack an entry
// (setData, setACL, a create under it).
func (w *workload) logOp(tr *Tree) (*txn.Header, *txn.Txn) {
	if tr.Get(packTestRoot) == nil {
		tx := txn.Txn{Type: wire.OpCreate, Path: packTestRoot, ACL: wire.OpenACLUnsafe, ParentCVersion: tr.Get("/").Persisted().CVersion + 1}
		return w.header(wire.OpCreate, 0), &tx
	}
	l := fmt.Sprintf("%s/l%d", packTestRoot, w.rng.IntN(3))
	ln := tr.Get(l)
	if ln == nil {
		tx := txn.Txn{Type: wire.OpCreate, Path: l, ACL: wire.OpenACLUnsafe, ParentCVersion: tr.Get(packTestRoot).Persisted().CVersion + 1}
		return w.header(wire.OpCreate, 0), &tx
	}
	kids := ln.Children(nil)
	slices.Sort(kids)
	entry := func() string { return l + "/" + kids[w.rng.IntN(len(kids))] }
	appendOp := func(cv int32, zxid int64) txn.Txn {
		tx := txn.Txn{Type: wire.OpCreate2, Path: l + "/e-" + SequentialSuffix(cv), ACL: wire.OpenACLUnsafe, ParentCVersion: cv + 1}
		switch r := w.rng.IntN(100); {
		case r < 40:
			tx.Data = testRef(zxid)
		case r < 45:
			tx.Data = testRef(zxid - 1) // a reference the codec refuses
		case r < 50:
			tx.Data = nil
		case r < 54:
			tx.Data = make([]byte, maxRawPacked+1+w.rng.IntN(100))
		case r < 57:
			tx.ACL = wire.ReadACLUnsafe
		case r < 60:
			tx.Ephemeral = true
		case r < 62:
			tx.Path = l + "/x" + SequentialSuffix(cv)[4:]
		default:
			tx.Data = make([]byte, w.rng.IntN(40))
			for i := range tx.Data {
				tx.Data[i] = byte(w.rng.Uint32())
			}
		}
		return tx
	}
	cv := ln.Persisted().CVersion
	switch r := w.rng.IntN(100); {
	case r < 60 || len(kids) == 0:
		tx := appendOp(cv, w.zxid+1)
		session := int64(0)
		if tx.Ephemeral {
			session = w.session()
		}
		return w.header(tx.Type, session), &tx
	case r < 64:
		// Two appends in one multi: one zxid, two entries.
		a, b := appendOp(cv, w.zxid+1), appendOp(cv+1, w.zxid+1)
		a.Ephemeral, b.Ephemeral = false, false
		return w.header(wire.OpMulti, 0), &txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{a, b}}
	case r < 75:
		// Trim: the oldest entries, or one at random.
		picked := slices.Clone(kids[:min(len(kids), 1+w.rng.IntN(3))])
		if r >= 72 {
			for i := range picked {
				picked[i] = kids[w.rng.IntN(len(kids))]
			}
			slices.Sort(picked)
			picked = slices.Compact(picked)
		}
		var ops []txn.Txn
		for _, k := range picked {
			if tr.Get(l+"/"+k+"/sub") != nil {
				ops = append(ops, txn.Txn{Type: wire.OpDelete, Path: l + "/" + k + "/sub"})
			}
			ops = append(ops, txn.Txn{Type: wire.OpDelete, Path: l + "/" + k})
		}
		return w.header(wire.OpMulti, 0), &txn.Txn{Type: wire.OpMulti, Ops: ops}
	case r < 85:
		p := entry()
		n := tr.Get(p)
		return w.header(wire.OpSetData, 0), &txn.Txn{Type: wire.OpSetData, Path: p, Data: []byte("set"), Version: n.Persisted().Version + 1}
	case r < 89:
		p := entry()
		n := tr.Get(p)
		return w.header(wire.OpSetACL, 0), &txn.Txn{Type: wire.OpSetACL, Path: p, ACL: wire.ReadACLUnsafe, Version: n.Persisted().Aversion + 1}
	case r < 94 || w.rng.IntN(100) > 0:
		p := entry()
		n := tr.Get(p)
		if n.IsEphemeral() || n.NumChildren() > 0 {
			return w.header(wire.OpError, 0), &txn.Txn{Type: wire.OpError, Err: wire.CodeNodeExists}
		}
		tx := txn.Txn{Type: wire.OpCreate, Path: p + "/sub", Data: []byte("s"), ACL: wire.OpenACLUnsafe, ParentCVersion: n.Persisted().CVersion + 1}
		return w.header(wire.OpCreate, 0), &tx
	default:
		// Delete the whole log, entries first.
		var ops []txn.Txn
		for _, k := range kids {
			if tr.Get(l+"/"+k+"/sub") != nil {
				ops = append(ops, txn.Txn{Type: wire.OpDelete, Path: l + "/" + k + "/sub"})
			}
			ops = append(ops, txn.Txn{Type: wire.OpDelete, Path: l + "/" + k})
		}
		ops = append(ops, txn.Txn{Type: wire.OpDelete, Path: l})
		return w.header(wire.OpMulti, 0), &txn.Txn{Type: wire.OpMulti, Ops: ops}
	}
}

func TestFuzzySnapshotReplayPacked(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	if *packSeeds > 0 {
		seeds = *packSeeds
	}
	// Chunks of 50 records: the snapshot releases the lock inside runs.
	defer func(n int) { snapYieldEvery = n }(snapYieldEvery)
	snapYieldEvery = 50
	for seed := 1; seed <= seeds; seed++ {
		runFuzzyPacked(t, uint64(100+seed), true)
	}
}

func TestRunNamesAndBlocks(t *testing.T) {
	for _, c := range []struct {
		name   string
		prefix string
		width  int
		num    uint64
		ok     bool
	}{
		{"e-0000000007", "e-", 10, 7, true},
		{"00000000000000065536", "", 20, 65536, true},
		{"0", "", 1, 0, true},
		{"lock-", "", 0, 0, false},
		{"99999999999999999999", "", 0, 0, false}, // above 2^64-1
		{"a18446744073709551615", "a", 20, 1<<64 - 1, true},
	} {
		prefix, width, num, ok := splitEntryName(c.name)
		if ok != c.ok || ok && (prefix != c.prefix || width != c.width || num != c.num) {
			t.Errorf("%q: got %q %d %d %v, want %q %d %d %v", c.name, prefix, width, num, ok, c.prefix, c.width, c.num, c.ok)
			continue
		}
		if ok {
			r := &entryRun{prefix: prefix, width: width}
			if got := r.name(num); got != c.name {
				t.Errorf("%q: name prints %q", c.name, got)
			}
			if n, ok := r.parse(c.name); !ok || n != num {
				t.Errorf("%q: parse %d %v", c.name, n, ok)
			}
		}
	}
	r := &entryRun{prefix: "e-", width: 10}
	for _, bad := range []string{"e-000000001", "e-00000000012", "f-0000000001", "e-00000000x1"} {
		if _, ok := r.parse(bad); ok {
			t.Errorf("parse accepted %q", bad)
		}
	}

	// 1000 entries, numbers 3 apart, over 16 blocks; remove all but a few.
	for i := range 1000 {
		r.add(uint64(3*i+1), int64(100+i), int64(5000-i), encodeRaw(nil, []byte(fmt.Sprint(i))))
	}
	if len(r.blocks) != (1000+runBlockEntries-1)/runBlockEntries || r.live != 1000 {
		t.Fatalf("%d blocks, %d live", len(r.blocks), r.live)
	}
	for i := range 1000 {
		e, ok := r.get(uint64(3*i + 1))
		if b, _ := splitData(e.data); !ok || e.czxid != int64(100+i) || e.ctime != int64(5000-i) || string(b) != fmt.Sprint(i) {
			t.Fatalf("entry %d: %+v %v", i, e, ok)
		}
		if _, ok := r.get(uint64(3*i + 2)); ok {
			t.Fatalf("found a number never added")
		}
	}
	for i := range 1000 {
		if i%97 != 0 && !r.remove(uint64(3*i+1)) {
			t.Fatalf("remove %d failed", i)
		}
	}
	if r.remove(4) {
		t.Fatal("removed an entry twice")
	}
	var got []uint64
	r.each(0, func(e runEntry) bool { got = append(got, e.num); return true })
	want := []uint64{1, 292, 583, 874, 1165, 1456, 1747, 2038, 2329, 2620, 2911}
	if !slices.Equal(got, want) || r.live != len(want) || len(r.blocks) != len(want) {
		t.Fatalf("left %v (%d live, %d blocks), want %v", got, r.live, len(r.blocks), want)
	}
	got = got[:0]
	r.each(1000, func(e runEntry) bool { got = append(got, e.num); return len(got) < 2 })
	if !slices.Equal(got, []uint64{1165, 1456}) {
		t.Fatalf("each from 1000: %v", got)
	}

	// The last block emptied and dropped, then more entries: they start
	// a block of their own, their deltas from nothing dropped.
	r.remove(2911)
	for i := range 3 {
		r.add(uint64(5000+i), int64(9000+10*i), int64(7000-i), encodeRaw(nil, nil))
	}
	for i := range 3 {
		e, ok := r.get(uint64(5000 + i))
		if b, _ := splitData(e.data); !ok || e.czxid != int64(9000+10*i) || e.ctime != int64(7000-i) || b != nil {
			t.Fatalf("entry %d after the drop: %+v %v", 5000+i, e, ok)
		}
	}
}

// TestPackedEntriesReadAsNodes creates entries under a log with packing
// on and off and compares what every read sees, through a snapshot too.
func TestPackedEntriesReadAsNodes(t *testing.T) {
	trees := []*Tree{New(), New()}
	trees[0].SetPackRoot(packTestRoot, testCodec{})
	zxid := int64(0)
	apply := func(tx txn.Txn) []Result {
		zxid++
		out := make([]Result, len(trees))
		for i, tr := range trees {
			tr.Apply(&txn.Header{Zxid: zxid, Time: 1000 * zxid, Type: tx.Type}, &tx, &out[i])
		}
		if d := diffResults(&out[0], &out[1]); d != "" {
			t.Fatalf("%+v: %s", tx, d)
		}
		return out
	}
	apply(txn.Txn{Type: wire.OpCreate, Path: packTestRoot, ACL: wire.OpenACLUnsafe, ParentCVersion: 1})
	apply(txn.Txn{Type: wire.OpCreate, Path: "/logs/a", ACL: wire.OpenACLUnsafe, ParentCVersion: 1})
	for i := range 200 {
		data := testRef(zxid + 1)
		if i%3 == 0 {
			data = []byte(fmt.Sprint("inline ", i))
		}
		apply(txn.Txn{Type: wire.OpCreate2, Path: fmt.Sprintf("/logs/a/%020d", 1000*i), Data: data, ACL: wire.OpenACLUnsafe, ParentCVersion: int32(i + 1)})
	}
	packed := trees[0]
	if packed.PackedCount() != 200 || packed.nodes.live != trees[1].nodes.live-200 {
		t.Fatalf("%d packed, %d nodes against %d", packed.PackedCount(), packed.nodes.live, trees[1].nodes.live)
	}
	compare := func(a, b *Tree) {
		t.Helper()
		if a.Digest() != b.Digest() || a.NodeCount() != b.NodeCount() || a.ApproximateDataSize() != b.ApproximateDataSize() {
			t.Fatalf("digest/count/size differ: %s", diffTrees(a, b))
		}
		if d := diffTrees(a, b); d != "[]" {
			t.Fatal(d)
		}
		for _, p := range []string{"/logs/a", "/logs/a/00000000000000000000", "/logs/a/00000000000000001000", "/logs/a/00000000000000199000", "/logs/a/00000000000000000001", "/logs/a/x", "/logs/a/00000000000000001000/y"} {
			x, y := a.Get(p), b.Get(p)
			if (x == nil) != (y == nil) {
				t.Fatalf("%s: found in one tree only", p)
			}
			if x == nil {
				continue
			}
			var sx, sy wire.Stat
			x.Stat(&sx)
			y.Stat(&sy)
			cx, cy := x.Children(nil), y.Children(nil)
			slices.Sort(cx)
			slices.Sort(cy)
			if sx != sy || !bytes.Equal(x.Data(), y.Data()) || !slices.Equal(a.ACL(x), b.ACL(y)) || !slices.Equal(cx, cy) ||
				x.IsEphemeral() != y.IsEphemeral() || x.NumChildren() != y.NumChildren() {
				t.Fatalf("%s reads differently: %+v vs %+v", p, sx, sy)
			}
		}
		if a.CountDescendants("/logs") != b.CountDescendants("/logs") {
			t.Fatalf("descendants %d vs %d", a.CountDescendants("/logs"), b.CountDescendants("/logs"))
		}
		// EachChildData gives every child's data, packed or not, as
		// Children and Get do.
		for _, p := range []string{"/logs", "/logs/a", "/logs/a/00000000000000003000", "/logs/a/00000000000000004000", "/nope"} {
			var got []string
			a.EachChildData(p, func(d []byte) { got = append(got, string(d)) })
			var want []string
			if n := b.Get(p); n != nil {
				for _, c := range n.Children(nil) {
					want = append(want, string(b.Get(p+"/"+c).Data()))
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("EachChildData(%s): %d children's data, Children and Get %d", p, len(got), len(want))
			}
		}
		checkInvariants(t, a)
		checkInvariants(t, b)
	}
	compare(packed, trees[1])

	// The writes that unpack: setData, setACL, a child, a delete.
	apply(txn.Txn{Type: wire.OpSetData, Path: "/logs/a/00000000000000001000", Data: []byte("new"), Version: 1})
	apply(txn.Txn{Type: wire.OpSetACL, Path: "/logs/a/00000000000000002000", ACL: wire.ReadACLUnsafe, Version: 1})
	apply(txn.Txn{Type: wire.OpCreate, Path: "/logs/a/00000000000000003000/y", ACL: wire.OpenACLUnsafe, ParentCVersion: 1})
	apply(txn.Txn{Type: wire.OpDelete, Path: "/logs/a/00000000000000000000"})
	// A create of an existing packed entry (replay) reports NodeExists.
	if r := apply(txn.Txn{Type: wire.OpCreate, Path: "/logs/a/00000000000000004000", ACL: wire.OpenACLUnsafe, ParentCVersion: 5}); r[0].Err != wire.CodeNodeExists {
		t.Fatalf("re-create: %v", r[0].Err)
	}
	// An append below the last number stays a node.
	apply(txn.Txn{Type: wire.OpCreate, Path: "/logs/a/00000000000000000500", Data: testRef(zxid + 1), ACL: wire.OpenACLUnsafe, ParentCVersion: 300})
	if packed.PackedCount() != 195 {
		t.Fatalf("%d packed after five unpacks", packed.PackedCount())
	}
	compare(packed, trees[1])

	// Through a snapshot: read back as nodes, packed again.
	var buf bytes.Buffer
	if err := packed.WriteSnapshot(&buf, nil); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	compare(loaded, trees[1])
	loaded.SetPackRoot(packTestRoot, testCodec{})
	// Packed again: the 195 entries, the re-created one (its ACL set to
	// the same list) and the append below the last number.
	if loaded.PackedCount() != 197 {
		t.Fatalf("%d packed after the load", loaded.PackedCount())
	}
	compare(loaded, trees[1])

	// Deleting the log in replay drops its run.
	r := apply(txn.Txn{Type: wire.OpDelete, Path: "/logs/a"})
	if r[0].Err != wire.CodeOK || packed.PackedCount() != 0 {
		t.Fatalf("delete of the log: %v, %d packed", r[0].Err, packed.PackedCount())
	}
	compare(packed, trees[1])
}
