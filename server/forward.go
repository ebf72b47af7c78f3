package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/corral-db/corral/internal/probe"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

var (
	errNotServing   = errors.New("not following an established leader")
	errSessionMoved = errors.New("session moved to another connection")
)

// fwdKey names a client request in the leader's transactions: a
// transaction's header carries the session and cxid of the request that
// made it, which is how a learner finds the request to answer (as
// ZooKeeper's CommitProcessor matches committed requests to local ones).
type fwdKey struct {
	sid int64
	xid int32
}

// forwarder is a learner's record of the requests it forwarded to the
// leader and not yet seen committed, in forwarding order, and of its
// outstanding syncs and revalidations.
type forwarder struct {
	mu     sync.Mutex
	byKey  map[fwdKey]*request
	order  []*request
	syncs  map[int64]*request
	nextID int64
	// revals are the reconnects waiting for the leader's revalidation,
	// by id (sessionmove.go); each channel gets the answer, or is closed
	// without one if the leader is lost.
	revals map[int64]chan bool
}

func (f *forwarder) init() {
	f.byKey = map[fwdKey]*request{}
	f.syncs = map[int64]*request{}
	f.revals = map[int64]chan bool{}
}

// add records r and sends it, under one lock: the order of the record
// must be the order on the wire, or a request overtaken by another
// connection's would be taken for lost.
func (f *forwarder) add(r *request, send func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byKey[fwdKey{r.sid, r.xid}] = r
	f.order = append(f.order, r)
	send()
}

// match takes the request a committed transaction answers, if this
// learner forwarded it. The leader preps one learner's requests in the
// order it forwarded them, so requests forwarded before the match that
// are still waiting were lost on the way (a dropped message): they are
// returned in lost, for the caller to fail outside its locks.
func (f *forwarder) match(sid int64, xid int32) (r *request, lost []*request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := fwdKey{sid, xid}
	r = f.byKey[k]
	if r == nil {
		return nil, nil
	}
	delete(f.byKey, k)
	for i, q := range f.order {
		if q != r {
			continue
		}
		for _, l := range f.order[:i] {
			delete(f.byKey, fwdKey{l.sid, l.xid})
			lost = append(lost, l)
		}
		clear(f.order[:i+1])
		f.order = f.order[i+1:]
		if len(f.order) == 0 {
			f.order = nil
		}
		break
	}
	return r, lost
}

// addSync registers a sync and returns its id.
func (f *forwarder) addSync(r *request) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.syncs[f.nextID] = r
	return f.nextID
}

func (f *forwarder) takeSync(id int64) *request {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.syncs[id]
	delete(f.syncs, id)
	return r
}

// addReval registers a revalidation and returns its id and the channel
// its answer comes on.
func (f *forwarder) addReval() (int64, chan bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	ch := make(chan bool, 1)
	f.revals[f.nextID] = ch
	return f.nextID, ch
}

// takeReval removes a revalidation; whoever takes it answers it.
func (f *forwarder) takeReval(id int64) chan bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := f.revals[id]
	delete(f.revals, id)
	return ch
}

// takeAll empties the forwarder (the leader changed): it returns the
// requests to fail and closes the revalidations without an answer.
func (f *forwarder) takeAll() []*request {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.order
	for _, r := range f.syncs {
		out = append(out, r)
	}
	for _, ch := range f.revals {
		close(ch)
	}
	f.byKey = map[fwdKey]*request{}
	f.syncs = map[int64]*request{}
	f.revals = map[int64]chan bool{}
	f.order = nil
	return out
}

// overdue reports whether a request has waited longer than limit for the
// leader.
func (f *forwarder) overdue(limit time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.order) > 0 && time.Since(f.order[0].recv) > limit {
		return true
	}
	for _, r := range f.syncs {
		if time.Since(r.recv) > limit {
			return true
		}
	}
	return false
}

