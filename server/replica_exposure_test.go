package server

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/vfs"
)

// Diskless at a low write rate: writes too few for an idle snapshot (a
// hundredth of snapCount) and too close together for a lull still reach
// a snapshot on every member, within the exposure bound
// (replica.Schedule.MaxExposure), so a crash of every member loses none
// of them. Before the bound, no member wrote any snapshot here.
func TestDisklessLowRateWritesReachASnapshot(t *testing.T) {
	e := startEnsemble(t, 3, func(o *Options) { o.Durability = DurabilityDiskless })
	leader := e.waitLeader()
	ctx := ctxT(t)
	c := e.connect(leader)
	const n = 20
	for i := range n {
		if _, err := c.Create(ctx, fmt.Sprintf("/e%02d", i), []byte("v"), client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			t.Fatal(err)
		}
		time.Sleep(40 * time.Millisecond)
	}
	e.waitConverged()
	last := e.servers[leader].appliedZxid()
	for i := range e.servers {
		dir := filepath.Join(e.opts[i].DataDir, "version-2")
		testutil.Eventually(t, 30*time.Second, fmt.Sprintf("member %d: a snapshot holds %x", i+1, last), func() bool {
			infos, err := snap.Newest(vfs.OS(), dir)
			return err == nil && len(infos) > 0 && infos[0].Zxid >= last
		})
		infos, _ := snap.Newest(vfs.OS(), dir)
		r, err := snap.Open(vfs.OS(), dir, infos[0])
		if err != nil {
			t.Fatal(err)
		}
		tree, err := datatree.ReadSnapshot(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		for j := range n {
			if tree.Get(fmt.Sprintf("/e%02d", j)) == nil {
				t.Fatalf("member %d's snapshot at %x lacks /e%02d", i+1, infos[0].Zxid, j)
			}
		}
	}
}
