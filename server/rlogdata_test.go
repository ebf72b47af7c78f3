package server

import (
	"bytes"
	"context"
	"hash/crc32"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

func openTestLogData(t *testing.T, dir string) *logData {
	t.Helper()
	o := Options{DataDir: dir, DataLogDir: dir, RlogRoot: "/logs"}
	o.setDefaults()
	d, err := openLogData(&o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// TestLogDataWALForm: an append's WAL record keeps a reference, the
// payload is in the data log, and the proposal comes back from the two
// (after a reopen too); other transactions pass unchanged.
func TestLogDataWALForm(t *testing.T) {
	dir := t.TempDir()
	d := openTestLogData(t, dir)
	p := payload(64<<10, 1)
	h := txn.Header{SessionID: 7, Cxid: 3, Zxid: 0x100000005, Type: wire.OpCreate2}
	tx := txn.Txn{Type: wire.OpCreate2, Path: "/logs/a/e-0000000001", Data: p, ACL: []wire.ACL{}}
	prop := txn.Append(nil, &h, &tx)
	walRec, err := d.toWAL(zab.Entry{Zxid: 0x100000005, Data: prop})
	if err != nil {
		t.Fatal(err)
	}
	if len(walRec) >= 1024 || bytes.Contains(walRec, p[:256]) {
		t.Fatalf("WAL record of %d bytes holds the payload", len(walRec))
	}
	for _, other := range []txn.Txn{
		{Type: wire.OpCreate2, Path: "/logs/a", Data: p, ACL: []wire.ACL{}},             // a log, not an entry
		{Type: wire.OpCreate2, Path: "/other/a/b", Data: p, ACL: []wire.ACL{}},          // outside the root
		{Type: wire.OpCreate2, Path: "/logs/a/small", Data: p[:100], ACL: []wire.ACL{}}, // inline
		{Type: wire.OpSetData, Path: "/logs/a/e-0000000001", Data: p, Version: 1},
	} {
		rec := txn.Append(nil, &h, &other)
		got, err := d.toWAL(zab.Entry{Zxid: 0x100000006, Data: rec})
		if err != nil || !bytes.Equal(got, rec) {
			t.Fatalf("%v %s: changed (%v)", other.Type, other.Path, err)
		}
	}
	if err := d.syncWritten(); err != nil {
		t.Fatal(err)
	}
	if err := d.close(); err != nil {
		t.Fatal(err)
	}
	d = openTestLogData(t, dir)
	defer d.close()
	back, err := d.toProposal(walRec)
	if err != nil || !bytes.Equal(back, prop) {
		t.Fatalf("toProposal: equal=%v err=%v", bytes.Equal(back, prop), err)
	}
	var h2 txn.Header
	var tx2 txn.Txn
	if err := txn.Decode(walRec, &h2, &tx2); err != nil {
		t.Fatal(err)
	}
	ref, ok := parseRef(tx2.Data)
	if !ok {
		t.Fatal("WAL record's data is not a reference")
	}
	if b, err := d.read(ref); err != nil || !bytes.Equal(b, p) {
		t.Fatalf("read: equal=%v err=%v", bytes.Equal(b, p), err)
	}
	// A reference whose checksum does not match is an error, not bytes.
	bad := ref
	bad.crc++
	if _, err := d.read(bad); err == nil {
		t.Fatal("read of a reference with a wrong checksum succeeded")
	}
	if _, err := d.read(entryRef{zxid: 99, length: 1}); err == nil {
		t.Fatal("read of an unknown entry succeeded")
	}
}

// TestLogDataMulti: in a multi (the API's append: setData of the log's
// control record and create of the entry) the first large create under
// a log goes to the data log, later ones stay inline, and the proposal
// comes back from the WAL form.
func TestLogDataMulti(t *testing.T) {
	d := openTestLogData(t, t.TempDir())
	defer d.close()
	p1, p2 := payload(8<<10, 3), payload(4<<10, 5)
	h := txn.Header{SessionID: 7, Cxid: 4, Zxid: 0x100000009, Type: wire.OpMulti}
	tx := txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{
		{Type: wire.OpSetData, Path: "/logs/a", Data: []byte("zkrl1 start=0 end=12288 sealed=false"), Version: 3},
		{Type: wire.OpCreate, Path: "/logs/a/small", Data: p2[:10], ACL: []wire.ACL{}},
		{Type: wire.OpCreate, Path: "/logs/a/00000000000000000000", Data: p1, ACL: []wire.ACL{}},
		{Type: wire.OpCreate, Path: "/logs/a/00000000000000008192", Data: p2, ACL: []wire.ACL{}},
	}}
	prop := txn.Append(nil, &h, &tx)
	walRec, err := d.toWAL(zab.Entry{Zxid: 0x100000009, Data: prop})
	if err != nil {
		t.Fatal(err)
	}
	var h2 txn.Header
	var tx2 txn.Txn
	if err := txn.Decode(walRec, &h2, &tx2); err != nil {
		t.Fatal(err)
	}
	ref, ok := parseRef(tx2.Ops[2].Data)
	if !ok || !bytes.Equal(tx2.Ops[3].Data, p2) || !bytes.Equal(tx2.Ops[1].Data, p2[:10]) {
		t.Fatalf("WAL form: op 2 a reference %v, ops 1 and 3 inline %v %v", ok,
			bytes.Equal(tx2.Ops[1].Data, p2[:10]), bytes.Equal(tx2.Ops[3].Data, p2))
	}
	if b, err := d.read(ref); err != nil || !bytes.Equal(b, p1) {
		t.Fatalf("read: equal=%v err=%v", bytes.Equal(b, p1), err)
	}
	back, err := d.toProposal(walRec)
	if err != nil || !bytes.Equal(back, prop) {
		t.Fatalf("toProposal: equal=%v err=%v", bytes.Equal(back, prop), err)
	}
	// Apply (decoded as a member that did not take the request does)
	// swaps the same op, and finds the record already written.
	r := &request{hdr: h}
	if err := txn.DecodeShared(prop, &r.hdr, &r.tx); err != nil {
		t.Fatal(err)
	}
	if err := d.forApply(r); err != nil {
		t.Fatal(err)
	}
	if got, ok := parseRef(r.tx.Ops[2].Data); !ok || got != ref || !bytes.Equal(r.tx.Ops[3].Data, p2) ||
		!bytes.Equal(r.tx.Ops[1].Data, p2[:10]) || string(r.tx.Ops[0].Data) != "zkrl1 start=0 end=12288 sealed=false" {
		t.Fatalf("forApply: op 2 ref %v (same %v), ops 0, 1 and 3 their own bytes %v %v %v", ok, got == ref,
			string(r.tx.Ops[0].Data) == "zkrl1 start=0 end=12288 sealed=false", bytes.Equal(r.tx.Ops[1].Data, p2[:10]), bytes.Equal(r.tx.Ops[3].Data, p2))
	}
	if n := d.idx.live; n != 1 {
		t.Fatalf("%d records for one multi", n)
	}
}

// TestLogDataImage: the snapshot image carries the payloads; installing
// it on an empty member makes them readable; damaged images are refused.
func TestLogDataImage(t *testing.T) {
	src := openTestLogData(t, t.TempDir())
	defer src.close()
	var refs []entryRef
	for i := 0; i < 5; i++ {
		r, err := src.store(int64(0x100000001+i), payload(5000+i, byte(i)))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, r)
	}
	tree := []byte("tree snapshot bytes")
	img, err := src.image(tree)
	if err != nil {
		t.Fatal(err)
	}
	if !isImage(img) || isImage(tree) {
		t.Fatal("isImage")
	}
	dst := openTestLogData(t, t.TempDir())
	defer dst.close()
	got, err := dst.install(img)
	if err != nil || !bytes.Equal(got, tree) {
		t.Fatalf("install: %q, %v", got, err)
	}
	for i, r := range refs {
		b, err := dst.read(r)
		if err != nil || !bytes.Equal(b, payload(5000+i, byte(i))) {
			t.Fatalf("entry %d after install: %v", i, err)
		}
	}
	other := openTestLogData(t, t.TempDir())
	defer other.close()
	for _, cut := range []int{10, 30, len(img) - 1} {
		if _, err := other.install(img[:cut]); err == nil {
			t.Errorf("image cut at %d installed", cut)
		}
	}
	flipped := bytes.Clone(img)
	flipped[len(flipped)-20] ^= 1
	if _, err := other.install(flipped); err == nil {
		t.Error("image with a flipped payload byte installed")
	}
}

// TestLogDataClientData: under a log, client data that could pass for a
// reference is refused; elsewhere anything goes.
func TestLogDataClientData(t *testing.T) {
	d := &logData{root: "/logs"}
	ref := entryRef{zxid: 1, length: 2, crc: 3}.encode()
	if err := d.checkClientData("/logs/a/e1", ref); err != wire.CodeBadArguments {
		t.Errorf("reference-like data under a log: %v", err)
	}
	if err := d.checkClientData("/elsewhere/a/e1", ref); err != nil {
		t.Errorf("outside the root: %v", err)
	}
	var none *logData
	if err := none.checkClientData("/logs/a/e1", ref); err != nil {
		t.Errorf("without logs: %v", err)
	}
	for p, want := range map[string]bool{"/logs/a/e": true, "/logs/a": false, "/logs/a/e/f": false, "/logsx/a/e": false, "/logs//e": false} {
		if d.entryPath(p) != want {
			t.Errorf("entryPath(%q) = %v", p, !want)
		}
	}
}

// FuzzInstallImage: no image, however damaged, panics the installer.
func FuzzInstallImage(f *testing.F) {
	f.Add(append(imageMagic[:], make([]byte, 16)...))
	f.Add(imageMagic[:])
	dir := f.TempDir()
	o := Options{DataDir: dir, DataLogDir: dir, RlogRoot: "/logs"}
	o.setDefaults()
	d, err := openLogData(&o)
	if err != nil {
		f.Fatal(err)
	}
	defer d.close()
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = d.install(b)
	})
}

