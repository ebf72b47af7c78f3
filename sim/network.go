package sim

import "github.com/corral-db/corral/zab"

// network holds one FIFO link per ordered pair of servers. A link behaves
// like a TCP connection: messages arrive in order after a delay, and the
// only loss is a break, which drops everything in flight; sends fail
// until the link reconnects.
type network struct {
	links     map[[2]uint64]*link
	group     map[uint64]int // partition group; servers in different groups cannot talk
	seq       uint64
	delivered int
	dropped   int
}

type link struct {
	q           []envelope
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
	nw := &network{links: map[[2]uint64]*link{}, group: map[uint64]int{}}
	for _, a := range ids {
		for _, b := range ids {
			if a != b {
				nw.links[[2]uint64{a, b}] = &link{}
			}
		}
	}
	return nw
}

func (nw *network) link(from, to uint64) *link { return nw.links[[2]uint64{from, to}] }

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
}

// breakLink drops a connection both ways until `until`.
func (nw *network) breakLink(a, b uint64, until int64) {
	for _, k := range [][2]uint64{{a, b}, {b, a}} {
		if l := nw.links[k]; l != nil {
			nw.dropped += len(l.q)
			l.q = nil
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
	nw.group = group
	for k, l := range nw.links {
		if group[k[0]] != group[k[1]] {
			nw.dropped += len(l.q)
			l.q = nil
		}
	}
}

func (nw *network) heal(ids []uint64) {
	nw.group = map[uint64]int{}
	for _, l := range nw.links {
		l.brokenUntil = 0
		l.slowUntil = 0
	}
}

// next pops the earliest due message whose recipient can take it, in
// (arrival, send order); the links' FIFO order is kept.
func (nw *network) next(now int64, ready func(to uint64) bool, ids []uint64) (zab.Message, bool) {
	var best *link
	for _, a := range ids {
		for _, b := range ids {
			if a == b {
				continue
			}
			l := nw.links[[2]uint64{a, b}]
			if len(l.q) == 0 || l.q[0].at > now || !ready(b) {
				continue
			}
			if best == nil || l.q[0].at < best.q[0].at || (l.q[0].at == best.q[0].at && l.q[0].seq < best.q[0].seq) {
				best = l
			}
		}
	}
	if best == nil {
		return zab.Message{}, false
	}
	m := best.q[0].m
	best.q[0] = envelope{}
	best.q = best.q[1:]
	nw.delivered++
	return m, true
}
