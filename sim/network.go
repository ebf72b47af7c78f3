package sim

import (
	"cmp"
	"math"
	"slices"

	"github.com/corral-db/corral/zab"
)

// network holds one FIFO link per ordered pair of servers. A link behaves
// like a TCP connection: messages arrive in order after a delay, and the
// only loss is a break, which drops everything in flight; sends fail
// until the link reconnects. Server ids are 1..n, so links and groups are
// slices indexed by id (the simulator's inner loop scans them every time
// unit).
type network struct {
	n     int
	links []link // links[(from-1)*n + to-1]; a server's link to itself is unused
	group []int  // partition group by id; servers in different groups cannot talk
	// inflight counts queued messages and nextDue is no later than the
	// earliest arrival among them, so a quiet time unit costs nothing.
	inflight int
	nextDue  int64
	// batch and order are due's result, reused.
	batch     []envelope
	order     []dueKey
	seq       uint64
	delivered int
	dropped   int
	// xfers are the SNAPs in transfer (transfer.go); a progress report
	// goes to both ends every progressEvery time units.
	xfers         []transfer
	progressEvery int64
	// longTransfer is InitLimit in time units: longArrived counts the
	// transfers longer than that which arrived, stalled those that
	// stalled.
	longTransfer int64
	longArrived  int
	stalled      int
}

type link struct {
	q           []envelope
	head        int // q[head:] is in flight; the slice is reused once drained
	brokenUntil int64
	lastAt      int64
	slowUntil   int64
	slowBy      int64
	gen         uint64 // counts the breaks that dropped what was in flight
}

type envelope struct {
	m   zab.Message
	at  int64
	seq uint64
}

func newNetwork(ids []uint64, tickEvery int64) *network {
	n := len(ids)
	return &network{n: n, links: make([]link, n*n), group: make([]int, n+1),
		progressEvery: max(1, 2*tickEvery), longTransfer: initLimit * tickEvery}
}

func (nw *network) link(from, to uint64) *link {
	if from == to || from == 0 || to == 0 || int(from) > nw.n || int(to) > nw.n {
		return nil
	}
	return &nw.links[int(from-1)*nw.n+int(to-1)]
}

func (l *link) len() int { return len(l.q) - l.head }

// drop discards what is in flight and reports how many messages it was.
func (l *link) drop() int {
	n := l.len()
	clear(l.q)
	l.q = l.q[:0]
	l.head = 0
	if l.lastAt >= stalledArrival {
		l.lastAt = 0 // the stalled transfer is gone (transfer.go)
	}
	l.gen++
	return n
}

// send queues m unless the link is broken or crosses a partition.
func (nw *network) send(m zab.Message, now, delay int64) {
	l := nw.link(m.From, m.To)
	if l == nil || now < l.brokenUntil || nw.group[m.From] != nw.group[m.To] {
		nw.dropped++
		return
	}
	if now < l.slowUntil {
		delay += l.slowBy
	}
	nw.enqueue(l, m, max(now+delay, l.lastAt))
}

// enqueue puts m on l, arriving at at.
func (nw *network) enqueue(l *link, m zab.Message, at int64) {
	l.lastAt = at
	nw.seq++
	l.q = append(l.q, envelope{m: m, at: at, seq: nw.seq})
	nw.inflight++
	nw.nextDue = min(nw.nextDue, at)
}

// breakLink drops a connection both ways until `until`.
func (nw *network) breakLink(a, b uint64, until int64) {
	for _, l := range []*link{nw.link(a, b), nw.link(b, a)} {
		if l != nil {
			n := l.drop()
			nw.dropped += n
			nw.inflight -= n
			l.brokenUntil = max(l.brokenUntil, until)
		}
	}
}

// isolate drops everything in flight to and from a server (it crashed).
func (nw *network) isolate(id uint64, ids []uint64) {
	for _, o := range ids {
		if o != id {
			nw.breakLink(id, o, 0)
		}
	}
}

// partition assigns groups and drops what is in flight between them.
func (nw *network) partition(group map[uint64]int) {
	for id := range nw.group {
		nw.group[id] = group[uint64(id)]
	}
	for i := range nw.links {
		from, to := i/nw.n+1, i%nw.n+1
		if nw.group[from] != nw.group[to] {
			n := nw.links[i].drop()
			nw.dropped += n
			nw.inflight -= n
		}
	}
}

func (nw *network) heal(ids []uint64) {
	clear(nw.group)
	for i := range nw.links {
		nw.links[i].brokenUntil = 0
		nw.links[i].slowUntil = 0
	}
}

// due removes every message due by now whose recipient can take it and
// returns them in delivery order, (arrival, send order), which keeps each
// link FIFO. Delivering them cannot make another message due by now (a
// send arrives one time unit later at the earliest) nor change which
// recipients can take one, so one batch per time unit delivers what
// popping the earliest message one at a time would, in the same order.
// The batch is nw.batch, valid until the next call; order lists its
// indexes in delivery order.
func (nw *network) due(now int64, ready func(to uint64) bool) (batch []envelope, order []dueKey) {
	clear(nw.batch)
	batch, order = nw.batch[:0], nw.order[:0]
	if nw.inflight == 0 || now < nw.nextDue {
		return batch, order
	}
	next := int64(math.MaxInt64)
	blocked := false // a message is due at a recipient that cannot take it
	for i := range nw.links {
		l := &nw.links[i]
		if l.head == len(l.q) {
			continue
		}
		if l.q[l.head].at > now {
			next = min(next, l.q[l.head].at)
			continue
		}
		if !ready(uint64(i%nw.n + 1)) {
			blocked = true
			continue
		}
		for l.head < len(l.q) && l.q[l.head].at <= now {
			e := &l.q[l.head]
			order = append(order, dueKey{at: e.at, seq: e.seq, i: len(batch)})
			batch = append(batch, *e)
			l.q[l.head] = envelope{}
			l.head++
			nw.inflight--
			nw.delivered++
		}
		if l.head == len(l.q) {
			l.q = l.q[:0]
			l.head = 0
		} else {
			next = min(next, l.q[l.head].at)
		}
	}
	// What is due waits for a paused or crashed recipient (scan again
	// next time unit); the rest arrives at next.
	nw.nextDue = next
	if blocked {
		nw.nextDue = now + 1
	}
	slices.SortFunc(order, func(a, b dueKey) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	nw.batch, nw.order = batch, order
	return batch, order
}

// dueKey orders a batch of due messages without moving them.
type dueKey struct {
	at  int64
	seq uint64
	i   int
}
