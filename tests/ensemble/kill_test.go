package ensemble

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/corral-db/corral/tests/harness"
)

// progressStep is how many further acknowledged creates show that the
// ensemble serves writes again after a fault.
const progressStep = 30

// TestKillLeaderAndFollowers: while clients create sequential and plain
// znodes, the leader is killed and restarted, a follower is killed and
// restarted, and the leader is frozen for longer than the sync limit and
// the session timeout and then continued (five servers: two followers are
// also killed together). Afterwards every member holds every acknowledged
// create, the same children, and the same znode count.
func TestKillLeaderAndFollowers(t *testing.T) {
	t.Parallel()
	for _, n := range sizes(true) {
		t.Run(fmt.Sprintf("servers=%d", n), func(t *testing.T) {
			t.Parallel()
			testKillLeaderAndFollowers(t, n)
		})
	}
}

func testKillLeaderAndFollowers(t *testing.T, n int) {
	rng := newRand(t)
	ens := start(t, n)
	tl := newTimeline(t)
	load := startCreates(t, ens, "/kill", defaultLoad(4))
	load.waitProgress(t, progressStep, "start")

	// SIGKILL the leader; the others elect a new one; it comes back.
	old := ens.WaitQuorum()
	tl.logf("kill leader %s", ens.MemberString(old))
	ens.Server(old).Kill()
	tl.logf("new leader %s", ens.MemberString(ens.WaitQuorum()))
	load.waitProgress(t, progressStep, "leader kill")
	tl.logf("writes acknowledged again; restart %s", ens.MemberString(old))
	ens.Server(old).StartAgain()
	tl.logf("%s serves as %s", ens.MemberString(old), ens.Mode(old))
	load.waitProgress(t, progressStep, "leader restart")

	// SIGKILL a follower; the quorum keeps serving; it comes back.
	leader := ens.WaitQuorum()
	f := pick(rng, ens.Followers(leader))
	tl.logf("kill follower %s", ens.MemberString(f))
	ens.Server(f).Kill()
	load.waitProgress(t, progressStep, "follower kill")
	tl.logf("writes acknowledged; restart %s", ens.MemberString(f))
	ens.Server(f).StartAgain()
	tl.logf("%s serves as %s", ens.MemberString(f), ens.Mode(f))
	load.waitProgress(t, progressStep, "follower restart")

	if n >= 5 {
		// Two followers at once: still a minority of five.
		leader = ens.WaitQuorum()
		fs := rng.Perm(len(ens.Followers(leader)))[:2]
		a, b := ens.Followers(leader)[fs[0]], ens.Followers(leader)[fs[1]]
		tl.logf("kill followers %s and %s", ens.MemberString(a), ens.MemberString(b))
		ens.Server(a).Kill()
		ens.Server(b).Kill()
		load.waitProgress(t, progressStep, "two follower kills")
		tl.logf("writes acknowledged; restart both")
		ens.Launch(a)
		ens.Launch(b)
		ens.WaitAll()
		tl.logf("both serve again")
		load.waitProgress(t, progressStep, "two follower restarts")
	}

	freezeLeader(t, tl, ens, load)

	load.halt(t)
	ens.WaitAll()
	tl.logf("load stopped; verifying every member")
	load.verify(t, ens)
}

// freezeLeader SIGSTOPs the leader for longer than the sync limit and the
// clients' session timeout: its followers give up on it and elect another,
// its clients move; then SIGCONT: it must notice it was deposed and rejoin
// as a follower.
func freezeLeader(t *testing.T, tl *timeline, ens *harness.Ensemble, load *createLoad) {
	t.Helper()
	frozen := ens.WaitQuorum()
	tl.logf("freeze leader %s", ens.MemberString(frozen))
	since := time.Now()
	ens.Server(frozen).Pause()
	tl.logf("new leader %s while %s is frozen", ens.MemberString(ens.WaitQuorum()), ens.MemberString(frozen))
	load.waitProgress(t, progressStep, "leader freeze")
	tl.logf("writes acknowledged while frozen")
	if rest := freezeFor - time.Since(since); rest > 0 {
		time.Sleep(rest)
	}
	ens.Server(frozen).Resume()
	tl.logf("continued %s", ens.MemberString(frozen))
	// The continued leader serves again only as a follower (or as the
	// leader of a new epoch).
	ens.WaitAll()
	tl.logf("%s serves as %s", ens.MemberString(frozen), ens.Mode(frozen))
	load.waitProgress(t, progressStep, "leader continue")
}

// freezeFor exceeds both the sync limit and the session timeout.
const freezeFor = sessionTimeout + 2*time.Second

func pick(rng *rand.Rand, xs []int) int { return xs[rng.IntN(len(xs))] }

// TestObserver: three voters and an observer. The observer serves
// clients, survives a kill of itself and of the leader, and ends with the
// same tree and znode count as the voters, holding every acknowledged
// create.
func TestObserver(t *testing.T) {
	t.Parallel()
	cfg := ensembleConfig()
	cfg.Observers = 1
	ens := env.StartEnsemble(t, 4, cfg)
	tl := newTimeline(t)
	obs := 3
	if !ens.IsObserver(obs) {
		t.Fatalf("%s is not configured as the observer", ens.MemberString(obs))
	}
	if m := ens.Mode(obs); m != "observer" {
		t.Fatalf("%s serves as %q, want observer", ens.MemberString(obs), m)
	}
	// Four clients, one starting at each member: one of them writes
	// through the observer.
	load := startCreates(t, ens, "/observer", defaultLoad(4))
	load.waitProgress(t, progressStep, "start")

	tl.logf("kill observer %s", ens.MemberString(obs))
	ens.Server(obs).Kill()
	load.waitProgress(t, progressStep, "observer kill")
	ens.Server(obs).StartAgain()
	tl.logf("observer back as %s", ens.Mode(obs))
	load.waitProgress(t, progressStep, "observer restart")

	old := ens.WaitQuorum()
	tl.logf("kill leader %s", ens.MemberString(old))
	ens.Server(old).Kill()
	tl.logf("new leader %s", ens.MemberString(ens.WaitQuorum()))
	load.waitProgress(t, progressStep, "leader kill")
	ens.Server(old).StartAgain()
	load.waitProgress(t, progressStep, "leader restart")
	if m := ens.Mode(obs); m != "observer" {
		t.Errorf("after the leader change %s serves as %q, want observer", ens.MemberString(obs), m)
	}

	load.halt(t)
	ens.WaitAll()
	tl.logf("load stopped; verifying every member")
	load.verify(t, ens)
}