// TestLogDataRelease: a removed entry's record is released only once the
// oldest kept snapshot covers its removal; a segment whose records are
// all released is removed; the sweep at open releases what the tree no
// longer names at or before the oldest snapshot, and nothing newer.
func TestLogDataRelease(t *testing.T) {
	dir := t.TempDir()
	o := Options{DataDir: dir, DataLogDir: dir, RlogRoot: "/logs", RlogSegmentSize: 64 << 10}
	o.setDefaults()
	d, err := openLogData(&o)
	if err != nil {
		t.Fatal(err)
	}
	var refs []entryRef
	for i := 0; i < 4; i++ {
		r, err := d.store(int64(i+1), payload(40<<10, byte(i)))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, r)
	}
	if err := d.syncWritten(); err != nil {
		t.Fatal(err)
	}
	segs := func() int { return len(d.dl.Segments()) }
	if segs() != 4 {
		t.Fatalf("%d segments, want one per record", segs())
	}
	tree := map[string][]byte{"/logs/a/e1": refs[0].encode(), "/logs/a/e2": refs[1].encode()}
	get := func(p string) []byte { return tree[p] }
	del := txn.Txn{Type: wire.OpMulti, Ops: []txn.Txn{
		{Type: wire.OpDelete, Path: "/logs/a/e1"},
		{Type: wire.OpDelete, Path: "/logs/a/e2"},
	}}
	rm := d.removedRefs(get, &del, nil)
	if len(rm) != 2 {
		t.Fatalf("removedRefs: %v", rm)
	}
	delete(tree, "/logs/a/e1") // the multi failed halfway: e2 stays
	d.noteRemoved(get, 10, rm)
	d.releaseUpTo(9)
	if _, err := d.read(refs[0]); err != nil || segs() != 4 {
		t.Fatalf("released before a snapshot covered the delete: %v, %d segments", err, segs())
	}
	d.releaseUpTo(10)
	if _, err := d.read(refs[0]); err == nil {
		t.Fatal("the deleted entry's record is still readable")
	}
	if segs() != 3 {
		t.Fatalf("%d segments after the release, want 3", segs())
	}
	if b, err := d.read(refs[1]); err != nil || !bytes.Equal(b, payload(40<<10, 1)) {
		t.Fatalf("the entry still in the tree: %v", err)
	}
	if err := d.close(); err != nil {
		t.Fatal(err)
	}
	// At open: entry 2 is referenced, 3 is not but is newer than the
	// oldest snapshot (3), 4 is newer; nothing but unreferenced records at
	// or before the bound go.
	if d, err = openLogData(&o); err != nil {
		t.Fatal(err)
	}
	defer d.close()
	if n := d.sweep(2, []int64{2}); n != 0 {
		t.Fatalf("sweep released %d records, want none", n)
	}
	if n := d.sweep(3, []int64{2}); n != 1 {
		t.Fatalf("sweep released %d records, want 1", n)
	}
	for i, want := range []bool{false, true, false, true} {
		if _, err := d.read(refs[i]); (err == nil) != want {
			t.Errorf("entry %d readable=%v after the sweep, want %v", i+1, err == nil, want)
		}
	}
}

