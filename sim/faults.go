package sim

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/corral-db/corral/zab"
)

// faults injects, with the run's probabilities, crashes, partitions, link
// breaks, pauses and slow links, and ends partitions that are due.
func (c *Cluster) faults() {
	o := c.opts
	if c.chance(o.CrashRate) {
		c.crashRandom()
	}
	if c.partitionUntil != 0 && c.now >= c.partitionUntil {
		c.Heal()
	} else if c.partitionUntil == 0 && c.chance(o.PartitionRate) {
		c.partitionRandom()
	}
	if c.chance(o.BreakRate) {
		a := c.ids[c.rng.IntN(len(c.ids))]
		b := c.ids[c.rng.IntN(len(c.ids))]
		if a != b {
			until := c.now + 1 + c.rng.Int64N(200)
			c.net.breakLink(a, b, until)
			c.note(a, fmt.Sprintf("link %d<->%d broken until t=%d", a, b, until))
		}
	}
	if c.chance(o.PauseRate) {
		s := c.servers[c.ids[c.rng.IntN(len(c.ids))]]
		if s.up {
			s.paused = c.now + 5 + c.rng.Int64N(150)
			c.note(s.id, fmt.Sprintf("paused until t=%d", s.paused))
		}
	}
	if c.chance(o.LeaderFaultRate) {
		c.leaderFault()
	}
	if c.chance(o.TransferRate) {
		c.transferRandom()
	}
	if c.chance(o.ReconfigRate) {
		c.reconfigRandom()
	}
	if c.chance(o.SlowRate) {
		a := c.ids[c.rng.IntN(len(c.ids))]
		b := c.ids[c.rng.IntN(len(c.ids))]
		if a != b {
			by, until := 5+c.rng.Int64N(60), c.now+20+c.rng.Int64N(300)
			for _, l := range []*link{c.net.link(a, b), c.net.link(b, a)} {
				l.slowBy, l.slowUntil = by, until
			}
		}
	}
}

// leaderFault crashes, isolates or pauses the current leader.
func (c *Cluster) leaderFault() {
	l := c.Leader()
	if l == 0 {
		return
	}
	s := c.servers[l]
	switch c.rng.IntN(3) {
	case 0:
		if c.opts.Mode == ModeDiskless && !c.disklessMayCrash(l) {
			return
		}
		c.Crash(l)
		s.restartAt = c.now + 20 + c.rng.Int64N(600)
	case 1:
		if c.partitionUntil == 0 {
			c.Partition(map[uint64]int{l: 1})
			c.partitionUntil = c.now + 50 + c.rng.Int64N(500)
		}
	case 2:
		s.paused = c.now + 5 + c.rng.Int64N(150)
		c.note(l, fmt.Sprintf("leader paused until t=%d", s.paused))
	}
}

// transferRandom asks an established leader to hand leadership to a
// random member: usually a voter, sometimes itself (a no-op) or an
// observer (refused), while crashes, partitions and pauses go on.
func (c *Cluster) transferRandom() {
	var leaders []*server
	for _, id := range c.ids {
		if s := c.servers[id]; s.up && c.now >= s.paused && s.soft.Established() {
			leaders = append(leaders, s)
		}
	}
	if len(leaders) == 0 {
		return
	}
	s := leaders[c.rng.IntN(len(leaders))]
	to := c.ids[c.rng.IntN(len(c.ids))]
	err := s.d.TransferLeadership(to)
	switch {
	case err == nil:
		if to != s.id {
			c.Stats.Transfers++
			c.transferTo = to
		}
		c.note(s.id, fmt.Sprintf("transfer leadership to %d", to))
	case errors.Is(err, zab.ErrNotLeader) || errors.Is(err, zab.ErrTransferTarget):
		c.note(s.id, fmt.Sprintf("transfer leadership to %d refused: %v", to, err))
	default:
		c.fail(fmt.Errorf("server %d: TransferLeadership(%d): %w", s.id, to, err))
		return
	}
	c.process(s)
}

// unavailable counts voters that are down or recovering: diskless mode
// promises durability only while at most f of them are.
func (c *Cluster) unavailable() int {
	n := 0
	for _, id := range c.voters {
		s := c.servers[id]
		if !s.up || s.fuzzy {
			n++
		}
	}
	return n
}

func (c *Cluster) crashRandom() {
	var cands []uint64
	for _, id := range c.ids {
		s := c.servers[id]
		if !s.up {
			continue
		}
		if c.opts.Mode == ModeDiskless && !c.disklessMayCrash(id) {
			continue
		}
		cands = append(cands, id)
	}
	if len(cands) == 0 {
		return
	}
	id := cands[c.rng.IntN(len(cands))]
	c.Crash(id)
	c.servers[id].restartAt = c.now + 20 + c.rng.Int64N(600)
}

