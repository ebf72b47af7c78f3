package server

import (
	"slices"
	"sync"

	"github.com/corral-db/corral/wire"
)

// combiner lets the leader's writes reach prep without a convoy on
// prepMu (flat combining). Many connection readers submit writes at
// once; if each took prepMu in turn, a busy server would hand the lock
// from goroutine to goroutine (parking and waking one per batch, and the
// mutex's starvation mode handing it over in FIFO order), and the time
// of those hand-overs, not prep, would bound throughput. Instead a
// submitter appends its writes to pending; the first one to find no
// combiner active becomes it, takes prepMu once and proposes everything
// pending, its own writes and whatever others appended meanwhile, until
// pending is empty. The others return at once to reading their
// connections.
//
// Order: writes are proposed in the order they were appended, so one
// connection's writes keep their order (a connection appends a batch
// only after its previous one). Other holders of prepMu (forwarded
// writes, syncs, session moves, leadership changes) serialize with the
// combiner on prepMu as before.
//
// Bound: pending holds only writes that hold a pipeline slot
// (Server.tryAcquire), so it is bounded by globalOutstandingLimit.
type combiner struct {
	// mu guards pending and active; never held while taking prepMu.
	mu      sync.Mutex
	pending []*request
	// active: a submitter is combining (it will take what is appended).
	active bool
	// spare is the combiner's buffer, swapped with pending each round;
	// only the active combiner touches it.
	spare []*request
}

// submitCombined submits a leader's writes (no syncs) in order through
// the combiner. It reports false if a proposal failed and the server is
// stopping.
func (rp *replica) submitCombined(rs []*request) bool {
	c := &rp.comb
	c.mu.Lock()
	c.pending = append(c.pending, rs...)
	if c.active {
		c.mu.Unlock()
		return true
	}
	c.active = true
	c.mu.Unlock()

	rp.s.prepMu.Lock()
	// A standalone server's lone write that finds the pipeline empty
	// (everything proposed is applied) runs to completion here (drive).
	idle := rp.standalone && int64(rp.d.LastZxid()) == rp.s.appliedZxid()
	proposed, ok := 0, true
	for {
		c.mu.Lock()
		batch := c.pending
		if len(batch) == 0 || !ok {
			c.pending = c.pending[:0]
			c.active = false
			c.mu.Unlock()
			break
		}
		c.pending = c.spare[:0]
		c.mu.Unlock()
		for i, r := range batch {
			if ok && !rp.propose(r, rp.standalone) {
				// The server is stopping (propose called fatal): what is
				// left stays in its connections' queues, dropped with them.
				ok = false
			}
			batch[i] = nil
			proposed++
		}
		c.spare = batch[:0]
	}
	rp.s.prepMu.Unlock()
	switch {
	case !ok || !rp.standalone:
	case idle && proposed == 1:
		rp.drive()
	default:
		rp.process()
	}
	return ok
}

// combinable reports whether writes may go through the combiner: on the
// leader, with no sync among them (a sync has its own path, sync).
func (rp *replica) combinable(rs []*request) bool {
	return rp.isLeader() && !slices.ContainsFunc(rs, func(r *request) bool { return r.op == wire.OpSync })
}
