package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/anishathalye/porcupine"
	"github.com/corral-db/corral/internal/linmodel"
	"github.com/corral-db/corral/zab"
)

// workload is the register workload: Options.Clients clients, each with
// at most one operation outstanding, read, set and CAS the registers of
// the state machine (machine.go) through a server that believes it is the
// established leader, as a ZooKeeper client sends its requests to the
// server it is connected to. The history they observe is checked
// linearizable with porcupine at the end of the run (linearizable.go).
//
// How an operation ends, and what the history records:
//
//   - the server it was proposed at applies its entry: the result, with
//     the return time of the apply (a server answers once it applied);
//   - Propose fails (not the leader, a transfer in progress): the
//     operation failed and had no effect; it is left out;
//   - a read's server crashes, loses its leadership, or the read times
//     out: a read has no effect, so it is left out;
//   - a write's server crashes or the write times out: the client cannot
//     know whether it happened, and it may still commit later (a crashed
//     leader's proposal can be taken up by the next leader). It is
//     recorded open-ended (Return = math.MaxInt64): porcupine may
//     linearize it anywhere after its call, or never.
//
// Reads are of two kinds: through the log (an entry like a write, answered
// at its apply) and confirmed (linmodel.ConfirmedRead): the leader notes its
// last zxid, runs a leadership confirmation round (ConfirmLeadership,
// the ReadIndex of zab/confirm.go) and answers from its own state once
// the round is confirmed in the same epoch and it has applied that zxid.
//
// Call and return times are a counter of workload events, not the
// simulated clock, so two operations of one time unit are ordered as
// they happened.
type workload struct {
	rng     *rand.Rand
	clients []regClient
	history []porcupine.Operation
	events  int64
	// nextValue makes every written value unique, so a read names the
	// write it saw.
	nextValue int64
}

type regClient struct {
	id      int
	pending bool
	op      linmodel.Op
	call    int64 // history time of the call
	server  uint64
	zxid    zab.Zxid // log operations: the zxid of the entry
	// Confirmed reads: the leadership (epoch) and round that must
	// confirm, and the zxid the leader must have applied.
	epoch  uint32
	round  uint64
	readAt zab.Zxid
	// deadline is the simulated time the client gives up at.
	deadline int64
	// nextAt is when an idle client calls its next operation.
	nextAt int64
	// seen is the version of each register the client last saw; CAS
	// expects it (or, sometimes, a stale one).
	seen [regKeys]int32
}

// regTimeout bounds how long a client waits for an answer: long enough
// for an election, short enough that a client stuck on a partitioned
// leader gives up within the run.
const regTimeout = 400

func newWorkload(seed uint64, clients int) *workload {
	w := &workload{rng: rand.New(rand.NewPCG(seed, 0x776b6c64))}
	for i := range clients {
		w.clients = append(w.clients, regClient{id: i, nextAt: 1 + w.rng.Int64N(50)})
	}
	return w
}

func (w *workload) tick() int64 { w.events++; return w.events }

// step calls new operations (only while issue holds: in the fault phase),
// answers confirmed reads whose condition holds and times out the rest.
func (w *workload) step(c *Cluster, issue bool) {
	for i := range w.clients {
		cl := &w.clients[i]
		if cl.pending {
			if cl.op.Kind == linmodel.ConfirmedRead {
				w.pollConfirmedRead(c, cl)
			}
			if cl.pending && c.now >= cl.deadline {
				w.giveUp(cl)
				cl.nextAt = c.now + w.rng.Int64N(30)
			}
			continue
		}
		if issue && c.now >= cl.nextAt {
			w.call(c, cl)
		}
	}
}

