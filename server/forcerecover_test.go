package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-db/corral/vfs"
)

// After every member stopped, members 1 and 2 lose their checkpoints (as
// after a crash: they restart recovering from a fuzzy snapshot) while
// member 3 keeps its own. Restarted with ForceRecover in decreasing zxid
// order (3, then 1 and 2), 1 and 2 start as voters and record it; 3,
// complete, ignores the flag. The election picks 3 (the newest history),
// so every write is kept, on every member, and none is left recovering.
func TestForceRecoverStartsVotersAndRecordsIt(t *testing.T) {
	e := startEnsemble(t, 3, func(o *Options) { o.Durability, o.SnapCount = DurabilityDiskless, 20 })
	ctx := ctxT(t)
	e.writeThenStopAll(ctx, "/f", 100)
	for i := range 2 {
		dir := filepath.Join(e.opts[i].DataDir, "version-2")
		for _, name := range listPrefix(t, vfs.OS(), dir, "checkpoint.") {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// In the order the procedure asks for (the newest history first, the
	// next once a leader is up), so the first quorum holds the newest.
	for i := range e.servers {
		e.opts[i].Ensemble.ForceRecover = true
		e.servers[i] = nil
	}
	e.restart(2)
	e.restart(0)
	if l := e.waitLeader(); l != 2 {
		t.Fatalf("server %d leads, want 3 (the newest history)", l+1)
	}
	e.restart(1)
	e.waitLeader()
	e.waitConverged()
	for i := range e.servers {
		if e.servers[i].rep.recovering() {
			t.Errorf("server %d still recovering after a forced start", i+1)
		}
		rec, err := os.ReadFile(filepath.Join(e.opts[i].DataDir, "version-2", forcedRecoveryFile))
		switch {
		case i < 2 && (err != nil || !strings.Contains(string(rec), "forced recovery: member")):
			t.Errorf("server %d: no record of its forced start: %q %v", i+1, rec, err)
		case i == 2 && err == nil:
			t.Errorf("server 3 restarted complete, yet recorded a forced start: %q", rec)
		}
		kids, err := e.connect(i).Children(ctx, "/")
		if err != nil {
			t.Fatal(err)
		}
		if len(kids) != 101 {
			t.Errorf("server %d has %d children of /, want 101: the complete member's history", i+1, len(kids))
		}
		out, err := fourLetter(e.servers[i].addr, "mntr")
		if err != nil || !strings.Contains(out, "zk_recovering\t0\n") {
			t.Errorf("server %d mntr: want zk_recovering 0: %v\n%s", i+1, err, out)
		}
	}
	for i := range e.servers {
		e.servers[i].stop(t)
	}
}
