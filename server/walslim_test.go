package server

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// TestWALSlim: a transaction appended to the WAL slims to its position
// and expands back to the same bytes, from the buffer or the disk; an
// entry that is not a transaction record stays whole; positions of
// truncated records are forgotten, and a position whose record is gone
// is an error, not other bytes.
func TestWALSlim(t *testing.T) {
	dir := t.TempDir()
	l, err := wal.Open(vfs.OS(), dir, wal.Options{SegmentSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	st := &storage{wal: l}
	w := walStore{st: st}
	var ents []zab.Entry
	for i := 1; i <= 100; i++ {
		h := txn.Header{SessionID: 7, Cxid: int32(i), Zxid: 0x100000000 + int64(i), Type: wire.OpCreate}
		tx := txn.Txn{Type: wire.OpCreate, Path: "/a/b", Data: bytes.Repeat([]byte{byte(i)}, 100+i), ACL: wire.OpenACLUnsafe}
		e := zab.Entry{Zxid: zab.Zxid(h.Zxid), Data: txn.Append(nil, &h, &tx)}
		if i == 50 {
			e.Data = []byte("not a transaction record")
		}
		if err := st.appendEntry(e); err != nil {
			t.Fatal(err)
		}
		ents = append(ents, e)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	slims := make([][]byte, len(ents))
	for i, e := range ents {
		form, ok := w.Slim(e)
		if i == 49 {
			if ok {
				t.Fatal("slimmed an entry that is not a transaction record")
			}
			form = e.Data
		} else if !ok || len(form) >= 16 {
			t.Fatalf("entry %d: slim %v, %d bytes", i, ok, len(form))
		}
		slims[i] = form
		back, err := w.Expand(zab.Entry{Zxid: e.Zxid, Data: form})
		if err != nil || !bytes.Equal(back, e.Data) {
			t.Fatalf("entry %d: expand: equal=%v err=%v", i, bytes.Equal(back, e.Data), err)
		}
	}
	// A slimmed entry slims no more: its position was handed over.
	if _, ok := w.Slim(ents[10]); ok {
		t.Fatal("slimmed an entry twice")
	}
	// Truncation: the records after the cut are gone.
	if err := w.TruncateAfter(ents[79].Zxid); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Expand(zab.Entry{Zxid: ents[90].Zxid, Data: slims[90]}); !errors.Is(err, wal.ErrNoRecord) {
		t.Fatalf("expand of a truncated record: %v", err)
	}
	if back, err := w.Expand(zab.Entry{Zxid: ents[79].Zxid, Data: slims[79]}); err != nil || !bytes.Equal(back, ents[79].Data) {
		t.Fatalf("expand of the last record kept: %v", err)
	}
	// New records after the cut slim again; a position learned before the
	// cut for a zxid now reused is not handed out.
	h := txn.Header{Zxid: int64(ents[80].Zxid) + 1<<32, Type: wire.OpDelete}
	e := zab.Entry{Zxid: zab.Zxid(h.Zxid), Data: txn.Append(nil, &h, &txn.Txn{Type: wire.OpDelete, Path: "/a/b", Version: -1})}
	if err := st.appendEntry(e); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil { // the driver slims durable entries only
		t.Fatal(err)
	}
	form, ok := w.Slim(e)
	if !ok {
		t.Fatal("no slim form for a record appended after a truncation")
	}
	if back, err := w.Expand(zab.Entry{Zxid: e.Zxid, Data: form}); err != nil || !bytes.Equal(back, e.Data) {
		t.Fatalf("expand after truncation: %v", err)
	}
	if _, err := w.Expand(zab.Entry{Zxid: e.Zxid, Data: []byte{walSlimMarker, 1}}); err == nil {
		t.Fatal("a malformed position expanded")
	}
}

// TestSyncRestartCatchesUpFromWAL: a follower stopped while the ensemble
// writes catches up by DIFF, and the leader reads the entries it sends
// back from its WAL (they were slimmed to positions once durable and
// applied); the restarted follower ends with the leader's tree.
func TestSyncRestartCatchesUpFromWAL(t *testing.T) {
	e := startEnsemble(t, 3, func(o *Options) { o.SnapCount = 100000 })
	leader := e.waitLeader()
	f := (leader + 1) % 3
	ctx := ctxT(t)
	c := e.connect(leader)
	create := func(p string) {
		t.Helper()
		if _, err := c.Create(ctx, p, bytes.Repeat([]byte("v"), 100), client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 {
		create(fmt.Sprintf("/a%03d", i))
	}
	e.waitConverged()
	e.servers[f].stop(t)
	for i := range 500 {
		create(fmt.Sprintf("/b%03d", i))
	}
	before := e.servers[leader].store.walReads.Load()
	e.restart(f)
	e.waitLeader()
	e.waitConverged()
	if n := e.servers[f].rep.d.SnapInstalls(); n != 0 {
		t.Fatalf("restarted follower installed %d snapshots, want a DIFF", n)
	}
	if got := e.servers[leader].store.walReads.Load() - before; got < 500 {
		t.Fatalf("the leader read %d entries back from its WAL for the DIFF, want the 500 written while the follower was down", got)
	}
}
