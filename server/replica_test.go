package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/internal/metric"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/vfs"
)

// testEnsemble runs n servers in-process on loopback.
type testEnsemble struct {
	t       *testing.T
	opts    []Options
	servers []*testServer
}

func startEnsemble(t *testing.T, n int, tweak func(*Options)) *testEnsemble {
	return startEnsembleObservers(t, n, 0, tweak)
}

// startEnsembleObservers runs n voters and then nobs observers.
func startEnsembleObservers(t *testing.T, n, nobs int, tweak func(*Options)) *testEnsemble {
	t.Helper()
	total := n + nobs
	e := &testEnsemble{t: t, opts: make([]Options, total), servers: make([]*testServer, total)}
	peers := map[uint64]transport.Peer{}
	var voters, observers []uint64
	for i := 1; i <= total; i++ {
		peers[uint64(i)] = transport.Peer{QuorumAddr: testutil.FreeAddr(t), ElectionAddr: testutil.FreeAddr(t)}
		if i <= n {
			voters = append(voters, uint64(i))
		} else {
			observers = append(observers, uint64(i))
		}
	}
	n = total
	for i := range n {
		o := Options{
			ListenAddr: testutil.FreeAddr(t),
			DataDir:    t.TempDir(),
			ServerID:   int64(i + 1),
			TickTime:   100 * time.Millisecond,
			// ZooKeeper's default cap (20 ticks) would be 2 s here: a
			// client's session, whatever it asks for, could expire under
			// -race on a loaded machine in tests about other things.
			MaxSessionTimeout: 20 * time.Second,
			Ensemble: &Ensemble{
				ID: uint64(i + 1), Voters: voters, Observers: observers, Peers: peers,
				// 2 s without hearing from each other before a member
				// gives up on a peer: under -race on a loaded 2-core
				// machine 1 s was not enough, and the leader lost its
				// quorum in the middle of tests about other things.
				InitLimit: 20, SyncLimit: 20,
				// Each member stamps its /zookeeper/config with its own
				// clock; waitConverged's digests must not see that.
				Config: []byte("server.1=127.0.0.1:1:2:participant\nversion=0"),
			},
			FourLetterWords: map[string]bool{"*": true},
		}
		if testing.Verbose() {
			o.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil)).With("server", i+1)
		}
		if tweak != nil {
			tweak(&o)
		}
		e.opts[i] = o
		e.servers[i] = startServer(t, o)
	}
	return e
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// restart starts server i again from its data directory.
func (e *testEnsemble) restart(i int) {
	e.servers[i] = startServer(e.t, e.opts[i])
}

// waitLeader waits until one running server leads and every other running
// server serves, and returns the leader's index.
func (e *testEnsemble) waitLeader() int {
	e.t.Helper()
	at := -1
	testutil.Eventually(e.t, 30*time.Second, "a leader with every running server serving", func() bool {
		leader, serving, running := -1, 0, 0
		for i, s := range e.servers {
			if s == nil || s.cancel == nil {
				continue
			}
			running++
			if s.serving.Load() {
				serving++
				if s.rep.isLeader() {
					leader = i
				}
			}
		}
		at = leader
		return leader >= 0 && serving == running
	})
	return at
}

