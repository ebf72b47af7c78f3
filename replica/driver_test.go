package replica

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/zab"
)

// A busy snapshot comes due by bytes written (Schedule.SnapBytes) long
// before the count when entries are large, at a point between half the
// bytes and all of them; without SnapBytes bytes never make one due.
func TestSchedulerSnapBytes(t *testing.T) {
	now := time.Unix(0, 0)
	for range 20 {
		s := newScheduler(Schedule{SnapCount: 100000, SnapBytes: 1 << 20}, false, testRand())
		written := int64(0)
		for {
			if _, ok := s.due(now); ok {
				break
			}
			if written > 1<<20 {
				t.Fatalf("not due after %d bytes with SnapBytes 1 MiB", written)
			}
			s.wrote(1, 64<<10, now)
			written += 64 << 10
		}
		if written < 512<<10 {
			t.Fatalf("due after %d bytes, below SnapBytes/2", written)
		}
		s.start(snapBusy)
		s.finish(now, 0)
		if _, ok := s.due(now); ok {
			t.Fatal("due again with nothing written since the snapshot started")
		}
	}
	s := newScheduler(Schedule{SnapCount: 100000}, false, testRand())
	s.wrote(10, 1<<40, now)
	if _, ok := s.due(now); ok {
		t.Fatal("due by bytes without SnapBytes")
	}
}

func TestSchedulerBusySnapshotsAreSpaced(t *testing.T) {
	s := newScheduler(Schedule{SnapCount: 10, Spacing: 4}, false, testRand())
	now := time.Unix(0, 0)
	if _, ok := s.due(now); ok {
		t.Fatal("due with no writes")
	}
	s.wrote(10, 0, now)
	if k, ok := s.due(now); !ok || k != snapBusy {
		t.Fatalf("after snapCount writes: due=%v kind=%v", ok, k)
	}
	s.start(snapBusy)
	if _, ok := s.due(now); ok {
		t.Fatal("due while one runs")
	}
	s.finish(now.Add(time.Second), time.Second)
	s.wrote(10, 0, now.Add(time.Second))
	if _, ok := s.due(now.Add(4 * time.Second)); ok {
		t.Fatal("due within the spacing (4 x the last snapshot's second)")
	}
	if _, ok := s.due(now.Add(5 * time.Second)); !ok {
		t.Fatal("not due once the spacing ended")
	}
}

func TestSchedulerDisklessIdleSnapshots(t *testing.T) {
	s := newScheduler(Schedule{SnapCount: 1000, IdleQuiet: 100 * time.Millisecond, IdleMin: 5, MaxExposure: -1}, true, testRand())
	now := time.Unix(0, 0)
	s.wrote(3, 0, now)
	if _, ok := s.due(now.Add(time.Second)); ok {
		t.Fatal("idle snapshot below IdleMin writes")
	}
	if s.idleDeclined() == 0 {
		t.Fatal("the lull below IdleMin was not counted as declined")
	}
	s.wrote(3, 0, now)
	if _, ok := s.due(now.Add(50 * time.Millisecond)); ok {
		t.Fatal("idle snapshot before the lull lasted IdleQuiet")
	}
	k, ok := s.due(now.Add(100 * time.Millisecond))
	if !ok || k != snapIdle {
		t.Fatalf("no idle snapshot in the lull: %v %v", ok, k)
	}
	s.start(k)
	s.finish(now.Add(200*time.Millisecond), 100*time.Millisecond)
	s.wrote(10, 0, now.Add(200*time.Millisecond))
	if _, ok := s.due(now.Add(400 * time.Millisecond)); ok {
		t.Fatal("idle snapshot within the spacing")
	}
	if _, ok := s.due(now.Add(600 * time.Millisecond)); !ok {
		t.Fatal("no idle snapshot after the spacing")
	}
	// Busy diskless snapshots are not spaced.
	s.start(snapIdle)
	s.finish(now.Add(time.Second), time.Hour)
	s.wrote(1000, 0, now.Add(time.Second))
	if k, ok := s.due(now.Add(time.Second)); !ok || k != snapBusy {
		t.Fatal("a diskless busy snapshot waited for the spacing")
	}
}

