package server

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"runtime"
	"testing"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// TestLogsMemoryPerAppend measures what a member keeps in memory per
// append to a log under rlog.root, in process: N creates of 64 KiB
// entries (named by offset, as the API names them) go through the log
// goroutine's path (toWAL: the payload to the data log on disk) and
// apply's (forApply: the reference in place of the payload), then into
// the tree. It reports the live heap per append of the data log's index
// (logData) and of the tree (an entry packed in its log's run,
// rlogpack.go), and the TiB of log a GiB of memory addresses. The
// driver's in-memory log (proposals, payloads included, until the cut
// after a snapshot) is not measured.
//
// The index and the tree together must stay within issue 24's budget (1
// byte per KiB of log: 1 TiB per GiB).
func TestLogsMemoryPerAppend(t *testing.T) {
	n := testutil.MemAppends()
	const size = 64 << 10
	dir := t.TempDir()
	// 4 MiB segments keep the spare segments' zero fill short; the data
	// log's state per segment (a file, its counters) then counts per
	// append 16 times what it does at the default 64 MiB.
	o := Options{DataDir: dir, DataLogDir: dir, RlogRoot: "/logs", RlogSegmentSize: 4 << 20}
	o.setDefaults()
	d, err := openLogData(&o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	p := bytes.Repeat([]byte{7}, size)
	sum := crc32.Checksum(p, castagnoli)
	zxid := int64(1 << 32)
	store := func(i int) {
		zxid++
		h := txn.Header{SessionID: 1, Zxid: zxid, Time: zxid, Type: wire.OpCreate}
		tx := txn.Txn{Type: wire.OpCreate, Path: entryName(i, size), Data: p, ACL: wire.OpenACLUnsafe, ParentCVersion: -1}
		if _, err := d.toWAL(zab.Entry{Zxid: zab.Zxid(zxid), Data: txn.Append(nil, &h, &tx)}); err != nil {
			t.Fatal(err)
		}
		r := &request{hdr: h, tx: tx}
		if err := d.forApply(r); err != nil {
			t.Fatal(err)
		}
		if ref, ok := parseRef(r.tx.Data); !ok || ref != (entryRef{zxid: zxid, length: size, crc: sum}) {
			t.Fatalf("append %d: the tree would get %q, not a reference", i, r.tx.Data[:min(len(r.tx.Data), 32)])
		}
	}
	const warm = 128
	for i := range warm {
		store(i)
	}
	first := zxid + 1
	before := testutil.LiveHeap()
	for i := range n {
		store(warm + i)
	}
	if err := d.syncWritten(); err != nil {
		t.Fatal(err)
	}
	afterIndex := testutil.LiveHeap()

	tree := datatree.New()
	packLogs(&o, tree)
	var res datatree.Result
	applyTx := func(z int64, tx *txn.Txn) {
		h := txn.Header{SessionID: 1, Zxid: z, Time: z, Type: tx.Type}
		res.Events = res.Events[:0]
		tree.Apply(&h, tx, &res)
		if res.Err != wire.CodeOK {
			t.Fatalf("%v %s: %v", tx.Type, tx.Path, res.Err)
		}
	}
	applyTx(1, &txn.Txn{Type: wire.OpCreate, Path: "/logs", ACL: wire.OpenACLUnsafe, ParentCVersion: -1})
	applyTx(2, &txn.Txn{Type: wire.OpCreate, Path: "/logs/a", ACL: wire.OpenACLUnsafe, ParentCVersion: -1})
	beforeTree := testutil.LiveHeap()
	for i := range n {
		z := first + int64(i)
		ref := entryRef{zxid: z, length: size, crc: sum}
		applyTx(z, &txn.Txn{Type: wire.OpCreate, Path: entryName(warm+i, size), Data: ref.encode(), ACL: wire.OpenACLUnsafe, ParentCVersion: -1})
	}
	afterTree := testutil.LiveHeap()

	// Every entry still reads back through the tree and the index.
	if tree.PackedCount() != n {
		t.Errorf("%d of %d entries packed", tree.PackedCount(), n)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		want := entryRef{zxid: first + int64(i), length: size, crc: sum}
		node := tree.Get(entryName(warm+i, size))
		if node == nil || !bytes.Equal(node.Data(), want.encode()) {
			t.Fatalf("append %d: the tree does not hold its reference", i)
		}
		b, err := d.read(want)
		if err != nil || !bytes.Equal(b, p) {
			t.Fatalf("read of append %d: %v", i, err)
		}
	}
	idx := float64(afterIndex-before) / float64(n)
	znode := float64(afterTree-beforeTree) / float64(n)
	t.Logf("%d appends of %d bytes: index %.1f B/append, tree %.1f B/append, together %.1f B/append: %.2f TiB of log per GiB (index alone %.0f)",
		n, size, idx, znode, idx+znode, testutil.TiBPerGiB(idx+znode, size), testutil.TiBPerGiB(idx, size))
	if idx+znode > size/1024 {
		t.Errorf("the data log's index and the tree keep %.1f bytes per %d-byte append: above 1 byte per KiB", idx+znode, size)
	}
	runtime.KeepAlive(tree)
	runtime.KeepAlive(p)
}

// entryName is the API's name for the i-th entry of size bytes: its offset.
func entryName(i, size int) string { return fmt.Sprintf("/logs/a/%020d", i*size) }