// treeNaming is a tree with one log entry, /logs/a/e1, whose data is
// ref, created at zxid 3.
func treeNaming(ref entryRef) *datatree.Tree {
	tree := datatree.New()
	for i, p := range []string{"/logs", "/logs/a", "/logs/a/e1"} {
		var data []byte
		if i == 2 {
			data = ref.encode()
		}
		h := txn.Header{Zxid: int64(i + 1), Type: wire.OpCreate}
		tx := txn.Txn{Type: wire.OpCreate, Path: p, Data: data, ACL: []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "anyone"}}}}
		var res datatree.Result
		tree.Apply(&h, &tx, &res)
	}
	return tree
}

// TestOpenLogsChecksTree: a member whose snapshot names entries its data
// log lacks does not start, and says what to do.
func TestOpenLogsChecksTree(t *testing.T) {
	dir := t.TempDir()
	o := Options{DataDir: dir, DataLogDir: dir, RlogRoot: "/logs"}
	o.setDefaults()
	st := &storage{opts: &o, log: o.Logger, fs: o.FS, snapDir: filepath.Join(dir, "version-2")}
	tree := treeNaming(entryRef{zxid: 3, length: 2000, crc: 1})
	err := openLogs(st, tree, 3)
	if err == nil || !strings.Contains(err.Error(), "not in the data log") {
		t.Fatalf("openLogs: %v, want the missing payloads named", err)
	}
	d := openTestLogData(t, dir)
	if _, err := d.store(3, payload(2000, 9)); err != nil {
		t.Fatal(err)
	}
	if err := d.close(); err != nil {
		t.Fatal(err)
	}
	if err := openLogs(st, tree, 3); err != nil {
		t.Fatalf("openLogs with the payload present: %v", err)
	}
	st.rl.close()
}