func (e *testEnsemble) connect(idx ...int) *client.Conn {
	e.t.Helper()
	var addrs []string
	for _, i := range idx {
		addrs = append(addrs, e.servers[i].addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, addrs, client.SessionTimeout(4*time.Second))
	if err != nil {
		e.t.Fatalf("connect to %v: %v", addrs, err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// ctxT is a test's context. Its bound only turns a hang into a failure: a
// whole test (hundreds of writes, every member stopped and started)
// shares it, and under -race on a loaded 2-core machine that can take
// well over 20 s.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// digests returns every running server's tree digest and zxid.
func (e *testEnsemble) digests() map[int][2]uint64 {
	out := map[int][2]uint64{}
	for i, s := range e.servers {
		if s == nil || s.cancel == nil {
			continue
		}
		s.mu.RLock()
		out[i] = [2]uint64{uint64(s.tree.LastZxid()), s.tree.Digest()}
		s.mu.RUnlock()
	}
	return out
}

// waitConverged waits until every running server has the same zxid and
// digest.
func (e *testEnsemble) waitConverged() {
	e.t.Helper()
	var last map[int][2]uint64
	if !testutil.Within(20*time.Second, func() bool {
		last = e.digests()
		same := true
		var first [2]uint64
		n := 0
		for _, d := range last {
			if n == 0 {
				first = d
			} else if d != first {
				same = false
			}
			n++
		}
		return same
	}) {
		e.t.Fatalf("servers did not converge: %v", last)
	}
}

func TestEnsembleReplicates(t *testing.T) {
	e := startEnsemble(t, 3, nil)
	leader := e.waitLeader()
	ctx := ctxT(t)
	conns := []*client.Conn{e.connect(0), e.connect(1), e.connect(2)}
	for i, c := range conns {
		if _, err := c.Create(ctx, fmt.Sprintf("/n%d", i), []byte{byte(i)}, client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			t.Fatalf("create through server %d (leader %d): %v", i, leader, err)
		}
	}
	eph, err := conns[1].Create(ctx, "/eph", nil, client.WorldACL(client.PermAll), client.ModeEphemeral)
	if err != nil {
		t.Fatal(err)
	}
	// Every server sees every write after a sync.
	for i, c := range conns {
		if _, err := c.Sync(ctx, "/"); err != nil {
			t.Fatalf("sync on server %d: %v", i, err)
		}
		for j := range conns {
			data, _, err := c.Get(ctx, fmt.Sprintf("/n%d", j))
			if err != nil || len(data) != 1 || data[0] != byte(j) {
				t.Fatalf("server %d reading /n%d: %v %v", i, j, data, err)
			}
		}
		st, err := c.Exists(ctx, eph)
		if err != nil || st == nil || st.EphemeralOwner != conns[1].SessionID() {
			t.Fatalf("server %d: ephemeral %s: %+v %v", i, eph, st, err)
		}
	}
	// Closing the session removes its ephemeral on every replica.
	conns[1].Close()
	e.waitConverged()
	for i, c := range []*client.Conn{conns[0], conns[2]} {
		if st, err := c.Exists(ctx, eph); err != nil || st != nil {
			t.Fatalf("ephemeral still on a replica (%d) after close: %+v %v", i, st, err)
		}
	}
	// The leader reports its learners in mntr.
	out, err := fourLetter(e.servers[leader].addr, "mntr")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"zk_server_state\tleader\n", "zk_learners\t2\n", "zk_synced_followers\t2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("leader mntr lacks %q:\n%s", want, out)
		}
	}
	for i := range e.servers {
		out, err := fourLetter(e.servers[i].addr, "srvr")
		if err != nil {
			t.Fatal(err)
		}
		want := "Mode: follower\n"
		if i == leader {
			want = "Mode: leader\n"
		}
		if !strings.Contains(out, want) {
			t.Errorf("server %d srvr lacks %q:\n%s", i, want, out)
		}
	}
}

// A leader that stops is replaced; the writes it acknowledged survive,
// and when it comes back it catches up.
func TestEnsembleFailover(t *testing.T) {
	e := startEnsemble(t, 3, nil)
	leader := e.waitLeader()
	ctx := ctxT(t)
	follower := (leader + 1) % 3
	c := e.connect(follower)
	for i := range 20 {
		if _, err := c.Create(ctx, fmt.Sprintf("/before%d", i), nil, client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
	e.servers[leader].stop(t)
	newLeader := e.waitLeader()
	if newLeader == leader {
		t.Fatalf("stopped leader %d still leads", leader)
	}
	c2 := e.connect(newLeader)
	for i := range 20 {
		if _, err := c2.Create(ctx, fmt.Sprintf("/after%d", i), nil, client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
	e.restart(leader)
	e.waitLeader()
	e.waitConverged()
	back := e.connect(leader)
	kids, err := back.Children(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 41 { // 40 + zookeeper
		t.Fatalf("restarted server has %d children of /, want 41: %v", len(kids), kids)
	}
}

// A follower that falls behind a compacted log is brought back by a
// snapshot (SNAP).
func TestEnsembleSnapshotSync(t *testing.T) {
	e := startEnsemble(t, 3, func(o *Options) { o.SnapCount = 40 })
	leader := e.waitLeader()
	lagging := (leader + 2) % 3
	e.servers[lagging].stop(t)
	ctx := ctxT(t)
	c := e.connect(leader)
	for i := range 300 {
		if _, err := c.Create(ctx, fmt.Sprintf("/k%03d", i), []byte("v"), client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
	// Let a snapshot complete on the leader so its log is compacted.
	testutil.Eventually(t, 20*time.Second, "the leader compacted its log", func() bool {
		return e.servers[leader].rep.d.LogFloor() > 0
	})
	e.restart(lagging)
	e.waitLeader()
	e.waitConverged()
	lc := e.connect(lagging)
	kids, err := lc.Children(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 301 {
		t.Fatalf("server brought back by snapshot has %d children of /, want 301", len(kids))
	}
	// Both ends of the SNAP hand the memory it cost back to the OS
	// (memory.go): the member that installed it at once, the leader once
	// that member has synchronized.
	if n := e.servers[lagging].releasesAsked.Load(); n == 0 {
		t.Error("the member that installed the leader's snapshot did not return its memory")
	}
	testutil.Eventually(t, 20*time.Second, "the leader that sent a snapshot returned its memory", func() bool {
		return e.servers[leader].releasesAsked.Load() > 0
	})
}

// A session whose client vanished from a follower is expired by the
// leader; its ephemerals go on every replica.
func TestEnsembleSessionExpiry(t *testing.T) {
	// Expiry is the subject: the session is held to 20 ticks (2 s).
	e := startEnsemble(t, 3, func(o *Options) { o.MaxSessionTimeout = 20 * o.TickTime })
	leader := e.waitLeader()
	follower := (leader + 1) % 3
	raw := dial(t, e.servers[follower].addr) // timeout clamped to 20 ticks
	if _, code := raw.create("/gone", nil, 1); code != 0 {
		t.Fatalf("create ephemeral: %v", code)
	}
	other := e.connect((leader + 2) % 3)
	ctx := ctxT(t)
	if _, err := other.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if st, err := other.Exists(ctx, "/gone"); err != nil || st == nil {
		t.Fatalf("ephemeral not replicated: %v %v", st, err)
	}
	raw.nc.Close() // the client vanishes without closing its session
	testutil.Eventually(t, 20*time.Second, "the session's ephemeral removed", func() bool {
		st, err := other.Exists(ctx, "/gone")
		if err != nil {
			t.Fatal(err)
		}
		return st == nil
	})
	e.waitConverged()
}

func fourLetter(addr, word string) (string, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Write([]byte(word)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(nc)
	return string(b), err
}

// A session connected to a follower stays alive past its timeout while
// its client pings: the follower reports it to the leader.
func TestEnsembleSessionKeptAliveThroughFollower(t *testing.T) {
	e := startEnsemble(t, 3, nil)
	leader := e.waitLeader()
	c := e.connect((leader + 1) % 3)
	ctx := ctxT(t)
	if _, err := c.Create(ctx, "/alive", nil, client.WorldACL(client.PermAll), client.ModeEphemeral); err != nil {
		t.Fatal(err)
	}
	sid := c.SessionID()
	time.Sleep(3 * c.SessionTimeout())
	if c.SessionID() != sid {
		t.Fatalf("session changed from %x to %x", sid, c.SessionID())
	}
	if st, err := c.Exists(ctx, "/alive"); err != nil || st == nil {
		t.Fatalf("session's ephemeral gone after idling with pings: %v %v", st, err)
	}
}

// An observer serves reads, forwards writes and syncs, and reports its
// mode; it does not count toward quorums.
func TestEnsembleObserver(t *testing.T) {
	e := startEnsembleObservers(t, 3, 1, nil)
	e.waitLeader()
	ctx := ctxT(t)
	obs := e.connect(3)
	if _, err := obs.Create(ctx, "/via-observer", []byte("o"), client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if _, err := obs.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		c := e.connect(i)
		if _, err := c.Sync(ctx, "/"); err != nil {
			t.Fatal(err)
		}
		if data, _, err := c.Get(ctx, "/via-observer"); err != nil || string(data) != "o" {
			t.Fatalf("server %d: %q %v", i, data, err)
		}
	}
	out, err := fourLetter(e.servers[3].addr, "srvr")
	if err != nil || !strings.Contains(out, "Mode: observer\n") {
		t.Fatalf("observer srvr: %v\n%s", err, out)
	}
}

// Diskless: writes leave snapshots and no transaction log in dataDir
// (the thesis's Algorithm 5.1), and stopping every server in order then
// starting them again loses nothing.
func TestEnsembleDisklessStopAllStartAll(t *testing.T) {
	testStopAllStartAll(t, DurabilityDiskless, 0)
}

// With busy snapshots every few writes, the shutdown checkpoints are
// sidecars beside them (the log after a fuzzy snapshot), and a start of
// all replays them.
func TestEnsembleDisklessStopAllStartAllBusySnapshots(t *testing.T) {
	testStopAllStartAll(t, DurabilityDiskless, 60)
}

// Stopping every server in order and starting them again loses nothing,
// in every durability mode.
func TestEnsembleStopAllStartAll(t *testing.T) {
	for name, d := range map[string]Durability{"sync": DurabilitySync, "async": DurabilityAsync} {
		t.Run(name, func(t *testing.T) { testStopAllStartAll(t, d, 0) })
	}
}

// writeThenStopAll creates n nodes prefix000, prefix001, ... through a
// client of every server, then stops every server in order.
func (e *testEnsemble) writeThenStopAll(ctx context.Context, prefix string, n int) {
	e.t.Helper()
	e.waitLeader()
	c := e.connect(0, 1, 2)
	for i := range n {
		if _, err := c.Create(ctx, fmt.Sprintf("%s%03d", prefix, i), []byte("x"), client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			e.t.Fatal(err)
		}
	}
	c.Close()
	for i := range e.servers {
		e.servers[i].stop(e.t)
	}
}

func testStopAllStartAll(t *testing.T, d Durability, snapCount int) {
	e := startEnsemble(t, 3, func(o *Options) { o.Durability, o.SnapCount = d, snapCount })
	ctx := ctxT(t)
	e.writeThenStopAll(ctx, "/d", 200)
	for i := range e.servers {
		if d != DurabilityDiskless {
			break
		}
		logs := listPrefix(t, vfs.OS(), filepath.Join(e.opts[i].DataDir, "version-2"), "log.")
		snaps := listPrefix(t, vfs.OS(), filepath.Join(e.opts[i].DataDir, "version-2"), "snapshot.")
		if len(logs) != 0 || len(snaps) == 0 {
			t.Fatalf("server %d dataDir: logs %v, snapshots %v; want snapshots only", i, logs, snaps)
		}
	}
	for i := range e.servers {
		e.restart(i)
	}
	e.waitLeader()
	e.waitConverged()
	for i := range e.servers {
		kids, err := e.connect(i).Children(ctx, "/")
		if err != nil {
			t.Fatal(err)
		}
		if len(kids) != 201 {
			t.Fatalf("server %d has %d children of / after a stop and start of all, want 201", i, len(kids))
		}
	}
}

// A server restarted from a fuzzy snapshot (its checkpoints gone, as after
// a crash) holds an unknown prefix of what it acknowledged: until a leader
// has synchronized it, it writes no checkpoint, neither when it leaves a
// leader nor when it stops in order, so it restarts recovering again
// (docs/design/diskless.md). Here it restarts alone, so no leader can
// synchronize it.
func TestRecoveringServerWritesNoCheckpoint(t *testing.T) {
	e := startEnsemble(t, 3, func(o *Options) { o.Durability, o.SnapCount = DurabilityDiskless, 20 })
	e.writeThenStopAll(ctxT(t), "/r", 100)
	dir := filepath.Join(e.opts[0].DataDir, "version-2")
	ckpts := listPrefix(t, vfs.OS(), dir, "checkpoint.")
	if len(ckpts) == 0 {
		t.Fatal("an orderly stop wrote no checkpoint")
	}
	for _, name := range ckpts {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 2 {
		e.restart(0)
		s := e.servers[0]
		testutil.Within(10*time.Second, func() bool { return s.rep.soft.Load() != nil })
		if ss := s.rep.soft.Load(); ss == nil || !ss.Recovering {
			t.Fatalf("restart %d from a snapshot without its checkpoint: soft state %+v, want recovering", round, ss)
		}
		s.stop(t)
		if got := listPrefix(t, vfs.OS(), dir, "checkpoint."); len(got) != 0 {
			t.Fatalf("restart %d: a recovering server wrote checkpoints %v", round, got)
		}
	}
}

// A diskless server restarted from its own newest (fuzzy) snapshot, which
// is behind the leader's newest, catches up by DIFF: the leader keeps the
// log back to the snapshot before its newest (replica.compact). Cut at
// the newest, as it was, the log no longer reached the restarted server's
// snapshot, and it got the whole tree by SNAP.
func TestDisklessRestartCatchesUpByDiff(t *testing.T) {
	// snapCount 400: a busy snapshot every 200-400 writes, far more
	// writes than a snapshot of this tree takes to finish, so the loop
	// below sees the leader's first snapshot past the follower's before a
	// second one can start.
	e := startEnsemble(t, 3, func(o *Options) { o.Durability, o.SnapCount = DurabilityDiskless, 400 })
	leader := e.waitLeader()
	f := (leader + 1) % 3
	ctx := ctxT(t)
	c := e.connect(leader)
	create := func(p string) {
		t.Helper()
		if _, err := c.Create(ctx, p, []byte("v"), client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 600 {
		create(fmt.Sprintf("/a%03d", i))
	}
	// The follower snapshots at the last zxid, so that no snapshot of the
	// leader's is newer than its newest: the leader's first snapshot after
	// it is then written by the writes below, with the log kept back to the
	// one before (or to the start), which the follower's snapshot is not
	// older than. Left to the two servers' own cadences, the leader could
	// already hold two snapshots newer than the follower's.
	e.waitConverged()
	dir := filepath.Join(e.opts[f].DataDir, "version-2")
	last := e.servers[f].appliedZxid()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("the follower wrote a snapshot at %x", last), func() bool {
		infos, err := snap.Newest(vfs.OS(), dir)
		return err == nil && len(infos) > 0 && infos[0].Zxid >= last
	})
	// Stop the follower and take its checkpoints away, so that it restarts
	// from its newest busy snapshot, recovering, as after a crash.
	e.servers[f].stop(t)
	for _, name := range listPrefix(t, vfs.OS(), dir, "checkpoint.") {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := snap.Newest(vfs.OS(), dir)
	if err != nil || len(infos) == 0 {
		t.Fatalf("follower's snapshots: %v, %v", infos, err)
	}
	fz := infos[0].Zxid
	// Write until the leader has compacted after a snapshot newer than the
	// follower's newest: its first such snapshot, so the one before it is
	// not newer.
	// writeUntilSnapshot writes until rep has taken a snapshot past fz,
	// then checks that its in-memory log still starts at or before fz.
	writeUntilSnapshot := func(rep *replica, who, prefix string) {
		t.Helper()
		for i := 0; int64(rep.d.PrevBusySnapshot()) <= fz; i++ {
			if i == 4000 {
				t.Fatalf("the %s took no snapshot after %x in %d writes", who, fz, i)
			}
			create(fmt.Sprintf("/%s%04d", prefix, i))
		}
		if sn := rep.d.LogFloor(); int64(sn) > fz {
			t.Fatalf("after its snapshot the %s's log starts at %v, past the follower's snapshot %x", who, sn, fz)
		}
	}
	lrep := e.servers[leader].rep
	writeUntilSnapshot(lrep, "leader", "b")
	// A few writes more and a lull: the leader takes an idle snapshot
	// (snapCount/100 writes suffice), which must not move its log cut
	// past the follower's snapshot as a busy one would.
	for i := range 10 {
		create(fmt.Sprintf("/i%02d", i))
	}
	ldir := filepath.Join(e.opts[leader].DataDir, "version-2")
	busy := int64(lrep.d.PrevBusySnapshot())
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("the leader took an idle snapshot after %x", busy), func() bool {
		infos, err := snap.Newest(vfs.OS(), ldir)
		return err == nil && len(infos) > 0 && infos[0].Zxid > busy
	})
	if sn := lrep.d.LogFloor(); int64(sn) > fz {
		t.Fatalf("after an idle snapshot the leader's log starts at %v, past the follower's snapshot %x", sn, fz)
	}
	e.restart(f)
	e.waitLeader()
	e.waitConverged()
	if ss := e.servers[f].rep.soft.Load(); ss == nil || ss.Recovering {
		t.Fatalf("restarted follower's soft state %+v, want synchronized", ss)
	}
	if n := e.servers[f].rep.d.SnapInstalls(); n != 0 {
		t.Fatalf("restarted follower installed %d snapshots from the leader, want a DIFF", n)
	}
	// The restarted server's own first snapshot keeps its log back to the
	// snapshot it restarted from, as a leader it would need it to bring a
	// member restarted from one as old up by DIFF.
	writeUntilSnapshot(e.servers[f].rep, "restarted follower", "c")
}

// TestEnsembleCountsBusySnapshots: an ensemble member's snapshots are
// counted by the kind its driver took them for. Writes past snapCount
// make busy snapshots, which must not show up as idle (the driver's
// snapshots once all counted as idle).
func TestEnsembleCountsBusySnapshots(t *testing.T) {
	e := startEnsemble(t, 3, func(o *Options) { o.SnapCount = 50 })
	leader := e.waitLeader()
	c := e.connect(leader)
	ctx := ctxT(t)
	st := e.servers[leader].store
	busy := func() int64 {
		var n int64
		st.opts.Metrics.CounterSet(metricSnapshots, "", "kind").Each(func(kind string, c *metric.Counter) {
			if kind == snapBusy {
				n = c.Load()
			}
		})
		return n
	}
	for i := 0; busy() == 0; i++ {
		if i == 2000 {
			t.Fatalf("no busy snapshot counted after %d writes with snapCount 50", i)
		}
		if _, err := c.Create(ctx, fmt.Sprintf("/b%04d", i), nil, client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
}
