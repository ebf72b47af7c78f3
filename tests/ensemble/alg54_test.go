package ensemble

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/corral-db/corral/tests/harness"
)

// TestAlgorithm54 is the restoration test of the diskless-ZooKeeper thesis
// (Algorithm 5.4): one client keeps creating sequential znodes while the
// test goroutine fails members at random (SIGKILL, SIGTERM or SIGSTOP of
// the leader or of followers, never more than a minority of the voters
// down or recovering at once) and brings them back. Afterwards the
// creates the client counted equal the znodes every member holds: all
// acknowledged ones, plus those of ambiguous attempts that happened, and
// nothing else.
func TestAlgorithm54(t *testing.T) {
	t.Parallel()
	for _, mode := range durabilities() {
		// Five servers by default: f = 2 is the first size where the
		// promise lets two servers be down or recovering at once.
		for _, n := range sizes(true) {
			t.Run(fmt.Sprintf("servers=%d%s", n, modeSuffix(mode)), func(t *testing.T) {
				t.Parallel()
				testAlgorithm54(t, n, mode)
			})
		}
	}
}

// alg54Rounds bounds the fault schedule.
func alg54Rounds() int {
	if *long {
		return 16
	}
	return 6
}

func testAlgorithm54(t *testing.T, n int, mode string) {
	rng := newRand(t)
	ens := startDurability(t, n, mode)
	tl := newTimeline(t)
	cfg := defaultLoad(1)
	cfg.sequential = func(int) bool { return true }
	cfg.opPause = 5 * time.Millisecond
	load := startCreates(t, ens, "/alg54", cfg)
	load.waitProgress(t, progressStep, "start")

	for round := 1; round <= alg54Rounds(); round++ {
		injectFault(t, tl, rng, ens, round)
		load.waitProgress(t, progressStep/3, fmt.Sprintf("round %d", round))
	}

	load.halt(t)
	ens.WaitAll()
	tl.logf("load stopped; verifying every member")
	total := load.verify(t, ens)
	tl.logf("N1 = N2 = %d", total)
}

// injectFault fails a random minority of the voters in one random way,
// waits a little, brings them back and waits until every member serves.
func injectFault(t *testing.T, tl *timeline, rng *rand.Rand, ens *harness.Ensemble, round int) {
	t.Helper()
	leader := ens.WaitAll()
	minority := (ens.Voters() - 1) / 2
	victims := []int{leader}
	if rng.IntN(3) > 0 { // followers two times in three
		fs := ens.Followers(leader)
		rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		victims = fs[:1+rng.IntN(minority)]
	} else if minority > 1 && rng.IntN(2) == 0 {
		victims = append(victims, pick(rng, ens.Followers(leader)))
	}
	names := make([]string, len(victims))
	for i, v := range victims {
		names[i] = ens.MemberString(v)
		if v == leader {
			names[i] += " (leader)"
		}
	}
	down := time.Duration(200+rng.IntN(1800)) * time.Millisecond

	switch kind := rng.IntN(3); kind {
	case 0, 1:
		signal := map[int]string{0: "SIGKILL", 1: "SIGTERM"}[kind]
		tl.logf("round %d: %s %v for %s", round, signal, names, down)
		for _, v := range victims {
			if kind == 0 {
				ens.Server(v).Kill()
			} else {
				ens.Server(v).Stop()
			}
		}
		time.Sleep(down)
		for _, v := range victims {
			ens.Launch(v)
		}
	default:
		// Sometimes past the sync limit, so the others give up on them.
		down += time.Duration(rng.IntN(2)) * syncLimitTime
		tl.logf("round %d: SIGSTOP %v for %s", round, names, down)
		for _, v := range victims {
			ens.Server(v).Pause()
		}
		time.Sleep(down)
		for _, v := range victims {
			ens.Server(v).Resume()
		}
	}
	tl.logf("round %d: all serve again, leader %s", round, ens.MemberString(ens.WaitAll()))
}