// TestInstallSnapshotChecksPayloads: a leader's snapshot whose tree
// names a payload that neither the image nor this member's data log
// holds is refused, says what to do, and is not kept as this member's
// newest snapshot; with the payload present it installs.
func TestInstallSnapshotChecksPayloads(t *testing.T) {
	dir := t.TempDir()
	o := Options{DataDir: dir, DataLogDir: dir, RlogRoot: "/logs"}
	o.setDefaults()
	st := &storage{opts: &o, log: o.Logger, fs: o.FS, snapDir: filepath.Join(dir, "version-2")}
	if err := o.FS.MkdirAll(st.snapDir, 0o755); err != nil {
		t.Fatal(err)
	}
	st.rl = openTestLogData(t, dir)
	defer st.rl.close()
	tree := treeNaming(entryRef{zxid: 3, length: 2000, crc: crc32.Checksum(payload(2000, 9), castagnoli)})
	var b bytesBuffer
	if err := tree.WriteSnapshot(&b, nil); err != nil {
		t.Fatal(err)
	}
	_, err := st.installSnapshot(bytesImage(b.b))
	if err == nil || !strings.Contains(err.Error(), "restart it empty") {
		t.Fatalf("install without the payload: %v, want the missing payload named", err)
	}
	if infos, err := snap.Newest(st.fs, st.snapDir); err != nil || len(infos) != 0 {
		t.Fatalf("a refused snapshot was kept: %v, %v", infos, err)
	}
	if _, err := st.rl.store(3, payload(2000, 9)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.installSnapshot(bytesImage(b.b)); err != nil {
		t.Fatalf("install with the payload present: %v", err)
	}
}

// TestLogDataRewrittenProposal: a proposal whose payload is in the data
// log twice (written, its WAL record lost in a crash, sent again) is
// indexed once, at its later copy, after a reopen; storing it again
// writes nothing; payloads older than what the data log holds (a SNAP's)
// are indexed too, and all of them read back.
func TestLogDataRewrittenProposal(t *testing.T) {
	dir := t.TempDir()
	d := openTestLogData(t, dir)
	var refs []entryRef
	for i := range 3 {
		r, err := d.store(int64(10+i), payload(2000+i, byte(i)))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, r)
	}
	// The second copy of 11, as the log goroutine writes it after a
	// restart that lost its WAL record.
	again, _, err := d.dl.Append(context.Background(), datalog.Meta{Zxid: 11}, payload(2001, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.syncWritten(); err != nil {
		t.Fatal(err)
	}
	if err := d.close(); err != nil {
		t.Fatal(err)
	}
	d = openTestLogData(t, dir)
	defer d.close()
	if d.idx.live != 3 {
		t.Fatalf("%d records indexed, want 3", d.idx.live)
	}
	if r, ok := d.idx.find(11); !ok || r.pos != again {
		t.Fatalf("zxid 11 at %+v (%v), want the later copy at %s", r.pos, ok, again)
	}
	w := d.dl.Written()
	if _, err := d.store(11, payload(2001, 1)); err != nil || d.dl.Written() != w {
		t.Fatalf("storing 11 again: %v, the data log grew from %s to %s", err, w, d.dl.Written())
	}
	for i, want := range []int{5, 6} { // older than everything held
		r, err := d.store(int64(want), payload(3000+i, byte(7+i)))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, r)
	}
	for i, r := range refs {
		if _, err := d.read(r); err != nil {
			t.Errorf("ref %d (%s): %v", i, hex(r.zxid), err)
		}
	}
	if n := d.sweep(6, nil); n != 2 {
		t.Fatalf("sweep at 6 released %d records, want 2 (5 and 6)", n)
	}
	if _, err := d.read(refs[3]); err == nil {
		t.Fatal("a swept record reads back")
	}
	if _, err := d.read(refs[1]); err != nil {
		t.Fatalf("11 after the sweep: %v", err)
	}
}

// TestLogDataSlim: the driver's in-memory log (replica.Slimmer) gets an
// append's WAL form only once the data log holds its payload, the same
// bytes appendEntry writes to the WAL, and the proposal back from it;
// other entries are not slimmed and come back unchanged.
func TestLogDataSlim(t *testing.T) {
	d, w := openTestWALStore(t)
	p := payload(64<<10, 3)
	h, prop := appendProposal(0x100000007, p)
	if _, ok := w.Slim(prop); ok {
		t.Fatal("slimmed an append whose payload the data log does not hold")
	}
	walRec, err := d.toWAL(prop)
	if err != nil {
		t.Fatal(err)
	}
	slim, ok := w.Slim(prop)
	if !ok || !bytes.Equal(slim, walRec) {
		t.Fatalf("slim form: ok=%v, equal to the WAL record: %v", ok, bytes.Equal(slim, walRec))
	}
	back, err := w.Expand(zab.Entry{Zxid: prop.Zxid, Data: slim})
	if err != nil || !bytes.Equal(back, prop.Data) {
		t.Fatalf("expand: equal=%v err=%v", bytes.Equal(back, prop.Data), err)
	}
	other := txn.Txn{Type: wire.OpSetData, Path: "/logs/a/e-0000000001", Data: p, Version: 1}
	rec := zab.Entry{Zxid: 0x100000008, Data: txn.Append(nil, &h, &other)}
	if _, ok := w.Slim(rec); ok {
		t.Fatal("slimmed a setData")
	}
	if back, err := w.Expand(rec); err != nil || !bytes.Equal(back, rec.Data) {
		t.Fatalf("expand of a whole entry: equal=%v err=%v", bytes.Equal(back, rec.Data), err)
	}
}

// TestLogDataWeight: the snapshot byte trigger (replica.Weigher) weighs an
// append by its WAL record, the reference in place of the payload, and
// every other entry by its data.
func TestLogDataWeight(t *testing.T) {
	d, w := openTestWALStore(t)
	p := payload(64<<10, 5)
	h, prop := appendProposal(0x100000009, p)
	walRec, err := d.toWAL(prop)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Weight(prop); got < int64(len(walRec))-4 || got > int64(len(walRec))+4 {
		t.Fatalf("an append weighs %d, its WAL record is %d bytes (the proposal %d)", got, len(walRec), len(prop.Data))
	}
	for _, other := range []txn.Txn{
		{Type: wire.OpCreate2, Path: "/elsewhere/e-0000000001", Data: p, ACL: []wire.ACL{}},
		{Type: wire.OpSetData, Path: "/logs/a/e-0000000001", Data: p, Version: 1},
		{Type: wire.OpCreate2, Path: "/logs/a/e-0000000002", Data: p[:100], ACL: []wire.ACL{}},
	} {
		e := zab.Entry{Zxid: 0x10000000a, Data: txn.Append(nil, &h, &other)}
		if got := w.Weight(e); got != int64(len(e.Data)) {
			t.Errorf("%v %s of %d bytes weighs %d, not its data's %d", other.Type, other.Path, len(other.Data), got, len(e.Data))
		}
	}
	if got := (walStore{st: &storage{}}).Weight(prop); got != int64(len(prop.Data)) {
		t.Errorf("without logs an entry weighs %d, not its data's %d", got, len(prop.Data))
	}
}

// openTestWALStore is a data log in a test directory, closed when the
// test ends, and a WAL store whose storage has it.
func openTestWALStore(t *testing.T) (*logData, walStore) {
	d := openTestLogData(t, t.TempDir())
	t.Cleanup(func() { d.close() })
	return d, walStore{st: &storage{rl: d}}
}

// appendProposal is the proposal of an append of p to /logs/a at zxid,
// and its header.
func appendProposal(zxid zab.Zxid, p []byte) (txn.Header, zab.Entry) {
	h := txn.Header{SessionID: 7, Cxid: 3, Zxid: int64(zxid), Type: wire.OpCreate2}
	tx := txn.Txn{Type: wire.OpCreate2, Path: "/logs/a/e-0000000001", Data: p, ACL: []wire.ACL{}}
	return h, zab.Entry{Zxid: zxid, Data: txn.Append(nil, &h, &tx)}
}
