package ensemble

import (
	"slices"
	"testing"
)

// TestAlgorithm52 is the failure-recovery test of the diskless-ZooKeeper
// thesis (Algorithm 5.2) on three servers, F1, F2 and the leader L, under
// a load of creates: restart F1; kill L, so F1 or F2 becomes leader L1;
// restart L, now a follower; restart the two followers. After each step
// the load is held and every serving member must report the same
// zk_znode_count, holding every acknowledged create (the thesis compares
// F1N with LN, L1N with LN, ...); at the end every member holds exactly
// the baseline plus the creates that happened.
//
// The thesis restarts its last two servers together; that briefly loses
// the quorum, so it runs only with -ensemble.long; by default they are
// restarted one after the other.
func TestAlgorithm52(t *testing.T) {
	for _, mode := range durabilities() {
		t.Run("servers=3"+modeSuffix(mode), func(t *testing.T) { testAlgorithm52(t, mode) })
	}
}

// modeSuffix names a durability mode in a subtest name.
func modeSuffix(mode string) string {
	if mode == "" {
		return ""
	}
	return ",durability=" + mode
}

func testAlgorithm52(t *testing.T, mode string) {
	rng := newRand(t)
	ens := startDurability(t, 3, mode)
	tl := newTimeline(t)
	load := startCreates(t, ens, "/alg52", defaultLoad(3))
	load.waitProgress(t, progressStep, "start")

	l := ens.WaitAll()
	fs := ens.Followers(l)
	if rng.IntN(2) == 1 {
		fs[0], fs[1] = fs[1], fs[0]
	}
	f1 := fs[0]
	tl.logf("L = %s, F1 = %s, F2 = %s", ens.MemberString(l), ens.MemberString(f1), ens.MemberString(fs[1]))

	tl.logf("restart F1")
	ens.Server(f1).Restart()
	load.waitProgress(t, progressStep, "F1 restart")
	load.checkpoint(t, tl, ens, "F1 restarted (F1N = LN)")

	tl.logf("kill L")
	ens.Server(l).Kill()
	l1 := ens.WaitQuorum()
	tl.logf("L1 = %s", ens.MemberString(l1))
	if !slices.Contains(fs, l1) {
		t.Fatalf("new leader %s is not one of the followers %v", ens.MemberString(l1), fs)
	}
	load.waitProgress(t, progressStep, "L kill")
	load.checkpoint(t, tl, ens, "L killed (L1N = LN)")

	tl.logf("restart L")
	ens.Server(l).StartAgain()
	if m := ens.Mode(l); m != "follower" {
		t.Errorf("restarted leader serves as %q, want follower", m)
	}
	load.waitProgress(t, progressStep, "L restart")
	load.checkpoint(t, tl, ens, "L restarted as F2 (F2N = L1N)")

	others := ens.Followers(ens.WaitAll())
	if *long {
		tl.logf("restart %v together", others)
		for _, i := range others {
			ens.Server(i).Stop()
		}
		for _, i := range others {
			ens.Launch(i)
		}
		ens.WaitAll()
	} else {
		for _, i := range others {
			tl.logf("restart %s", ens.MemberString(i))
			ens.Server(i).Restart()
		}
	}
	load.waitProgress(t, progressStep, "follower restarts")
	load.checkpoint(t, tl, ens, "F1 and F2 restarted (F1N = F2N = L1N)")

	load.halt(t)
	ens.WaitAll()
	tl.logf("load stopped; verifying every member")
	load.verify(t, ens)
}
