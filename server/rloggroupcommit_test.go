package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// TestLogDataCoupled: with rlog.groupCommit=coupled the data log has no
// flusher, so payloads stay unsynced until the group's sync
// (syncWritten) syncs them itself; decoupled, the flusher syncs them
// without it. Both read back their bytes.
func TestLogDataCoupled(t *testing.T) {
	for _, coupled := range []bool{true, false} {
		dir := t.TempDir()
		o := Options{DataDir: dir, DataLogDir: dir, RlogRoot: "/logs", RlogCoupled: coupled}
		o.setDefaults()
		d, err := openLogData(&o)
		if err != nil {
			t.Fatal(err)
		}
		payload := bytes.Repeat([]byte{7}, 4096)
		ref, err := d.store(1, payload)
		if err != nil {
			t.Fatal(err)
		}
		if coupled && !d.dl.Synced().Less(d.dl.Written()) {
			t.Errorf("coupled: the payload was synced before the group's sync")
		}
		if err := d.syncWritten(); err != nil {
			t.Fatal(err)
		}
		if d.dl.Synced().Less(d.dl.Written()) {
			t.Errorf("coupled=%v: syncWritten returned with %v synced of %v written", coupled, d.dl.Synced(), d.dl.Written())
		}
		got, err := d.read(ref)
		if err != nil || !bytes.Equal(got, payload) {
			t.Errorf("coupled=%v: read back %d bytes, %v", coupled, len(got), err)
		}
		if err := d.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAppendDataDurableBeforeCommitRecord: an append's payload is synced
// before the WAL record that names it, whatever the data log's flusher
// does. The flusher here syncs only when asked (rlogLazySync), so the
// payloads are durable at the power loss after the group's sync only if
// that sync (syncEntries) waited for them before syncing the WAL: without
// that wait the restarted member finds WAL records whose payloads are
// gone and cuts its log before them.
func TestAppendDataDurableBeforeCommitRecord(t *testing.T) {
	for _, coupled := range []bool{false, true} {
		fsys := vfs.NewMem()
		open := func() *storage {
			t.Helper()
			o := &Options{FS: fsys, DataDir: "/data", DataLogDir: "/data", RlogRoot: "/logs", RlogCoupled: coupled,
				Ensemble: &Ensemble{ID: 1, Voters: []uint64{1, 2, 3}}, Logger: slog.New(slog.DiscardHandler), rlogLazySync: true}
			o.setDefaults()
			st, tree, err := openStorage(o)
			if err != nil {
				t.Fatal(err)
			}
			if err := openLogs(st, tree, tree.LastZxid()); err != nil {
				t.Fatal(err)
			}
			return st
		}
		st := open()
		var props [][]byte
		for i := range 8 {
			z := int64(0x100000001 + i)
			h := txn.Header{SessionID: 7, Cxid: int32(i), Zxid: z, Type: wire.OpCreate2}
			tx := txn.Txn{Type: wire.OpCreate2, Path: fmt.Sprintf("/logs/a/e-%010d", i), Data: payload(64<<10, byte(i)), ACL: []wire.ACL{}}
			props = append(props, txn.Append(nil, &h, &tx))
			if err := st.appendEntry(zab.Entry{Zxid: zab.Zxid(z), Data: props[i]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.syncEntries(); err != nil {
			t.Fatal(err)
		}
		fsys.Crash()
		st.close()
		st = open()
		if len(st.recovered) != len(props) {
			t.Fatalf("coupled=%v: %d of %d synced entries recovered", coupled, len(st.recovered), len(props))
		}
		for i, e := range st.recovered {
			if !bytes.Equal(e.Data, props[i]) {
				t.Fatalf("coupled=%v: entry %d recovered with other bytes", coupled, i)
			}
		}
		st.close()
	}
}
