package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/zab"
)

// The compaction-aware leader change under the simulator's faults. Every
// server of a kv run runs kv.LeaderChanger, the code kv/kvserver runs:
// every kvGateEvery time units it reports its temperature to the members
// it can reach and steps the changer, and carries out the answer: it
// holds or releases its compactions (the model's, and the real store's
// compaction gate) and, as the leader, starts a zab transfer to the
// member the policy picks, while crashes, partitions, pauses and the
// random transfers of faults.go go on.
//
// Temperatures come from a deterministic model of compaction debt, not
// from pebble's metrics: pebble compacts on goroutines of its own, and a
// decision taken from its metrics would make a seed's run depend on the
// Go scheduler. Every entry a server applies adds its bytes to the
// server's debt (the LSM's, so it survives a crash; an installed
// snapshot starts from none). A server whose compactions are not held
// starts compacting once its debt reaches a level drawn for each
// compaction (a quarter to three quarters of the threshold); the
// compaction runs for a drawn time (Temperature.Compacting) and removes
// the debt it started with. A held leader's debt grows until the policy
// moves leadership to a cooler member, or, with nobody cool enough or L0
// near the stall (heat kvGateStall), compacts in place.
//
// What this checks is the kv run's usual checks (kv.go) and the
// cluster's (nothing committed lost, replicas agreeing, liveness) with
// the transfers the policy chooses: at the moments a leader is loaded,
// to members that may be partitioned, paused or crashing under it.

// kvGateEvery is the period of reports and decisions, in time units.
const kvGateEvery = 20

// kvGateStall is the heat the model reports as L0 near the write stall.
const kvGateStall = 4

// clusterStepper is a Machines that acts on the run every time unit of
// the fault phase (the kv run: the compaction-aware leader change).
type clusterStepper interface {
	stepCluster(c *Cluster)
}

// kvGate is the leader change of a kv run: its configuration, drawn from
// the seed, and each server's state.
type kvGate struct {
	rng     *rand.Rand
	cfg     kv.LeaderChangeConfig
	servers map[uint64]*kvHeat
	// Transfers counts the transfers the policy started and the driver
	// accepted, Refused those it refused, InPlace the turns to
	// compacting in place, Compactions the model's finished compactions.
	Transfers, Refused, InPlace, Compactions int
}

// kvHeat is one server's compaction model and leader changer.
type kvHeat struct {
	debt uint64
	// compactEnd is when the running compaction ends (0: none); it
	// removes compactDebt.
	compactEnd  int64
	compactDebt uint64
	held        bool
	// startAt is the debt at which the next compaction starts: drawn
	// for each, so that members do not compact in step.
	startAt uint64
	next    int64 // the next report and step
	lc      kv.LeaderChanger
	store   *kv.Store // the incarnation's store, for its gate
}

func newKVGate(seed uint64) *kvGate {
	r := rand.New(rand.NewPCG(seed, 0x67617465))
	g := &kvGate{rng: r, servers: map[uint64]*kvHeat{}}
	g.cfg = kv.LeaderChangeConfig{
		Policy:        []kv.LeaderPolicy{kv.PolicyRandom, kv.PolicyRoundRobin, kv.PolicyCoolest, kv.PolicyCoolest}[r.IntN(4)],
		Threshold:     1,
		MinInterval:   time.Duration(50+r.IntN(250)) * time.Millisecond,
		Margin:        0.1 + 0.3*r.Float64(),
		DebtThreshold: uint64(500 + r.IntN(2500)),
	}
	return g
}

// heat returns server id's model, made on first use.
func (g *kvGate) heat(id uint64) *kvHeat {
	h := g.servers[id]
	if h == nil {
		h = &kvHeat{startAt: g.startAt()}
		g.servers[id] = h
	}
	return h
}

// startAt draws the debt at which a compaction starts: pebble's L0
// threshold is reached after a number of flushes that varies with when
// the member flushed.
func (g *kvGate) startAt() uint64 {
	return g.cfg.DebtThreshold/4 + g.rng.Uint64N(g.cfg.DebtThreshold/2)
}