// Crash stops a server: memory and in-flight messages are lost, and the
// disk keeps only what the mode makes durable. It stays down until
// Restart (or, in a randomized run, its restart time).
func (c *Cluster) Crash(id uint64) {
	s := c.servers[id]
	if !s.up {
		return
	}
	s.up = false
	s.d = nil
	s.outbox = nil
	s.syncAt = 0
	s.restartAt = 0
	s.soft = zab.SoftState{}
	c.net.isolate(id, c.ids)
	c.Stats.Crashes++
	if c.wl != nil {
		c.wl.crashed(id)
	}
	s.disk.drop()
	c.noteZxid(id, "crash (restarts complete="+strconv.FormatBool(s.disk.complete && c.opts.Mode == ModeDiskless)+") from ", s.disk.snap.zxid)
}

// Restart starts a crashed server again from its disk.
func (c *Cluster) Restart(id uint64) {
	if s := c.servers[id]; !s.up {
		c.restart(s)
	}
}

func (c *Cluster) restart(s *server) {
	s.restartAt = 0
	c.note(s.id, "restart")
	m, log, complete := s.disk.crash()
	c.start(s, m, log, complete)
}

func (c *Cluster) partitionRandom() {
	group := map[uint64]int{}
	if c.rng.IntN(2) == 0 {
		// Isolate one server.
		group[c.ids[c.rng.IntN(len(c.ids))]] = 1
	} else {
		for _, id := range c.ids {
			group[id] = c.rng.IntN(2)
		}
	}
	c.Partition(group)
	c.partitionUntil = c.now + 50 + c.rng.Int64N(1000)
}

// Partition splits the network: servers in different groups cannot talk.
func (c *Cluster) Partition(group map[uint64]int) {
	c.net.partition(group)
	c.Stats.Partitions++
	c.note(0, fmt.Sprintf("partition %v", group))
}

// Heal ends partitions, link breaks and slow links.
func (c *Cluster) Heal() {
	c.net.heal(c.ids)
	c.partitionUntil = 0
	c.note(0, "heal")
}

// Settle heals everything, restarts crashed servers, and requires the
// ensemble to converge: one established leader followed by every server,
// a final proposal committed, and every server's state at the end of the
// committed history.
func (c *Cluster) Settle() {
	c.Heal()
	for _, id := range c.ids {
		s := c.servers[id]
		s.paused = 0
		if !s.up {
			c.restart(s)
		}
	}
	c.marker = []byte("final." + strconv.FormatUint(c.opts.Seed, 10))
	var markLeader uint64
	var markEpoch uint32
	var markAt int64
	ok := c.RunUntil(c.opts.Settle, func() bool {
		l := c.Leader()
		if l == 0 {
			return false
		}
		ls := c.servers[l].soft
		if !c.markerApplied && (l != markLeader || ls.Epoch != markEpoch || c.now-markAt > 500) {
			if _, err := c.proposeAt(c.servers[l], c.marker, nil); err == nil {
				markLeader, markEpoch, markAt = l, ls.Epoch, c.now
			}
		}
		return c.converged(l)
	})
	if c.err == nil && !ok {
		c.fail(fmt.Errorf("liveness: no convergence within %d time units after healing: %s", c.opts.Settle, c.describe()))
	}
}

func (c *Cluster) converged(l uint64) bool {
	if !c.markerApplied {
		return false
	}
	last := len(c.chk.order) - 1
	for _, id := range c.ids {
		s := c.servers[id]
		if !s.up || s.soft.Leader != l || s.soft.Phase != zab.PhaseBroadcast || c.chk.pos[id] != last {
			return false
		}
	}
	return true
}

func (c *Cluster) describe() string {
	out := ""
	for _, id := range c.ids {
		s := c.servers[id]
		if !s.up {
			out += fmt.Sprintf("[%d down] ", id)
			continue
		}
		st := s.d.Status()
		out += fmt.Sprintf("[%d %v/%v leader=%d epoch=%d hs=%d/%d last=%v commit=%v pos=%d/%d rec=%v] ",
			id, st.State, st.Phase, st.Leader, st.Epoch, st.AcceptedEpoch, st.CurrentEpoch, st.LastZxid, st.Commit,
			c.chk.pos[id], len(c.chk.order)-1, st.Recovering)
		out += describeMembership(st)
	}
	return out
}

// Status returns a server's zab status (zero if it is down).
func (c *Cluster) Status(id uint64) zab.Status {
	s := c.servers[id]
	if !s.up {
		return zab.Status{}
	}
	return s.d.Status()
}

// Up reports whether a server is running.
func (c *Cluster) Up(id uint64) bool { return c.servers[id].up }

// Committed returns the committed history so far.
func (c *Cluster) Committed() []zab.Zxid { return append([]zab.Zxid(nil), c.chk.order...) }

// Holds reports whether a server's log or state holds z.
func (c *Cluster) Holds(id uint64, z zab.Zxid) bool {
	s := c.servers[id]
	if !s.up {
		return s.disk.durable(z) || s.disk.complete && slices.ContainsFunc(s.disk.cpLog, func(e zab.Entry) bool { return e.Zxid == z })
	}
	if s.sm.m.zxid >= z && c.chk.pos[id] >= c.chk.index[z] {
		return true
	}
	_, ok := s.d.Entry(z)
	return ok
}
