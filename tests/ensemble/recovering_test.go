package ensemble

import (
	"testing"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/go-zookeeper/zk"
)

// TestRecoveringVoters is the scenario diskless mode's recovering-voter
// rule exists for (docs/design/diskless.md), on 5 servers A..E: with D and
// E stopped, a write W commits on A, B and C; A freezes, B and C are
// killed and restart from their busy snapshots (recovering), D and E come
// back without W. Without the rule B, C, D and E could elect a leader
// lacking W. With it, B and C do not vote, D and E are two of five: no
// leader may appear while A is frozen. Once A continues, the ensemble
// elects, and W is on every server.
func TestRecoveringVoters(t *testing.T) {
	t.Parallel()
	if env.IsZooKeeper() {
		t.Skip("durability=diskless is corral's")
	}
	ens := startDurability(t, 5, "diskless")
	tl := newTimeline(t)
	a := ens.WaitAll()
	fs := ens.Followers(a)
	b, c, d, e := fs[0], fs[1], fs[2], fs[3]
	tl.logf("A = %s (leader), B = %s, C = %s, D = %s, E = %s", ens.MemberString(a),
		ens.MemberString(b), ens.MemberString(c), ens.MemberString(d), ens.MemberString(e))

	tl.logf("stop D and E")
	ens.Server(d).Stop()
	ens.Server(e).Stop()
	ens.WaitQuorum()
	cl := connectOne(t, ens, a)
	if _, err := cl.Create("/w", []byte("acknowledged"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create W through A: %v", err)
	}
	cl.Close()
	tl.logf("W acknowledged on A, B and C")

	tl.logf("freeze A; kill B and C; start B, C, D and E")
	ens.Server(a).Pause()
	ens.Server(b).Kill()
	ens.Server(c).Kill()
	for _, i := range []int{b, c, d, e} {
		ens.Launch(i)
	}
	// Safety, not timing: at no point may a leader appear while A, the
	// only voter holding W, is frozen. Watch for several election
	// rounds' worth of time (syncLimit is 5 s).
	usurper := -1
	if testutil.Within(3*syncLimitTime/2, func() bool {
		for _, i := range []int{b, c, d, e} {
			if ens.Mode(i) == "leader" {
				usurper = i
				return true
			}
		}
		return false
	}) {
		t.Fatalf("%s became leader without the only intact server holding W", ens.MemberString(usurper))
	}
	tl.logf("no leader formed without A; continue A")
	ens.Server(a).Resume()
	ens.WaitAll()
	for i := 0; i < ens.Len(); i++ {
		c := connectOne(t, ens, i)
		if _, err := c.Sync("/w"); err != nil {
			t.Fatalf("%s: sync: %v", ens.MemberString(i), err)
		}
		data, _, err := c.Get("/w")
		if err != nil || string(data) != "acknowledged" {
			t.Fatalf("%s: W lost: %q %v", ens.MemberString(i), data, err)
		}
		c.Close()
	}
	tl.logf("W on every server")
}
