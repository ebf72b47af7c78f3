package sim

import (
	"slices"
	"testing"

	"github.com/corral-db/corral/zab"
)

// stable runs until one leader is established and followed by every up
// server.
func stable(t *testing.T, c *Cluster, d int64) uint64 {
	t.Helper()
	var l uint64
	ok := c.RunUntil(d, func() bool {
		l = c.Leader()
		if l == 0 {
			return false
		}
		for _, id := range c.ids {
			if s := c.Status(id); c.Up(id) && (s.Leader != l || s.Phase != zab.PhaseBroadcast) {
				return false
			}
		}
		return true
	})
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("no stable leader within %d: %s", d, c.describe())
	}
	return l
}

// TestRecoveringVotersCannotFormQuorum is the diskless scenario the
// recovering rule exists for: a write committed on 3 of 5 servers, two of
// those restarted from partial (fuzzy) state. Without the intact third
// copy no quorum may form, or the two recovering servers and the two that
// never had the write would elect a leader without it. Once the intact
// server is back the write survives.
func TestRecoveringVotersCannotFormQuorum(t *testing.T) {
	c := NewCluster(Options{Seed: 42, Voters: 5, Mode: ModeDiskless, NoBusySnapshots: true})
	l := stable(t, c, 3000)
	var others []uint64
	for _, id := range c.ids {
		if id != l {
			others = append(others, id)
		}
	}
	a, b, cc, d := others[0], others[1], others[2], others[3]

	// The write reaches only the leader, a and b.
	c.Partition(map[uint64]int{cc: 1, d: 1})
	z, err := c.Propose([]byte("w"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.RunUntil(500, func() bool { return slices.Contains(c.Committed(), z) && c.Holds(a, z) && c.Holds(b, z) }) {
		t.Fatalf("write %v not committed on the leader, %d and %d: %s", z, a, b, c.describe())
	}
	if c.Holds(cc, z) || c.Holds(d, z) {
		t.Fatal("the partitioned servers got the write")
	}

	// a and b crash and restart from partial state; the leader is cut off.
	c.Crash(a)
	c.Crash(b)
	c.Partition(map[uint64]int{l: 1})
	c.Restart(a)
	c.Restart(b)
	if !c.Status(a).Recovering || !c.Status(b).Recovering {
		t.Fatalf("restarted servers not recovering: %+v %+v", c.Status(a), c.Status(b))
	}
	if c.Holds(a, z) || c.Holds(b, z) {
		t.Fatal("restarted servers still hold the write: the scenario needs them to have lost it")
	}
	c.RunFor(3000)
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{a, b, cc, d} {
		if s := c.Status(id); s.Established() {
			t.Fatalf("server %d established a leader without the intact copy: %s", id, c.describe())
		}
	}

	// The intact server comes back: a quorum forms and keeps the write.
	c.Settle()
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	committed := c.Committed()
	if !slices.Contains(committed, z) {
		t.Fatalf("write %v lost: committed %v", z, committed)
	}
	for _, id := range c.ids {
		if !c.Holds(id, z) || c.Status(id).Recovering {
			t.Fatalf("server %d: holds=%v status=%+v", id, c.Holds(id, z), c.Status(id))
		}
	}
}

// TestCrashLosesUnsyncedWrites checks the simulated disk itself: a crash
// in sync mode keeps fsynced entries and, torn, a prefix of the rest; in
// diskless mode it keeps the last snapshot, and a complete checkpoint the
// log after it.
func TestCrashLosesUnsyncedWrites(t *testing.T) {
	e := func(c uint32) zab.Entry { return zab.Entry{Zxid: zab.NewZxid(1, c), Data: []byte{byte(c)}} }
	last := func(ents []zab.Entry) zab.Zxid {
		if len(ents) == 0 {
			return 0
		}
		return ents[len(ents)-1].Zxid
	}
	d := newDisk(ModeSync)
	if err := d.Append([]zab.Entry{e(1), e(2)}); err != nil {
		t.Fatal(err)
	}
	d.Sync()
	if err := d.Append([]zab.Entry{e(3), e(4)}); err != nil {
		t.Fatal(err)
	}
	if !d.durable(e(2).Zxid) || d.durable(e(3).Zxid) {
		t.Fatal("durable() disagrees with the fsync")
	}
	d.tear = func(n int) int { return n - 1 }
	if _, log, _ := d.crash(); last(log) != e(3).Zxid {
		t.Fatalf("torn crash kept up to %v, want %v", last(log), e(3).Zxid)
	}
	d.tear = func(int) int { return 0 }
	d.Append([]zab.Entry{e(4)})
	if _, log, _ := d.crash(); last(log) != e(3).Zxid {
		t.Fatalf("after crash last = %v, want %v", last(log), e(3).Zxid)
	}

	dl := newDisk(ModeDiskless)
	var m machine
	dl.cur = &m
	entries := func(after zab.Zxid) ([]zab.Entry, error) { return []zab.Entry{e(1)}, nil }
	if err := dl.Checkpoint(entries); err != nil {
		t.Fatal(err)
	}
	if _, log, complete := dl.crash(); !complete || last(log) != e(1).Zxid {
		t.Fatalf("clean checkpoint: complete=%v last=%v", complete, last(log))
	}
	m.apply(e(1))
	dl.snapshot(m)
	got, log, complete := dl.crash()
	if complete || got.zxid != e(1).Zxid || len(log) != 0 {
		t.Fatalf("after a busy snapshot: machine at %v, complete=%v, log=%v", got.zxid, complete, log)
	}
	dl.Checkpoint(entries)
	dl.Invalidate()
	if _, _, complete := dl.crash(); complete {
		t.Fatal("an invalidated checkpoint restarts complete")
	}
}

// TestTransferWithWorkload hands leadership over while register clients
// run: the target leads next, and the history stays linearizable.
func TestTransferWithWorkload(t *testing.T) {
	c := NewCluster(Options{Seed: 7, Voters: 3, Clients: 3})
	c.faultsOn = false
	l := stable(t, c, 3000)
	// Let the clients work under the first leader (the fault phase is
	// off: only the workload issues operations).
	for range 300 {
		c.wl.step(c, true)
		c.RunFor(1)
	}
	to := c.ids[0]
	if to == l {
		to = c.ids[1]
	}
	if err := c.servers[l].d.TransferLeadership(to); err != nil {
		t.Fatal(err)
	}
	c.process(c.servers[l])
	if !c.RunUntil(2000, func() bool { c.wl.step(c, true); return c.Leader() == to }) {
		t.Fatalf("leadership not handed to %d: %s", to, c.describe())
	}
	for range 300 {
		c.wl.step(c, true)
		c.RunFor(1)
	}
	c.Settle()
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	c.checkHistory()
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if c.Stats.RegOps < 20 {
		t.Fatalf("only %d register operations answered", c.Stats.RegOps)
	}
	t.Logf("%d operations answered, %d unknown", c.Stats.RegOps, c.Stats.RegUnknown)
}
