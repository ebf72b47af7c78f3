package server

import (
	"path/filepath"
	"testing"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/wire"
)

// TestStandaloneLoadsOldDataDir starts from a dataDir as the standalone
// pipeline before replica.Driver wrote it: epoch-0 zxids (no election
// ever ran), a snapshot and a log after it, no epoch files. Everything
// must load, new writes must get later zxids, and the dataDir the server
// leaves must load again, its zxids still in epoch 0.
func TestStandaloneLoadsOldDataDir(t *testing.T) {
	fs := vfs.NewMem()
	dir := filepath.Join("/data", "version-2")
	tree := datatree.New()
	var res datatree.Result
	apply := func(z int64, tx txn.Txn) txn.Header {
		h := txn.Header{Zxid: z, Time: 1, Type: tx.Type}
		tree.Apply(&h, &tx, &res)
		if res.Err != wire.CodeOK {
			t.Fatalf("setup: %v at zxid %d", res.Err, z)
		}
		return h
	}
	apply(1, txn.Txn{Type: wire.OpCreate, Path: "/a", Data: []byte("v1"), ACL: wire.OpenACLUnsafe, ParentCVersion: 1})
	apply(2, txn.Txn{Type: wire.OpCreate, Path: "/b", ACL: wire.OpenACLUnsafe, ParentCVersion: 2})
	w, err := snap.Create(fs, dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := tree.WriteSnapshot(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	lg, err := wal.Open(fs, dir, wal.Options{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		z  int64
		tx txn.Txn
	}{
		{3, txn.Txn{Type: wire.OpCreate, Path: "/c", Data: []byte("c"), ACL: wire.OpenACLUnsafe, ParentCVersion: 3}},
		{4, txn.Txn{Type: wire.OpSetData, Path: "/a", Data: []byte("v2"), Version: 1}},
	} {
		h := txn.Header{Zxid: e.z, Time: 1, Type: e.tx.Type}
		if err := lg.Append(e.z, txn.Append(nil, &h, &e.tx)); err != nil {
			t.Fatal(err)
		}
	}
	if err := lg.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}

	o := Options{FS: fs, DataDir: "/data", PreallocSize: 64 << 10}
	check := func(c *tclient) {
		t.Helper()
		for p, want := range map[string]string{"/a": "v2", "/b": "", "/c": "c"} {
			if data, code := c.get(p); code != 0 || string(data) != want {
				t.Fatalf("get %s = %q, %v; want %q", p, data, code, want)
			}
		}
	}
	ts := startServer(t, o)
	c := dial(t, ts.addr)
	check(c)
	h, _ := c.call(wire.OpCreate, &wire.CreateRequest{Path: "/d", ACL: wire.OpenACLUnsafe})
	// Epoch 0 goes on after the log (0x5 is the session's creation), as
	// in a standalone ZooKeeper server: no election moves it on.
	if h.Err != 0 || h.Zxid != 6 {
		t.Fatalf("new create: err %d zxid %#x; want 0x6", h.Err, h.Zxid)
	}
	ts.stop(t)

	ts = startServer(t, o)
	c = dial(t, ts.addr)
	check(c)
	if _, code := c.get("/d"); code != 0 {
		t.Fatalf("after restart: get /d: %v", code)
	}
	// Restarted, still epoch 0 (the close of the first session and this
	// session's creation came between).
	h, _ = c.call(wire.OpCreate, &wire.CreateRequest{Path: "/e", ACL: wire.OpenACLUnsafe})
	if h.Err != 0 || h.Zxid <= 6 || h.Zxid>>32 != 0 {
		t.Fatalf("create after restart: err %d zxid %#x; want epoch 0, after 0x6", h.Err, h.Zxid)
	}
}
