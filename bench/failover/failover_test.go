package failover

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/internal/fakezk"
)

// TestFailoverKillsAndRestartsTheLeader runs the harness against fake
// members (this test binary): the highest-numbered live member leads, and
// the members share no state, so the writer's follower keeps answering
// when the leader dies and the gaps are just write latencies. What is
// checked is the harness: who is killed, that it comes back, and what the
// report holds.
func TestFailoverKillsAndRestartsTheLeader(t *testing.T) {
	t.Setenv(fakezk.ProcessEnv, "1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := t.TempDir()
	rep, err := Run(ctx, Config{
		Target: launch.TargetCorral, CorralBin: os.Args[0], Trials: 3, Pre: 50 * time.Millisecond,
		RecoveryTimeout: 10 * time.Second, WholeTimeout: 20 * time.Second,
		WorkDir: t.TempDir(), OutDir: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Trials) != 3 || rep.Summary().Trials != 3 || rep.Negotiated != 30*time.Second {
		t.Fatalf("report %+v", rep)
	}
	pids := map[int]bool{}
	for _, tr := range rep.Trials {
		// server.3 always leads when up, so it is killed every time; the
		// writer starts on the members in turn, skipping the leader.
		if tr.Killed != 3 || tr.NewLeader != 3 || tr.WriterFrom != []int{1, 2, 1}[tr.Trial-1] || tr.Err != "" {
			t.Errorf("trial %+v", tr)
		}
		if tr.WriterTo != tr.WriterFrom || tr.Reconnects != 0 || tr.WritesBefore < minWritesBeforeKill || tr.GapMs <= 0 {
			t.Errorf("writer in trial %+v", tr)
		}
		if pids[tr.KilledPID] {
			t.Errorf("pid %d killed twice: not restarted", tr.KilledPID)
		}
		pids[tr.KilledPID] = true
	}
	for _, f := range []string{"corral.s1.log", "corral.s3.zoo.cfg"} {
		if _, err := os.Stat(out + "/" + f); err != nil {
			t.Error(err)
		}
	}
}

// TestFailoverWriterMovesToALiveServer kills the member the writer is on
// (an in-process fake): the writer must resume its session on another.
func TestFailoverWriterMovesToALiveServer(t *testing.T) {
	a := fakezk.NewServer(t, fakezk.InOrder, 0)
	b := fakezk.NewServer(t, fakezk.InOrder, 0)
	for _, s := range []*fakezk.Server{a, b} {
		s.Resume = true
		s.Nodes[FailoverPath], s.Attempted[FailoverPath] = []byte{}, true
	}
	w := newFailWriter([]string{a.Addr(), b.Addr()}, 0, []byte(FailoverPath), []byte("x"), 4*time.Second, 100000, time.Minute, func(string, ...any) {})
	ctx := failoverBenchTestCtx(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx)
	}()
	stop := w.finish
	if err := PollUntil(ctx, done, 10*time.Second, func() bool { return w.okCount.Load() >= 20 }); err != nil {
		stop()
		t.Fatal(err)
	}
	a.Crash()
	kill := w.since()
	err := PollUntil(ctx, done, 10*time.Second, func() bool { return time.Duration(w.lastOKSent.Load()) >= kill })
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if w.cur != 1 || w.reconnects != 1 || w.newSessions != 0 {
		t.Errorf("writer on %d after %d reconnects, %d new sessions", w.cur, w.reconnects, w.newSessions)
	}
	b.Mu.Lock()
	sessions := b.Sessions
	b.Mu.Unlock()
	if sessions != 1 {
		t.Errorf("second server saw %d handshakes, want 1", sessions)
	}
	if _, err := computeGap(w.recs, kill); err != nil {
		t.Error(err)
	}
	a.Check()
	b.Check()
}

func TestWriterServerSkipsTheLeader(t *testing.T) {
	for _, c := range []struct{ n, leader, want int }{
		{1, 3, 1}, {2, 3, 2}, {3, 3, 1}, {4, 3, 1},
		{1, 1, 2}, {2, 2, 3}, {3, 1, 3}, {6, 3, 1},
	} {
		if got := writerServer(c.n, c.leader, 3); got != c.want {
			t.Errorf("writerServer(%d, leader %d) = %d, want %d", c.n, c.leader, got, c.want)
		}
	}
}
