package ensemble

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/corral-db/corral/tests/harness"
)

// TestAlgorithm52 is the failure-recovery test of the diskless-ZooKeeper
// thesis (Algorithm 5.2), under a load of creates. On three servers, F1,
// F2 and the leader L: restart F1; kill L, so F1 or F2 becomes leader L1;
// restart L, now a follower; restart the two followers. After each step
// the load is held and every serving member must report the same
// zk_znode_count and hold every acknowledged create (the thesis compares
// F1N with LN, L1N with LN, ...); at the end every member holds exactly
// the baseline plus the creates that happened.
//
// On 2f+1 servers the same steps are taken with the fault sizes the
// diskless promise allows (at most f servers at once crashed or
// recovering): one follower F1 is restarted, the leader killed and
// restarted, and then every follower of the new leader is restarted, f
// of them together, the thesis's F1 and F2 (the old leader) first. With
// f = 1 that restarts the two followers one after the other; the thesis
// restarts them together, which briefly loses the quorum (an orderly
// stop, so nothing may be lost), and that runs only with -ensemble.long.
func TestAlgorithm52(t *testing.T) {
	t.Parallel()
	for _, mode := range durabilities() {
		// Five servers by default: f = 2 is the first size where the
		// promise lets two servers be down or recovering at once.
		for _, n := range sizes(true) {
			t.Run(fmt.Sprintf("servers=%d%s", n, modeSuffix(mode)), func(t *testing.T) {
				t.Parallel()
				testAlgorithm52(t, n, mode)
			})
		}
	}
}

// modeSuffix names a durability mode in a subtest name.
func modeSuffix(mode string) string {
	if mode == "" {
		return ""
	}
	return ",durability=" + mode
}

func testAlgorithm52(t *testing.T, n int, mode string) {
	rng := newRand(t)
	ens := startDurability(t, n, mode)
	tl := newTimeline(t)
	load := startCreates(t, ens, "/alg52", defaultLoad(3))
	load.waitProgress(t, progressStep, "start")

	l := ens.WaitAll()
	fs := ens.Followers(l)
	rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	f1 := fs[0]
	tl.logf("L = %s, F1 = %s, other followers %s", ens.MemberString(l), ens.MemberString(f1), members(ens, fs[1:]))

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

	leader := ens.WaitAll()
	for _, group := range restartGroups(ens.Followers(leader), f1, l, (ens.Voters()-1)/2) {
		what := "restart " + members(ens, group)
		if len(group) > 1 {
			what += " together"
		}
		tl.logf("%s", what)
		for _, i := range group {
			ens.Server(i).Stop()
		}
		for _, i := range group {
			ens.Launch(i)
		}
		ens.WaitAll()
		load.waitProgress(t, progressStep, what)
		load.checkpoint(t, tl, ens, what+" (FN = L1N)")
	}

	load.halt(t)
	ens.WaitAll()
	tl.logf("load stopped; verifying every member")
	load.verify(t, ens)
}

// restartGroups splits the followers of the current leader into the
// groups the last step restarts together: at most f per group, so never
// more than f voters are down at once, the thesis's F1 and F2 (here f1
// and the old leader l) first. On three servers -ensemble.long restarts
// both followers together, as the thesis does.
func restartGroups(followers []int, f1, l, f int) [][]int {
	first := slices.DeleteFunc(slices.Clone(followers), func(i int) bool { return i != f1 && i != l })
	rest := slices.DeleteFunc(slices.Clone(followers), func(i int) bool { return i == f1 || i == l })
	order := append(first, rest...)
	size := f
	if *long && f == 1 {
		size = len(order)
	}
	var groups [][]int
	for len(order) > 0 {
		k := min(size, len(order))
		groups = append(groups, order[:k:k])
		order = order[k:]
	}
	return groups
}

// members names ensemble members for the log.
func members(ens *harness.Ensemble, idx []int) string {
	names := make([]string, len(idx))
	for i, m := range idx {
		names[i] = ens.MemberString(m)
	}
	return "[" + strings.Join(names, ", ") + "]"
}
