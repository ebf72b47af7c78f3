package kvserver

import (
	"log/slog"
	"testing"
	"time"

	"github.com/corral-db/corral/replica"
)

// TestFollowersElectWhenLeaderLinkBreaks: when the leader's process ends,
// its followers see their quorum connections to it close and elect a new
// leader at once, long before syncLimit (here a minute) would have told
// them the leader is gone.
func TestFollowersElectWhenLeaderLinkBreaks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member group")
	}
	logger := slog.New(slog.NewTextHandler(testLogWriter{t}, nil))
	g, err := NewLocalGroup(3, t.TempDir(), replica.Diskless, 100*time.Millisecond, logger)
	if err != nil {
		t.Fatal(err)
	}
	const syncLimit = 600 // ticks: a minute, far past the wait below
	ms := make([]*member, len(g.Configs))
	for i, c := range g.Configs {
		c.SyncLimit = syncLimit
		ms[i] = &member{cfg: c}
		ms[i].start(t)
	}
	defer func() {
		for _, m := range ms {
			if m.running() {
				m.stop(t)
			}
		}
	}()
	old := leader(t, ms)
	stopped := time.Now()
	ms[old].stop(t)
	// leader waits at most 20 s for a running member to serve as leader;
	// without the link report the followers would still be following the
	// stopped one until syncLimit ran out.
	now := leader(t, ms)
	if now == old {
		t.Fatalf("member %d still leads after it stopped", ms[old].cfg.ID)
	}
	if limit := syncLimit * ms[0].cfg.TickTime; time.Since(stopped) >= limit {
		t.Fatalf("new leader only after syncLimit (%v): the followers waited it out", limit)
	}
}
