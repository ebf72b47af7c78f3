package server

import (
	"bytes"
	"testing"
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