// call starts a client's next operation at a server that believes it
// leads (a stale leader too: the client cannot tell).
func (w *workload) call(c *Cluster, cl *regClient) {
	cl.nextAt = c.now + 1 + w.rng.Int64N(20)
	var cands []*server
	for _, id := range c.ids {
		s := c.servers[id]
		if s.up && c.now >= s.paused && s.soft.Established() {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		return
	}
	s := cands[w.rng.IntN(len(cands))]
	key := w.rng.IntN(regKeys)
	op := linmodel.Op{Key: key}
	switch x := w.rng.IntN(10); {
	case x < 2:
		op.Kind = linmodel.Read
	case x < 4:
		op.Kind = linmodel.ConfirmedRead
	case x < 7:
		op.Kind = linmodel.Set
	default:
		op.Kind = linmodel.CAS
		op.Expect = cl.seen[key]
		if op.Expect > 0 && w.rng.IntN(4) == 0 {
			op.Expect--
		}
	}
	if op.Kind == linmodel.Set || op.Kind == linmodel.CAS {
		w.nextValue++
		op.Value = w.nextValue
	}
	cl.op, cl.server, cl.deadline = op, s.id, c.now+regTimeout
	cl.call = w.tick()
	if op.Kind == linmodel.ConfirmedRead {
		round, err := s.d.ConfirmLeadership()
		if err != nil {
			if !errors.Is(err, zab.ErrNotLeader) {
				c.fail(fmt.Errorf("server %d: ConfirmLeadership: %w", s.id, err))
			}
			return
		}
		cl.pending = true
		cl.epoch, cl.round, cl.readAt = s.soft.Epoch, round, s.d.LastZxid()
		c.process(s)
		w.pollConfirmedRead(c, cl)
		return
	}
	_, err := c.proposeAt(s, encodeRegOp(op), func(z zab.Zxid) {
		cl.pending = true
		cl.zxid = z
	})
	if err != nil && !expectedProposeErr(err) {
		c.fail(fmt.Errorf("server %d: Propose: %w", s.id, err))
	}
}

// pollConfirmedRead answers a confirmed read once its round is confirmed
// in the leadership it started in and the leader applied what its log
// held at the call; it drops the read if that leadership ended.
func (w *workload) pollConfirmedRead(c *Cluster, cl *regClient) {
	s := c.servers[cl.server]
	if !s.up || !s.soft.Established() || s.soft.Epoch != cl.epoch {
		cl.pending = false
		return
	}
	if !c.opts.StaleReads && (s.d.Confirmed() < cl.round || s.sm.m.zxid < cl.readAt) {
		return
	}
	r := s.sm.m.regs[cl.op.Key]
	w.complete(cl, linmodel.Result{OK: true, Value: r.Value, Version: r.Version})
}

// applied is told of every register entry a server applies: the answer
// to the client that proposed it there.
func (w *workload) applied(id uint64, z zab.Zxid, res linmodel.Result) {
	for i := range w.clients {
		cl := &w.clients[i]
		if cl.pending && cl.op.Kind != linmodel.ConfirmedRead && cl.server == id && cl.zxid == z {
			w.complete(cl, res)
			return
		}
	}
}

// crashed: the connections to a crashed server break; its clients'
// operations end without an answer.
func (w *workload) crashed(id uint64) {
	for i := range w.clients {
		if cl := &w.clients[i]; cl.pending && cl.server == id {
			w.giveUp(cl)
		}
	}
}

func (w *workload) complete(cl *regClient, res linmodel.Result) {
	cl.pending = false
	if res.OK || cl.op.Kind == linmodel.Read || cl.op.Kind == linmodel.ConfirmedRead {
		cl.seen[cl.op.Key] = max(cl.seen[cl.op.Key], res.Version)
	}
	w.history = append(w.history, porcupine.Operation{
		ClientId: cl.id, Input: cl.op, Call: cl.call, Output: linmodel.Output{Result: res}, Return: w.tick(),
	})
}

// giveUp ends an operation without an answer: a read is left out, a
// write is recorded open-ended.
func (w *workload) giveUp(cl *regClient) {
	cl.pending = false
	if cl.op.Kind == linmodel.Read || cl.op.Kind == linmodel.ConfirmedRead {
		return
	}
	w.history = append(w.history, porcupine.Operation{
		ClientId: cl.id, Input: cl.op, Call: cl.call, Output: linmodel.Output{Unknown: true}, Return: linmodel.UnknownReturn,
	})
}

// finish ends the run's outstanding operations without an answer.
func (w *workload) finish() {
	for i := range w.clients {
		if w.clients[i].pending {
			w.giveUp(&w.clients[i])
		}
	}
}

func expectedProposeErr(err error) bool {
	return errors.Is(err, zab.ErrNotLeader) || errors.Is(err, zab.ErrEpochExhausted) || errors.Is(err, zab.ErrTransferring)
}