// forward sends a write to the leader.
func (rp *replica) forward(r *request) bool {
	ss := rp.soft.Load()
	if ss == nil || ss.Phase != zab.PhaseBroadcast || ss.State == zab.StateLeading {
		rp.s.abandon(r, errNotServing)
		return true
	}
	m := driverMsg{kind: driverRequest, sid: r.sid, xid: r.xid, op: r.op, timeout: r.timeout, auth: r.auth, rec: r.rec}
	msg := []zab.Message{driverMessage(rp.id, ss.Leader, &m)}
	probe.Mark("f-forward", 0)
	// Under prepMu, which a reconnect holds to attach the session and
	// send its revalidation: a write of a connection that no longer
	// holds its session is not forwarded (the leader cannot tell two
	// connections of one learner apart), and one forwarded before the
	// move is on the link ahead of the revalidation.
	s := rp.s
	s.prepMu.Lock()
	if r.c != nil && r.sid != 0 && r.op != wire.OpCloseSession {
		if sess := s.sessions.get(r.sid); sess != nil && s.movedFrom(sess, r.c) {
			s.prepMu.Unlock()
			s.abandon(r, errSessionMoved)
			return true
		}
	}
	rp.fw.add(r, func() { rp.tr.Send(msg) })
	s.prepMu.Unlock()
	return true
}

// revalidate asks the leader to record this learner as the owner of
// session sid (sessionmove.go). The caller holds prepMu and has attached
// the session to its new connection here. It returns the revalidation's
// id and the channel its answer comes on, or a nil channel when this
// server follows no leader.
func (rp *replica) revalidate(sid int64) (int64, chan bool) {
	ss := rp.soft.Load()
	if ss == nil || ss.Phase != zab.PhaseBroadcast || ss.State == zab.StateLeading {
		return 0, nil
	}
	id, ch := rp.fw.addReval()
	rp.tr.Send([]zab.Message{driverMessage(rp.id, ss.Leader, &driverMsg{kind: driverRevalidate, id: id, sid: sid})})
	return id, ch
}

// forwardSync asks the leader where a sync must wait.
func (rp *replica) forwardSync(r *request) bool {
	ss := rp.soft.Load()
	if ss == nil || ss.Phase != zab.PhaseBroadcast {
		rp.s.abandon(r, errNotServing)
		return true
	}
	id := rp.fw.addSync(r)
	rp.tr.Send([]zab.Message{driverMessage(rp.id, ss.Leader, &driverMsg{kind: driverSyncRequest, id: id})})
	return true
}

// receiveDriver handles a server message that is not zab's (node loop).
func (rp *replica) receiveDriver(m zab.Message) {
	if len(m.Entries) != 1 {
		rp.log.Warn("malformed server message", "from", m.From)
		return
	}
	dm, err := decodeDriverMsg(m.Entries[0].Data, rp.s.opts.MaxBuffer+4096)
	if err != nil {
		rp.log.Warn("server message refused", "from", m.From, "err", err)
		return
	}
	switch dm.kind {
	case driverRequest, driverSyncRequest, driverRevalidate:
		probe.Mark("l-fwd-rx", 0)
		in := fwdIn{from: m.From, msg: dm}
		// Fast path: with nothing queued ahead (order matters, see
		// forwarder.match) and a free slot, prep it here and save the
		// hand-off to fwdLoop.
		if rp.fwdQueued.Load() == 0 && rp.writable.Load() {
			switch dm.kind {
			case driverSyncRequest:
				rp.answerSync(in)
				return
			case driverRevalidate:
				rp.answerRevalidate(in)
				return
			}
			if rp.s.tryAcquire() {
				rp.proposeForwarded(in, true)
				return
			}
		}
		rp.fwdQueued.Add(1)
		select {
		case rp.fwdIn <- in:
		default:
			rp.fwdQueued.Add(-1)
			// The learner notices: a later request of its commits first,
			// or none does within its limit.
			rp.log.Warn("forwarded request queue full; dropped", "from", m.From)
		}
	case driverSyncReply:
		if r := rp.fw.takeSync(dm.id); r != nil {
			rp.addBarrier(r, dm.zxid)
		}
	case driverTouch:
		if rp.isLeader() {
			rp.s.sessions.touchIDs(dm.sessions)
		}
	case driverRevalidateReply:
		if ch := rp.fw.takeReval(dm.id); ch != nil {
			ch <- dm.valid
		}
	}
}

// fwdLoop preps the requests learners forward, in the order they arrive,
// on the leader. It waits for the leader to be writable and for a
// pipeline slot, so it is where forwarded load is throttled.
func (rp *replica) fwdLoop(ctx context.Context) {
	for {
		var in fwdIn
		select {
		case <-ctx.Done():
			return
		case in = <-rp.fwdIn:
		}
		if !rp.handleForwarded(ctx, in) {
			return
		}
	}
}

