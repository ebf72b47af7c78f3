package sim

import (
	"math"

	"github.com/corral-db/corral/zab"
)

// A SNAP of a large state takes a long time to cross a link: in a run
// with Options.SnapTransfer, each one takes up to that many time units
// (several InitLimits), and while it moves the transports at both ends
// report progress every progressEvery units, as the TCP transport does
// for every chunk of a large frame (zab.Node.ReportProgress). With
// probability Options.SnapStall a transfer stalls part of the way: the
// reports stop, everything behind it on the link waits (TCP is FIFO), and
// the sender's write timeout breaks the link some InitLimits later. zab
// must let a moving transfer finish however long it takes, and end a
// stalled join (its step gets InitLimit ticks without progress).

// transfer is a SNAP on its way over the link from -> to.
type transfer struct {
	from, to uint64
	gen      uint64 // the link's generation when it started: a break ends it
	start    int64
	next     int64 // time of the next progress report
	end      int64 // arrival, if it does not stall
	stallAt  int64 // when it stops moving; 0: it does not stall
	breakAt  int64 // stalled: when the sender's write timeout breaks the link
}

// stalledArrival is the arrival time of a stalled transfer's message:
// never, until the link breaks.
const stalledArrival = math.MaxInt64 / 2

// sendTransfer queues a SNAP that takes dur time units to transfer after
// delay; stall > 0 stops it that many units after it starts, and the
// link breaks breakAfter units later.
func (nw *network) sendTransfer(m zab.Message, now, delay, dur, stall, breakAfter int64) {
	l := nw.link(m.From, m.To)
	if l == nil || now < l.brokenUntil || nw.group[m.From] != nw.group[m.To] {
		nw.dropped++
		return
	}
	if now < l.slowUntil {
		delay += l.slowBy
	}
	at := max(now+delay+dur, l.lastAt)
	x := transfer{from: m.From, to: m.To, gen: l.gen, start: now, next: now + nw.progressEvery, end: at}
	if stall > 0 {
		x.stallAt = now + stall
		x.breakAt = x.stallAt + breakAfter
		at = stalledArrival
		nw.stalled++
	}
	nw.xfers = append(nw.xfers, x)
	nw.enqueue(l, m, at)
}

// progress reports, for every transfer moving at now, progress to both
// ends when one is due, breaks the links of stalled transfers whose
// timeout ran out, and forgets the transfers that ended.
func (nw *network) progress(now int64, report func(at, peer uint64)) {
	if len(nw.xfers) == 0 {
		return
	}
	keep := nw.xfers[:0]
	for _, x := range nw.xfers {
		l := nw.link(x.from, x.to)
		if l.gen != x.gen {
			continue // the link broke: the transfer died with it
		}
		if x.stallAt > 0 && now >= x.breakAt {
			nw.breakLink(x.from, x.to, now+1)
			continue
		}
		moving := now < x.end && (x.stallAt == 0 || now < x.stallAt)
		if moving && now >= x.next {
			report(x.to, x.from)
			report(x.from, x.to)
			x.next = now + nw.progressEvery
		}
		if x.stallAt == 0 && now >= x.end {
			if x.end-x.start > nw.longTransfer {
				nw.longArrived++
			}
			continue
		}
		keep = append(keep, x)
	}
	clear(nw.xfers[len(keep):])
	nw.xfers = keep
}
