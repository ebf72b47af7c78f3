package kvserver

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/replica"
)

// TestNodeFileLeaderChange: the leader change and memtable size set on a
// local cluster reach every replica through the node files, and a bad
// policy in a node file is refused.
func TestNodeFileLeaderChange(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	lc, err := NewLocalCluster(2, 3, dir, replica.Sync, 100*time.Millisecond, "127.0.0.1:1", "", log)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.CloseListeners()
	want := kv.LeaderChangeConfig{Policy: kv.PolicyRoundRobin, Threshold: 1.5, MinInterval: 2 * time.Second}
	if err := lc.Tune(want, 1<<16); err != nil {
		t.Fatal(err)
	}
	for _, f := range lc.Files {
		nc, err := ReadNodeFile(f, log)
		if err != nil {
			t.Fatal(err)
		}
		if len(nc.Groups) != 2 {
			t.Fatalf("%s: %d groups, want 2", f, len(nc.Groups))
		}
		for g, c := range nc.Groups {
			if c.LeaderChange != want || c.MemTableSize != 1<<16 {
				t.Fatalf("%s: %v: leader change %+v memtable %d, want %+v and 65536", f, g, c.LeaderChange, c.MemTableSize, want)
			}
		}
	}
	b, err := os.ReadFile(lc.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(b), `"roundrobin"`, `"hottest"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNodeFile(bad, log); err == nil || !strings.Contains(err.Error(), "leader policy") {
		t.Fatalf("node file with policy hottest: err %v, want a leader policy error", err)
	}
}
