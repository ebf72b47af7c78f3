package ensemble

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// TestLinearizableCASPartitions: the CAS workload of TestLinearizableCAS
// while the network between members fails silently (harness relays; the
// connections stay open and their bytes are held, as packets dropped and
// later retransmitted): the leader cut off from every follower, a
// follower cut off, and the leader cut off from one follower only (the
// follower loses its leader while the other follower still hears from
// both); with five members also the leader and a follower split from
// the other three; the leader's messages to a follower lost, then a
// follower's to the leader; then random partitions (a member isolated, a
// minority split off, one pair cut, one way of a pair cut), each healed
// before the next. Clients reach every member directly, so those of a cut-off
// member see it as it is. The history must be linearizable, and after
// each heal every member serves again with the same tree.
func TestLinearizableCASPartitions(t *testing.T) {
	t.Parallel()
	for _, mode := range durabilities() {
		for _, n := range sizes(false) {
			name := fmt.Sprintf("servers=%d", n)
			if mode != "" {
				name = "durability=" + mode + "/" + name
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				testCASPartitions(t, n, mode)
			})
		}
	}
}

func testCASPartitions(t *testing.T, n int, mode string) {
	cfg := durabilityConfig(mode)
	cfg.Partitionable = true
	ens := env.StartEnsemble(t, n, cfg)
	t.Logf("ensemble of %d up at %s, leader %s", n, ens.ConnectString(), ens.MemberString(ens.WaitAll()))
	rng := newRand(t)
	// Long enough for the scripted faults and the random rounds.
	bounds := casBounds{maxOps: 1500, maxTime: 150 * time.Second}
	if *long {
		bounds.maxTime = 300 * time.Second
	}
	runCAS(t, ens, bounds, func(ens *harness.Ensemble, tl *timeline, waitOps func(int, string)) {
		heal := func(what string) {
			ens.Heal()
			tl.logf("healed; leader %s", ens.MemberString(ens.WaitAll()))
			waitOps(30, what+" healed")
		}

		old := ens.WaitQuorum()
		tl.logf("isolate leader %s", ens.MemberString(old))
		ens.Isolate(old)
		tl.logf("new leader %s", ens.MemberString(leaderOtherThan(t, ens, old)))
		waitOps(30, "leader isolated")
		heal("leader isolation")

		if ens.Len() >= 5 {
			// The leader in a minority with a follower.
			leader := ens.WaitQuorum()
			minority := []int{leader, ens.Followers(leader)[0]}
			tl.logf("split: leader %s and %s from the rest", ens.MemberString(leader), ens.MemberString(minority[1]))
			for i := range ens.Len() {
				if i != minority[0] && i != minority[1] {
					ens.Cut(minority[0], i)
					ens.Cut(minority[1], i)
				}
			}
			nl := leaderOtherThan(t, ens, leader)
			if nl == minority[1] {
				t.Fatalf("%s leads from a minority of 2 of %d", ens.MemberString(nl), ens.Len())
			}
			tl.logf("new leader %s", ens.MemberString(nl))
			waitOps(30, "split")
			heal("split")
		}

		// onFollower cuts with cut(leader, f) for a follower f, waits
		// until the cut shows (f stops serving, or the sync limit
		// passes), and heals once the load went on meanwhile.
		onFollower := func(what string, cut func(leader, f int), fStops bool) {
			leader := ens.WaitQuorum()
			f := ens.Followers(leader)[0]
			tl.logf("%s: leader %s, follower %s", what, ens.MemberString(leader), ens.MemberString(f))
			cut(leader, f)
			if fStops {
				notServing(t, ens, f)
				tl.logf("%s stopped serving", ens.MemberString(f))
			} else {
				time.Sleep(syncLimitTime + time.Second)
			}
			waitOps(30, what)
			heal(what)
		}
		onFollower("isolate the follower", func(_, f int) { ens.Isolate(f) }, true)
		onFollower("cut the leader from the follower only", ens.Cut, true)
		// One way: the leader's messages to the follower are lost (it
		// gives up on a leader that still hears it), then its messages
		// to the leader (the leader hears no acks from a follower that
		// still hears it).
		onFollower("drop what the leader sends to the follower", ens.CutOneWay, true)
		onFollower("drop what the follower sends to the leader", func(leader, f int) { ens.CutOneWay(f, leader) }, false)

		// Random partitions, some shorter than the sync limit (what the
		// relays held arrives late, on connections still open), some
		// longer; each healed before the next.
		rounds := 4
		if *long {
			rounds = 16
		}
		for r := range rounds {
			hold := time.Duration(200+rng.IntN(7000)) * time.Millisecond
			switch k := rng.IntN(4); k {
			case 0:
				i := rng.IntN(ens.Len())
				tl.logf("round %d: isolate %s for %v", r, ens.MemberString(i), hold)
				ens.Isolate(i)
			case 1:
				side := rng.Perm(ens.Len())[:1+rng.IntN(ens.Len()/2)]
				tl.logf("round %d: split %v from the rest for %v", r, side, hold)
				for _, i := range side {
					for j := range ens.Len() {
						if !slices.Contains(side, j) {
							ens.Cut(i, j)
						}
					}
				}
			case 2:
				p := rng.Perm(ens.Len())
				tl.logf("round %d: cut %s from %s for %v", r, ens.MemberString(p[0]), ens.MemberString(p[1]), hold)
				ens.Cut(p[0], p[1])
			default:
				p := rng.Perm(ens.Len())
				tl.logf("round %d: drop what %s sends to %s for %v", r, ens.MemberString(p[0]), ens.MemberString(p[1]), hold)
				ens.CutOneWay(p[0], p[1])
			}
			time.Sleep(hold)
			ens.Heal()
		}
		tl.logf("healed; leader %s", ens.MemberString(ens.WaitAll()))
		waitOps(30, "random partitions")
		sameZnodeCount(t, ens)
	})
}

// leaderOtherThan waits until a member other than old leads and returns
// it.
func leaderOtherThan(t *testing.T, ens *harness.Ensemble, old int) int {
	t.Helper()
	leader := -1
	testutil.Eventually(t, progressWait, fmt.Sprintf("a leader other than %s", ens.MemberString(old)), func() bool {
		for i := range ens.Len() {
			if i != old && ens.Mode(i) == "leader" {
				leader = i
				return true
			}
		}
		return false
	})
	return leader
}

// notServing waits until member i, cut off from its leader, stops
// serving (after the sync limit it looks for a leader it cannot reach).
func notServing(t *testing.T, ens *harness.Ensemble, i int) {
	t.Helper()
	testutil.Eventually(t, progressWait, fmt.Sprintf("%s stops serving", ens.MemberString(i)), func() bool {
		return ens.Mode(i) == ""
	})
}