// opened starts a new incarnation of server id: a process starts with
// its compactions released and knowing nothing of the others.
func (g *kvGate) opened(id uint64, st *kv.Store) {
	h := g.heat(id)
	h.compactEnd, h.compactDebt, h.held, h.store = 0, 0, false, st
	h.lc = kv.LeaderChanger{
		Config: g.cfg, ID: id,
		StaleAfter: 10 * kvGateEvery * time.Millisecond, MaxLastHeard: 3, MaxLag: 64,
	}
	st.HoldCompactions(false)
}

// applied adds an applied entry's bytes to server id's debt.
func (g *kvGate) applied(id uint64, n int) { g.heat(id).debt += uint64(n) }

// installed: server id's store is a checkpoint now, its debt none.
func (g *kvGate) installed(id uint64) {
	h := g.heat(id)
	h.debt, h.compactEnd, h.compactDebt = 0, 0, 0
}

// temperature is what the model reports of h.
func (g *kvGate) temperature(h *kvHeat) kv.Temperature {
	t := kv.Temperature{
		CompactionDebt: h.debt,
		Heat:           float64(h.debt) / float64(g.cfg.DebtThreshold),
		Held:           h.held,
	}
	t.NearStall = t.Heat >= kvGateStall
	if h.compactEnd != 0 {
		t.Compacting, t.CompactionsInProgress = 1, 1
	} else {
		t.Pending = h.debt >= h.startAt
	}
	return t
}

func (k *kvMachines) stepCluster(c *Cluster) { k.gate.step(c) }

// step runs every server's compactions and, every kvGateEvery, its
// report and decision.
func (g *kvGate) step(c *Cluster) {
	for _, id := range c.ids {
		s := c.servers[id]
		if c.err != nil {
			return
		}
		if !s.up || c.now < s.paused {
			continue
		}
		h := g.heat(id)
		if h.compactEnd != 0 && c.now >= h.compactEnd {
			h.debt -= min(h.debt, h.compactDebt)
			h.compactEnd, h.compactDebt = 0, 0
			g.Compactions++
		}
		if h.compactEnd == 0 && !h.held && h.debt >= h.startAt {
			h.compactEnd, h.compactDebt = c.now+5+g.rng.Int64N(60), h.debt
			h.startAt = g.startAt()
		}
		if c.now < h.next {
			continue
		}
		h.next = c.now + kvGateEvery
		g.decide(c, s, h)
	}
}

// decide is one period of server s: its report to the members it can
// reach, then its changer's step, carried out.
func (g *kvGate) decide(c *Cluster, s *server, h *kvHeat) {
	now := simClock{c}.Now()
	t := g.temperature(h)
	for _, p := range c.ids {
		o := c.servers[p]
		if p == s.id || !o.up || c.now < o.paused || !c.reachable(s.id, p) {
			continue
		}
		g.heat(p).lc.Report(s.id, t, now)
	}
	ss := s.d.SoftState()
	var st zab.Status
	if ss.Established() {
		st = s.d.Status()
	}
	out := h.lc.Step(now, t, ss, st, g.rng.Uint64())
	if out.Keep {
		return
	}
	h.held = out.Hold
	h.store.HoldCompactions(out.Hold)
	if !out.Turn {
		return
	}
	to := out.Decision.To
	switch out.Decision.Action {
	case kv.CompactInPlace:
		g.InPlace++
		c.note(s.id, "kv: compacting in place: "+out.Decision.Reason)
		return
	case kv.Transfer:
	default:
		return
	}
	err := s.d.TransferLeadership(to)
	switch {
	case err == nil:
		g.Transfers++
		c.Stats.Transfers++
		c.Stats.GateTransfers++
		c.transferTo = to
		c.note(s.id, fmt.Sprintf("kv: transfer leadership to %d before compacting: %s", to, out.Decision.Reason))
	case errors.Is(err, zab.ErrNotLeader) || errors.Is(err, zab.ErrTransferTarget):
		g.Refused++
		c.note(s.id, fmt.Sprintf("kv: transfer leadership to %d refused: %v", to, err))
	default:
		c.fail(fmt.Errorf("server %d: kv leader change: TransferLeadership(%d): %w", s.id, to, err))
		return
	}
	c.process(s)
}

// reachable reports whether a message from a to b would go through now:
// no partition between them and their link not broken.
func (c *Cluster) reachable(a, b uint64) bool {
	l := c.net.link(a, b)
	return l != nil && c.now >= l.brokenUntil && c.net.group[a] == c.net.group[b]
}
