package sim

import (
	"math"

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
	inflight  int
	nextDue   int64
	seq       uint64
	delivered int
	dropped   int
}

type link struct {
	q           []envelope
	head        int // q[head:] is in flight; the slice is reused once drained
	brokenUntil int64
	lastAt      int64
	slowUntil   int64
	slowBy      int64
}

type envelope struct {
	m   zab.Message
	at  int64
	seq uint64
}

func newNetwork(ids []uint64) *network {
	n := len(ids)
	return &network{n: n, links: make([]link, n*n), group: make([]int, n+1)}
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
	at := max(now+delay, l.lastAt)
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

// next pops the earliest due message whose recipient can take it, in
// (arrival, send order); the links' FIFO order is kept.
func (nw *network) next(now int64, ready func(to uint64) bool, ids []uint64) (zab.Message, bool) {
	if nw.inflight == 0 || now < nw.nextDue {
		return zab.Message{}, false
	}
	var best *link
	due := int64(math.MaxInt64)
	blocked := false // a message is due at a recipient that cannot take it
	for i := range nw.links {
		l := &nw.links[i]
		if l.head == len(l.q) {
			continue
		}
		h := &l.q[l.head]
		if h.at > now {
			due = min(due, h.at)
			continue
		}
		if best != nil {
			b := &best.q[best.head]
			if h.at > b.at || (h.at == b.at && h.seq > b.seq) {
				continue
			}
		}
		if !ready(uint64(i%nw.n + 1)) {
			blocked = true
			continue
		}
		best = l
	}
	if best == nil {
		// Nothing deliverable now: what is due waits for a paused
		// recipient (scan again next time unit), the rest arrives at due.
		nw.nextDue = due
		if blocked {
			nw.nextDue = now + 1
		}
		return zab.Message{}, false
	}
	m := best.q[best.head].m
	best.q[best.head] = envelope{}
	best.head++
	if best.head == len(best.q) {
		best.q = best.q[:0]
		best.head = 0
	}
	nw.inflight--
	nw.delivered++
	return m, true
}