func TestGroupReplicatesInEveryMode(t *testing.T) {
	for _, mode := range []Mode{Sync, Async, Diskless} {
		t.Run(mode.String(), func(t *testing.T) {
			g := newGroup(t, 3, mode, Schedule{})
			z := g.write(20)
			want := g.m[1].sm.zxids()
			if len(want) != 20 || want[19] != z {
				t.Fatalf("member 1 applied %v", want)
			}
			for _, id := range g.ids[1:] {
				if got := g.m[id].sm.zxids(); !slices.Equal(got, want) {
					t.Fatalf("member %d applied %v, member 1 %v", id, got, want)
				}
			}
		})
	}
}

// A follower acknowledges only what its log store synced: with syncs
// held back, nothing commits.
func TestNothingCommitsBeforeTheLogIsSynced(t *testing.T) {
	g := newGroup(t, 3, Sync, Schedule{})
	l := g.stable()
	g.noSync = true
	z, err := g.m[l].d.Propose([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		g.step()
	}
	for _, id := range g.ids {
		if g.m[id].sm.Applied() >= z {
			t.Fatalf("member %d applied %v before any member synced its log", id, z)
		}
	}
	for _, id := range g.ids {
		if err := g.m[id].d.SyncLog(); err != nil {
			t.Fatal(err)
		}
	}
	if !g.runUntil(200, func() bool { return g.m[l].sm.Applied() >= z }) {
		t.Fatal("not committed after the syncs")
	}
}

// TestSnapBytesWeighsRecords: the byte trigger counts the log store's
// records; with a Weigher store (the logs' data log takes payloads out
// of its records), what the store weighs them, not the entries' data.
func TestSnapBytesWeighsRecords(t *testing.T) {
	for _, weigh := range []bool{false, true} {
		g := newGroup(t, 1, Sync, Schedule{SnapCount: 1 << 20, SnapBytes: 64 << 10})
		g.weigh = weigh
		g.restart(1)
		l := g.stable()
		var z zab.Zxid
		for range 40 { // 160 KB of data: past SnapBytes whatever point it drew
			var err error
			if z, err = g.m[l].d.Propose(make([]byte, 4096)); err != nil {
				t.Fatal(err)
			}
		}
		if !g.runUntil(3000, func() bool { return g.m[l].sm.Applied() >= z }) {
			t.Fatal("the writes were not applied")
		}
		ok, err := g.m[l].d.MaybeSnapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok == weigh {
			t.Errorf("weigher %v: snapshot due %v after 40 entries of 4 KiB (records of %d bytes with a weigher) and SnapBytes 64 KiB", weigh, ok, weighFakeBytes)
		}
	}
}

// The log is cut at busy snapshots; diskless keeps one interval more, and
// idle snapshots do not move the cut.
func TestLogCut(t *testing.T) {
	t.Run("sync", func(t *testing.T) {
		g := newGroup(t, 1, Sync, Schedule{SnapCount: 2})
		z := g.write(5)
		d := g.m[1].d
		if ok, err := d.MaybeSnapshot(context.Background()); err != nil || !ok {
			t.Fatalf("no snapshot: %v %v", ok, err)
		}
		if f := d.LogFloor(); f != z {
			t.Fatalf("log cut at %v, want the snapshot %v", f, z)
		}
	})
	t.Run("diskless", func(t *testing.T) {
		g := newGroup(t, 1, Diskless, Schedule{SnapCount: 4, IdleQuiet: 50 * time.Millisecond, IdleMin: 1})
		d := g.m[1].d
		snap := func(want snapKind) {
			t.Helper()
			k, ok := d.sched.due(g.clock.Now())
			if !ok || k != want {
				t.Fatalf("due=%v kind=%v, want %v", ok, k, want)
			}
			if ok, err := d.MaybeSnapshot(context.Background()); err != nil || !ok {
				t.Fatalf("no snapshot: %v %v", ok, err)
			}
		}
		z1 := g.write(4)
		snap(snapBusy)
		if f := d.LogFloor(); f != 0 {
			t.Fatalf("first busy snapshot cut the log at %v; want it kept back to the start", f)
		}
		z2 := g.write(4)
		snap(snapBusy)
		if f := d.LogFloor(); f != z1 {
			t.Fatalf("second busy snapshot cut at %v, want the first (%v)", f, z1)
		}
		g.write(1)
		g.clock.t = g.clock.t.Add(time.Second)
		snap(snapIdle)
		if f := d.LogFloor(); f != z1 {
			t.Fatalf("an idle snapshot moved the cut to %v", f)
		}
		g.write(4)
		snap(snapBusy)
		if f := d.LogFloor(); f != z2 {
			t.Fatalf("third busy snapshot cut at %v, want the second (%v)", f, z2)
		}
	})
}

// A member the log cannot bring up to date installs the leader's image.
func TestSnapInstall(t *testing.T) {
	g := newGroup(t, 3, Sync, Schedule{SnapCount: 2})
	g.write(3)
	l, f := g.isolateFollower()
	z := g.write(10)
	if ok, err := g.m[l].d.MaybeSnapshot(context.Background()); err != nil || !ok {
		t.Fatalf("leader took no snapshot: %v %v", ok, err)
	}
	if g.m[l].d.LogFloor() != z {
		t.Fatalf("leader's log cut at %v, want %v", g.m[l].d.LogFloor(), z)
	}
	delete(g.cut, f)
	if !g.runUntil(3000, func() bool { return g.m[f].sm.Applied() >= z }) {
		t.Fatalf("member %d did not catch up: %s", f, g.describe())
	}
	if n := g.m[f].d.SnapInstalls(); n != 1 {
		t.Fatalf("member %d installed %d snapshots, want 1", f, n)
	}
	if got, want := g.m[f].sm.zxids(), g.m[l].sm.zxids(); !slices.Equal(got, want) {
		t.Fatalf("after SNAP member %d holds %v, leader %v", f, got, want)
	}
	if log := g.m[f].log; len(log.ents) > 0 && log.ents[0].Zxid <= 0 {
		t.Fatal("log not cut to the snapshot")
	}
}

// Diskless: a member that loses its leader writes a complete checkpoint
// before it votes; joining a leader invalidates it; a member restarted
// from a partial snapshot is recovering and writes none.
func TestCheckpointTriggers(t *testing.T) {
	g := newGroup(t, 3, Diskless, Schedule{IdleQuiet: -1})
	z := g.write(5)
	l, f := g.follower()
	fm := g.m[f]
	if fm.ckpt.complete {
		t.Fatal("a following member's checkpoint is complete")
	}
	n0 := fm.ckpt.n
	g.crash(l)
	if !g.runUntil(300, func() bool { return fm.ckpt.n > n0 }) {
		t.Fatal("no checkpoint after the leader crashed")
	}
	if fm.ckpt.at < z {
		t.Fatalf("checkpoint at %v, want it to hold %v", fm.ckpt.at, z)
	}
	// The old leader restarts from its (empty) partial state: recovering,
	// it writes no checkpoint and needs a leader to vote again.
	g.restart(l)
	if !g.m[l].d.Status().Recovering {
		t.Fatal("a member restarted from a partial snapshot is not recovering")
	}
	n := g.m[l].ckpt.n
	if err := g.m[l].d.Checkpoint(); err != nil || g.m[l].ckpt.n != n {
		t.Fatalf("a recovering member wrote a checkpoint (%v)", err)
	}
	g.stable()
	if !g.runUntil(3000, func() bool { return g.m[l].sm.Applied() >= z && !g.m[l].d.Status().Recovering }) {
		t.Fatal("the recovering member was not synchronized")
	}
	for _, id := range g.ids {
		if g.m[id].ckpt.complete {
			t.Fatalf("member %d still has a complete checkpoint after joining a leader", id)
		}
	}
}

func TestBreakIgnoreRecoveringStartsAVoter(t *testing.T) {
	g := newGroup(t, 3, Diskless, Schedule{IdleQuiet: -1})
	g.write(2)
	l := g.stable()
	g.crash(l)
	g.breaks.IgnoreRecovering = true
	g.restart(l)
	if g.m[l].d.Status().Recovering {
		t.Fatal("the break did not take")
	}
}

func testRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func (g *group) describe() string {
	s := ""
	for _, id := range g.ids {
		st := g.m[id].d.Status()
		s += fmt.Sprintf("[%d %v/%v leader=%d last=%v commit=%v applied=%v floor=%v] ", id, st.State, st.Phase, st.Leader, st.LastZxid, st.Commit, g.m[id].sm.Applied(), g.m[id].d.LogFloor())
	}
	return s
}

// Diskless: at a low write rate with no lull long enough, a write waits
// at most the exposure bound for a snapshot; at a high rate the count
// cadence rules.
func TestSchedulerDisklessExposureBound(t *testing.T) {
	s := newScheduler(Schedule{SnapCount: 100000, IdleQuiet: 100 * time.Millisecond, MaxExposure: time.Second}, true, testRand())
	now := time.Unix(0, 0)
	// One write every 50 ms: never a 100 ms lull, never IdleMin (1000).
	for i := 0; i < 19; i++ {
		s.wrote(1, 0, now.Add(time.Duration(i)*50*time.Millisecond))
		if _, ok := s.due(now.Add(time.Duration(i) * 50 * time.Millisecond)); ok {
			t.Fatalf("snapshot due after %d writes in %v", i+1, time.Duration(i)*50*time.Millisecond)
		}
	}
	s.wrote(1, 0, now.Add(time.Second))
	if k, ok := s.due(now.Add(time.Second)); !ok || k != snapIdle {
		t.Fatalf("the oldest write waited the bound: due=%v kind=%v", ok, k)
	}
	s.start(snapIdle)
	s.finish(now.Add(time.Second+300*time.Millisecond), 300*time.Millisecond)
	// The bound grows to 5x the last snapshot (1.5 s), the spacing to 4x.
	s.wrote(1, 0, now.Add(2*time.Second))
	if _, ok := s.due(now.Add(3 * time.Second)); ok {
		t.Fatal("snapshot before 5x the last snapshot's duration")
	}
	if _, ok := s.due(now.Add(3*time.Second + 600*time.Millisecond)); !ok {
		t.Fatal("no snapshot after 5x the last snapshot's duration")
	}

	// 20,000 writes/s for a second: above IdleMin per IdleQuiet, so the
	// bound stands aside for the count.
	h := newScheduler(Schedule{SnapCount: 100000, IdleQuiet: 100 * time.Millisecond, MaxExposure: time.Second}, true, testRand())
	for i := 0; i <= 100; i++ {
		at := now.Add(time.Duration(i) * 10 * time.Millisecond)
		h.wrote(200, 0, at)
		if k, ok := h.due(at); ok {
			t.Fatalf("snapshot (%v) at %v under sustained load below the count", k, at)
		}
	}
}

// A Persisted report for entries appended before a Ready that cut the log
// (TRUNC, SNAP) is dropped: it would vouch for entries that no longer
// exist, and the ones that replaced them are not synced.
func TestStalePersistedIsDropped(t *testing.T) {
	g := newGroup(t, 1, Sync, Schedule{})
	g.write(1)
	g.noSync = true
	d := g.m[1].d
	z, err := d.Propose([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Process(); err != nil {
		t.Fatal(err)
	}
	// A cut comes between the append and its sync.
	d.mu.Lock()
	d.gen++
	d.mu.Unlock()
	if err := d.SyncLog(); err != nil {
		t.Fatal(err)
	}
	if p := d.Status().Persisted; p >= z {
		t.Fatalf("persisted %v after a stale report for %v", p, z)
	}
	// A report of the current generation counts.
	z2, err := d.Propose([]byte("y"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Process(); err != nil {
		t.Fatal(err)
	}
	if err := d.SyncLog(); err != nil {
		t.Fatal(err)
	}
	if p := d.Status().Persisted; p != z2 {
		t.Fatalf("persisted %v, want %v", p, z2)
	}
}

// A SNAP held in transit for several InitLimits completes while the
// transports at both ends report progress (the TCP transport does for
// every chunk of a large frame): the learner neither gives up its join
// nor is forgotten by the leader. Without the reports it gives up, as it
// must for a stalled transfer.
func TestSnapInTransitForLongCompletesWithProgress(t *testing.T) {
	for _, progress := range []bool{true, false} {
		t.Run(fmt.Sprintf("progress=%v", progress), func(t *testing.T) {
			g := newGroup(t, 3, Sync, Schedule{SnapCount: 2})
			g.write(3)
			l := g.stable()
			f := l%3 + 1
			g.cut[f] = true
			g.m[l].d.ReportUnreachable(f)
			g.m[f].d.ReportUnreachable(l)
			z := g.write(10)
			if ok, err := g.m[l].d.MaybeSnapshot(context.Background()); err != nil || !ok {
				t.Fatalf("leader took no snapshot: %v %v", ok, err)
			}
			delete(g.cut, f)
			// Hold everything from the leader to f once its SNAP is
			// queued, as a slow TCP connection would.
			var held []zab.Message
			holding := false
			take := func() {
				var keep []zab.Message
				for _, m := range g.q {
					if m.From == l && m.To == f && (holding || m.Type == zab.MsgSync && m.Sync == zab.SyncSnap) {
						holding = true
						held = append(held, m)
						continue
					}
					keep = append(keep, m)
				}
				g.q = keep
			}
			if !g.runUntil(3000, func() bool { take(); return holding }) {
				t.Fatalf("no SNAP to %d: %s", f, g.describe())
			}
			looked := false
			const initLimitSteps = 10 * 3 // zab's default InitLimit; a tick every third step
			for range 5 * initLimitSteps {
				if progress {
					g.m[f].d.ReportProgress(l)
					g.m[l].d.ReportProgress(f)
				}
				g.step()
				take()
				if st := g.m[f].d.Status(); st.State == zab.StateLooking {
					looked = true
				}
			}
			if looked == progress {
				t.Fatalf("SNAP held for 5 InitLimits: learner looked again %v, want %v", looked, !progress)
			}
			if !progress {
				return
			}
			g.q = append(held, g.q...)
			if !g.runUntil(3000, func() bool { return g.m[f].sm.Applied() >= z }) {
				t.Fatalf("member %d did not catch up: %s", f, g.describe())
			}
			if n := g.m[f].d.SnapInstalls(); n != 1 {
				t.Fatalf("member %d installed %d snapshots, want 1", f, n)
			}
		})
	}
}

// ReportProgress is called from transport goroutines and must not wait
// for the node loop, which may hold the driver's lock for a long time
// (building or installing the very snapshot whose bytes are moving).
func TestReportProgressDoesNotWaitForTheNode(t *testing.T) {
	g := newGroup(t, 3, Sync, Schedule{})
	d := g.m[1].d
	d.mu.Lock()
	done := make(chan struct{})
	go func() {
		d.ReportProgress(2)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("ReportProgress waited for the driver's lock")
	}
	d.mu.Unlock()
}

// While a member builds or installs a SNAP image (no bytes move over the
// link), it tells the other end every SyncProgressEvery that the sync is
// moving, and stops when the step is done. The subject is a ticker: the
// test runs in a synctest bubble, whose clock moves only when every
// goroutine in it waits, so a step of 3.5 periods sees exactly 3 ticks.
func TestWhileSyncingSendsProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const every = 10 * time.Millisecond
		var mu sync.Mutex
		var got []zab.Message
		d := &Driver{cfg: Config{ID: 2, SyncProgressEvery: every}, env: Env{Send: func(msgs []zab.Message) {
			mu.Lock()
			got = append(got, msgs...)
			mu.Unlock()
		}}}
		err := d.whileSyncing(1, func() error {
			time.Sleep(3*every + every/2)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		after := len(got)
		for _, m := range got {
			if m.Type != zab.MsgSyncProgress || m.From != 2 || m.To != 1 {
				t.Errorf("sent %v, want SYNCPROGRESS 2->1", m)
			}
		}
		mu.Unlock()
		if after != 3 {
			t.Fatalf("%d progress messages in a step of 3.5 periods, want 3", after)
		}
		time.Sleep(10 * every)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(got) != after {
			t.Fatalf("%d progress messages after the step ended", len(got)-after)
		}
	})
}

// A group of one (a standalone server) leads without a tick, and Drive
// runs a proposal to its Apply on the caller: logged, synced once,
// committed. Its in-memory log keeps nothing applied.
func TestSoloDrive(t *testing.T) {
	g := newGroup(t, 1, Sync, Schedule{})
	mb := g.m[1]
	if err := mb.d.Process(); err != nil {
		t.Fatal(err)
	}
	if st := mb.d.Status(); st.State != zab.StateLeading || st.Phase != zab.PhaseBroadcast {
		t.Fatalf("a lone voter is %v/%v before any tick", st.State, st.Phase)
	}
	var released zab.Zxid
	mb.d.cfg.Released = func(z zab.Zxid) { released = z }
	for i := range 3 {
		z, err := mb.d.ProposeWithQuiet(func(z zab.Zxid) ([]byte, error) { return []byte(fmt.Sprint(i)), nil })
		if err != nil {
			t.Fatal(err)
		}
		syncs := mb.log.syncs
		if ran, err := mb.d.Drive(); err != nil || !ran {
			t.Fatalf("Drive: ran %v, err %v", ran, err)
		}
		if mb.sm.Applied() != z {
			t.Fatalf("after Drive: applied %v, want %v", mb.sm.Applied(), z)
		}
		if mb.log.synced != z || mb.log.syncs != syncs+1 {
			t.Fatalf("after Drive: log synced to %v in %d syncs, want %v in one", mb.log.synced, mb.log.syncs-syncs, z)
		}
		if f := mb.d.LogFloor(); f != z {
			t.Fatalf("in-memory log begins after %v, want after the applied %v", f, z)
		}
		// Synced (checked above), applied and cut: its buffer is free.
		if released != z {
			t.Fatalf("after Drive: released up to %v, want %v", released, z)
		}
	}
}

// Under load a group of one needs no node loop: Kick hands the proposals
// to the log goroutine, and the log goroutine commits and applies what
// its own sync made durable. Nothing here calls Process or reads Wake.
func TestSoloKickAndLogGoroutineCommit(t *testing.T) {
	g := newGroup(t, 1, Sync, Schedule{})
	mb := g.m[1]
	if err := mb.d.Process(); err != nil { // the lone voter's election
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mb.d.RunLog(ctx) }()
	var last zab.Zxid
	for i := range 50 {
		z, err := mb.d.ProposeWithQuiet(func(z zab.Zxid) ([]byte, error) { return []byte(fmt.Sprint(i)), nil })
		if err != nil {
			t.Fatal(err)
		}
		if err := mb.d.Kick(); err != nil {
			t.Fatal(err)
		}
		last = z
	}
	ok := testutil.Within(10*time.Second, func() bool { return mb.sm.Applied() == last })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("applied %v, want %v without a node loop", mb.sm.Applied(), last)
	}
	if got := mb.sm.zxids(); len(got) != 50 || got[49] != last {
		t.Fatalf("applied %d entries ending at %v, want 50 ending at %v", len(got), got[len(got)-1], last)
	}
	if mb.log.synced != last {
		t.Fatalf("log synced to %v, want %v", mb.log.synced, last)
	}
}

// With a Slimmer log store, the in-memory log keeps the slim form of
// every entry that is durable and applied, and a member brought up to
// date by DIFF from it gets the entries whole.
func TestSlimLog(t *testing.T) {
	g := newGroup(t, 3, Sync, Schedule{})
	g.slim = true
	for _, id := range g.ids {
		g.restart(id)
	}
	g.write(3)
	l, f := g.isolateFollower()
	z := g.write(10)
	for range 5 {
		g.step() // the last round's Process slims what the last sync made durable
	}
	for _, id := range g.ids {
		if id == f {
			continue
		}
		for _, e := range g.m[id].sm.applied {
			got, ok := g.m[id].d.Entry(e.Zxid)
			if !ok || string(got.Data) != string(fakeSlimForm(e.Zxid)) {
				t.Fatalf("member %d keeps entry %v as %q, want its slim form", id, e.Zxid, got.Data)
			}
		}
	}
	delete(g.cut, f)
	if !g.runUntil(3000, func() bool { return g.m[f].sm.Applied() >= z }) {
		t.Fatalf("member %d did not catch up: %s", f, g.describe())
	}
	if n := g.m[f].d.SnapInstalls(); n != 0 {
		t.Fatalf("member %d installed %d snapshots, want a DIFF", f, n)
	}
	want := g.m[l].sm.applied
	if got := g.m[f].sm.applied; !slices.EqualFunc(got, want, func(a, b zab.Entry) bool { return a.Zxid == b.Zxid && string(a.Data) == string(b.Data) }) {
		t.Fatalf("after DIFF member %d applied %v, leader %v", f, got, want)
	}
}
