package ensemble

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestLargeDiffPaced: a follower that was down while 70 MB were written
// comes back by a DIFF larger than a link's send queue (64 MiB). Handed
// to the transport at once, the part past the queue was dropped and the
// follower needed a second session; the leader now sends a sync that
// large paced by the link (replica/snapstream: "sent a learner's sync
// paced"), and the follower, read on its own, holds every znode's bytes.
func TestLargeDiffPaced(t *testing.T) {
	t.Parallel()
	if env.IsZooKeeper() {
		t.Skip("the paced sync's log line is corral's")
	}
	cfg := ensembleConfig()
	// No snapshot, so no log cut: the follower's zxid stays in the
	// leader's log and the leader syncs it by DIFF.
	cfg.Server.Extra = append(cfg.Server.Extra, "snapCount=1000000", "snapSizeLimitInKb=0")
	ens := env.StartEnsemble(t, 3, cfg)
	leader := ens.WaitAll()
	fs := ens.Followers(leader)
	f := fs[0]
	c := connect(t, []string{ens.Server(leader).Addr(), ens.Server(fs[1]).Addr()}, 0, "writer")
	ens.Server(f).Kill()
	rng := newRand(t)
	const n, size = 140, 512 << 10
	want := map[string][]byte{}
	for i := 0; i < n; i++ {
		b := make([]byte, size)
		for j := 0; j < len(b); j += 8 {
			b[j] = byte(rng.Uint32())
		}
		p := fmt.Sprintf("/big-%03d", i)
		if _, err := c.Create(p, b, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		want[p] = b
	}
	const paced = "sent a learner's sync paced"
	before := countInLog(t, ens.Server(leader).LogPath, paced)
	ens.Server(f).StartAgain()
	ens.WaitAll()
	cf := connect(t, []string{ens.Server(f).Addr()}, 0, "reader-f")
	if _, err := cf.Sync("/"); err != nil {
		t.Fatalf("sync on %s: %v", ens.MemberString(f), err)
	}
	for p, b := range want {
		got, _, err := cf.Get(p)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%s on the restarted %s: %d bytes, %v; want the %d written", p, ens.MemberString(f), len(got), err, len(b))
		}
	}
	if countInLog(t, ens.Server(leader).LogPath, paced) == before {
		t.Fatalf("the leader %s did not log %q for a %d MB DIFF", ens.MemberString(leader), paced, n*size>>20)
	}
}