// handleForwarded preps one queued forwarded message; it returns false
// when the server is stopping.
func (rp *replica) handleForwarded(ctx context.Context, in fwdIn) bool {
	defer rp.fwdQueued.Add(-1)
	for !rp.writable.Load() {
		ss := rp.soft.Load()
		if ss == nil || ss.State != zab.StateLeading {
			break
		}
		wctx, cancel := context.WithTimeout(ctx, rp.s.opts.TickTime)
		rp.waitWritable(wctx)
		cancel()
		if ctx.Err() != nil {
			return false
		}
	}
	if !rp.writable.Load() {
		return true // not leading: the learner will look for the leader
	}
	switch in.msg.kind {
	case driverSyncRequest:
		rp.answerSync(in)
	case driverRevalidate:
		rp.answerRevalidate(in)
	case driverRequest:
		return rp.proposeForwarded(in, false)
	}
	return true
}

// answerRevalidate records the learner a client reconnected to as its
// session's owner, if the session is live, and tells the learner whether
// it is (ZooKeeper's Leader.revalidateSession: checkIfValidGlobalSession,
// then setOwner to the LearnerHandler). It runs in order with the
// requests learners forward, under prepMu: a write prepped after it from
// another member, or from the old connection of this one, is refused
// with SessionMoved (checkSession, forward).
func (rp *replica) answerRevalidate(in fwdIn) {
	s := rp.s
	s.prepMu.Lock()
	sess := s.sessions.get(in.msg.sid)
	valid := sess != nil && !sess.closing.Load()
	if valid {
		sess.member.Store(in.from)
		s.sessions.touch(sess)
	}
	s.prepMu.Unlock()
	rp.tr.Send([]zab.Message{driverMessage(rp.id, in.from, &driverMsg{kind: driverRevalidateReply, id: in.msg.id, valid: valid})})
}

// answerSync tells a learner the zxid its sync waits for: the last one
// proposed, after every request it forwarded before.
func (rp *replica) answerSync(in fwdIn) {
	rp.syncPoint(func(z zab.Zxid, ok bool) {
		if ok {
			rp.tr.Send([]zab.Message{driverMessage(rp.id, in.from, &driverMsg{kind: driverSyncReply, id: in.msg.id, zxid: int64(z)})})
		}
		// Not leading any more: the learner gives up on it when it
		// loses this leader (or after its limit).
	})
}

// proposeForwarded preps and proposes a forwarded write; haveSlot says
// the caller already holds its pipeline slot.
func (rp *replica) proposeForwarded(in fwdIn, haveSlot bool) bool {
	s := rp.s
	dm := &in.msg
	r := &request{from: in.from, sid: dm.sid, xid: dm.xid, op: dm.op, kind: kindWrite, auth: dm.auth, timeout: dm.timeout, recv: time.Now()}
	if len(dm.body) > 0 || (dm.op != wire.OpCreateSession && dm.op != wire.OpCloseSession) {
		// The body is in the frame the transport allocated for this
		// message alone (decodeDriverMsg), so the request's data may
		// point into it instead of being copied; propose copies it into
		// the proposal, and nothing keeps the frame after that.
		d := wire.Decoder{B: dm.body, Max: s.opts.MaxBuffer, Alias: true}
		rec, err := wire.DecodeRequest(dm.op, &d)
		if err != nil || !isWrite(dm.op) && dm.op != wire.OpCreateSession {
			// A learner forwards only writes it decoded; anything else
			// is a bug there. Prep turns it into an error transaction so
			// the learner's client still gets an answer.
			rp.log.Warn("forwarded request does not decode", "from", in.from, "op", dm.op, "err", err)
		}
		r.rec = rec
	}
	if !haveSlot && !s.acquire() {
		return false
	}
	r.onDone = func(*request) { s.release() }
	s.prepMu.Lock()
	ok := rp.propose(r, false)
	s.prepMu.Unlock()
	return ok
}

// catchUp waits until this learner has applied everything the leader had
// proposed when asked (a sync without a client), or until limit. It
// reports whether it caught up.
func (rp *replica) catchUp(limit time.Duration) bool {
	done := make(chan bool, 1)
	r := &request{op: wire.OpSync, kind: kindWrite, recv: time.Now()}
	r.onDone = func(r *request) { done <- r.res.Err == wire.CodeOK }
	rp.forwardSync(r)
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case ok := <-done:
		return ok
	case <-t.C:
		return false
	case <-rp.s.ctx.Done():
		return false
	}
}
