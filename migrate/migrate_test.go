package migrate

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zkfmt"
)

// zkFixture is a dataDir Apache ZooKeeper 3.9.3 wrote (see package zkfmt).
const zkFixture = "../zkfmt/testdata/zk393"

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func loadTree(t *testing.T, dir string) *datatree.Tree {
	t.Helper()
	tree, _, err := loadCorral(dataDir(dir), quiet())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replayCorralLog(dataDir(dir), tree, quiet()); err != nil {
		t.Fatal(err)
	}
	return tree
}

func TestImportFixture(t *testing.T) {
	to := t.TempDir()
	res, err := Import(Options{From: zkFixture, To: to, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if res.SnapshotZxid != 0xa5 || res.Transactions == 0 || res.Zxid <= 0xa5 {
		t.Fatalf("result %+v: want snapshot 0xa5 and the logged transactions after it", res)
	}
	tree := loadTree(t, to)
	if tree.LastZxid() != res.Zxid || tree.NodeCount() != res.Nodes {
		t.Fatalf("corral snapshot: zxid %#x, %d nodes; import said %+v", tree.LastZxid(), tree.NodeCount(), res)
	}
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config", "/m", "/m/container/child", "/m/deep0/deep1"} {
		if tree.Get(p) == nil {
			t.Errorf("imported tree lacks %s", p)
		}
	}
	if n := tree.Get("/m/ttl"); n == nil {
		t.Error("no TTL node")
	} else if _, ok := n.TTL(); !ok {
		t.Error("/m/ttl lost its TTL")
	}
	if n := tree.Get("/m/container"); n == nil || !n.IsContainer() {
		t.Error("/m/container is not a container")
	}
	if tree.Get("/m/eph0") != nil {
		t.Error("the closed session's ephemeral survived the import")
	}
	// The epochs are beside the snapshot.
	for _, f := range []string{"acceptedEpoch", "currentEpoch"} {
		b, err := os.ReadFile(filepath.Join(to, "version-2", f))
		if err != nil || strings.TrimSpace(string(b)) != "0" {
			t.Errorf("%s = %q, %v; want 0 (the zxids are in epoch 0)", f, b, err)
		}
	}
	// Never over existing state.
	if _, err := Import(Options{From: zkFixture, To: to, Logger: quiet()}); err == nil || !strings.Contains(err.Error(), "already holds") {
		t.Fatalf("second import into the same dir: err = %v", err)
	}
}

func TestImportSkipsDamagedSnapshot(t *testing.T) {
	from := filepath.Join(t.TempDir(), "version-2")
	if err := os.CopyFS(from, os.DirFS(filepath.Join(zkFixture, "version-2"))); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(from, "snapshot.a5"))
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 1
	if err := os.WriteFile(filepath.Join(from, "snapshot.b0"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Import(Options{From: from, To: t.TempDir(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if res.SnapshotFile != "snapshot.a5" {
		t.Fatalf("read %s, want the older intact snapshot.a5", res.SnapshotFile)
	}

	// Only a snappy snapshot: a clear refusal.
	only := filepath.Join(t.TempDir(), "version-2")
	os.MkdirAll(only, 0o755)
	os.WriteFile(filepath.Join(only, "snapshot.a5.snappy"), good, 0o644)
	if _, err := Import(Options{From: only, To: t.TempDir(), Logger: quiet()}); err == nil || !strings.Contains(err.Error(), "snappy") {
		t.Fatalf("snappy: err = %v", err)
	}
	if _, err := Import(Options{From: t.TempDir(), To: t.TempDir(), Logger: quiet()}); err == nil {
		t.Fatal("empty ZooKeeper dataDir imported")
	}
}

// TestRoundTrip: import, export and import again give the same tree
// (corral's digest covers every node's path, data, ACL and stored stat,
// and the session table).
func TestRoundTrip(t *testing.T) {
	a, zk, b := t.TempDir(), t.TempDir(), t.TempDir()
	if _, err := Import(Options{From: zkFixture, To: a, Logger: quiet()}); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(Options{From: a, To: zk, Logger: quiet()}); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(Options{From: zk, To: b, Logger: quiet()}); err != nil {
		t.Fatal(err)
	}
	ta, tb := loadTree(t, a), loadTree(t, b)
	if ta.Digest() != tb.Digest() || ta.LastZxid() != tb.LastZxid() || ta.NodeCount() != tb.NodeCount() {
		t.Fatalf("after export and re-import: digest %x zxid %#x %d nodes; before %x %#x %d",
			tb.Digest(), tb.LastZxid(), tb.NodeCount(), ta.Digest(), ta.LastZxid(), ta.NodeCount())
	}
}

// TestExportSessionsAndLog: the export carries open sessions and their
// ephemerals, and takes the transactions only corral's log has.
func TestExportSessionsAndLog(t *testing.T) {
	dir := t.TempDir()
	tree := datatree.New()
	var res datatree.Result
	zxid := int64(5) << 32
	apply := func(session int64, tx txn.Txn) {
		zxid++
		h := txn.Header{SessionID: session, Zxid: zxid, Time: 1700000000000 + zxid&0xffff, Type: tx.Type}
		tree.Apply(&h, &tx, &res)
		if res.Err != wire.CodeOK {
			t.Fatalf("%+v: %v", tx, res.Err)
		}
	}
	const sess = 0x1234
	apply(sess, txn.Txn{Type: wire.OpCreateSession, Timeout: 30000})
	apply(sess, txn.Txn{Type: wire.OpCreate, Path: "/a", Data: []byte("a"), ACL: wire.ReadACLUnsafe, ParentCVersion: 2})
	apply(sess, txn.Txn{Type: wire.OpCreate, Path: "/a/e", Ephemeral: true, ParentCVersion: 1})
	// Snapshot here, then log two more writes after it.
	fsys := vfs.OS()
	w, err := snap.Create(fsys, filepath.Join(dir, "version-2"), tree.LastZxid())
	if err != nil {
		t.Fatal(err)
	}
	if err := tree.WriteSnapshot(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	logged := []txn.Txn{
		{Type: wire.OpSetData, Path: "/a", Data: []byte("b"), Version: 1},
		{Type: wire.OpCreate, Path: "/a/s0000000002", Data: nil, ParentCVersion: 3},
	}
	writeCorralLog(t, filepath.Join(dir, "version-2"), sess, &zxid, logged, tree)

	zkDir := t.TempDir()
	r, err := Export(Options{From: dir, To: zkDir, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Transactions != 2 || r.Zxid != zxid {
		t.Fatalf("export %+v: want 2 logged transactions, zxid %#x", r, zxid)
	}
	f, err := os.Open(filepath.Join(zkDir, "version-2", zkfmt.SnapshotName(zxid)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zs, err := zkfmt.DecodeSnapshot(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(zs.Sessions) != 1 || zs.Sessions[0] != (zkfmt.Session{ID: sess, Timeout: 30000}) {
		t.Errorf("sessions %+v", zs.Sessions)
	}
	byPath := make(map[string]zkfmt.Node)
	for _, n := range zs.Nodes {
		byPath[n.Path] = n
	}
	if e := byPath["/a/e"]; e.Stat.EphemeralOwner != sess {
		t.Errorf("/a/e owner %#x", e.Stat.EphemeralOwner)
	}
	a := byPath["/a"]
	if string(a.Data) != "b" || a.Stat.Version != 1 || a.Stat.Cversion != 3 || len(zs.ACLs[a.ACL]) != 1 || zs.ACLs[a.ACL][0] != wire.ReadACLUnsafe[0] {
		t.Errorf("/a = %+v acl %v", a, zs.ACLs[a.ACL])
	}
	if _, ok := byPath[""]; !ok || zs.Nodes[0].Path != "" {
		t.Error("root is not first as \"\"")
	}
	if !zs.HasLastZxid || zs.LastZxid != zxid || zs.Digest == nil || zs.Digest.Zxid != 0 {
		t.Errorf("trailer: lastZxid %#x %v digest %+v", zs.LastZxid, zs.HasLastZxid, zs.Digest)
	}
	b, _ := os.ReadFile(filepath.Join(zkDir, "version-2", "currentEpoch"))
	if strings.TrimSpace(string(b)) != "5" {
		t.Errorf("currentEpoch %q, want 5", b)
	}
}

// writeCorralLog appends txs to corral's log in dir, as the server would
// after the snapshot.
func writeCorralLog(t *testing.T, dir string, session int64, zxid *int64, txs []txn.Txn, tree *datatree.Tree) {
	t.Helper()
	w, err := wal.Open(vfs.OS(), dir, wal.Options{SegmentSize: 1 << 20, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var res datatree.Result
	for _, tx := range txs {
		*zxid++
		h := txn.Header{SessionID: session, Zxid: *zxid, Time: 1700000001000, Type: tx.Type}
		if err := w.Append(*zxid, txn.Append(nil, &h, &tx)); err != nil {
			t.Fatal(err)
		}
		tree.Apply(&h, &tx, &res)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
}
