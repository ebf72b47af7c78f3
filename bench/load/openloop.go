package load

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/wire"
)

// Open loop: with a rate, a phase's requests leave on a fixed schedule
// whether or not the server has answered the earlier ones, as requests
// from many independent clients do. A closed-loop generator sends the next
// request only when a reply frees a slot, so a server that stalls also
// stalls the load, and the requests that were not sent during the stall
// never show up in the latencies (coordinated omission). Here every
// request has an intended send time, and its latency is also measured
// from that time: a request that had to wait for a slot is charged for
// the wait.
//
// The rate is shared out over the connections: connection i of n sends
// request k at t0 + (i + k·n)/rate, so the phase as a whole issues one
// request every 1/rate seconds. Each connection keeps at most --inflight
// requests outstanding (memory stays bounded whatever the server does): a
// request due while its connection's window is full waits, and leaves as
// soon as a reply frees a slot; those still waiting when the measured
// interval ends are counted as unsent.

// OpenLoopResult is what an open-loop phase adds to its measurement.
type OpenLoopResult struct {
	// Rate is the schedule's requests per second, all connections
	// together.
	Rate float64 `json:"rate"`
	// Due is how many requests the schedule held in the measured interval
	// and Unsent how many of those had not left by its end (the window
	// was full: the server did not keep up).
	Due    int64 `json:"due"`
	Unsent int64 `json:"unsent"`
	// FromIntended summarises the measured replies' latencies from their
	// requests' intended send times.
	FromIntended stats.Latency `json:"latency_from_intended"`
	// Hist holds those latencies, for the latency plot.
	Hist *stats.Hist `json:"-"`
}

// openSchedule is one connection's share of an open-loop phase. Its pacer
// gives the schedule (request k is due at pacer.dueAt(k)); next is the
// index of the next request to send. Owned by the connection's writer
// until its run returns.
type openSchedule struct {
	pacer Pacer
	next  int64
	// due and unsent are the measured interval's counts, filled in when
	// the writer stops.
	due, unsent int64
}

// dueBy is how many requests are due at or before t: the k with
// T0 + k/rate <= t.
func (o *openSchedule) dueBy(t time.Time) int64 {
	if t.Before(o.pacer.T0) {
		return 0
	}
	return int64(math.Floor(t.Sub(o.pacer.T0).Seconds()*o.pacer.Rate)) + 1
}

// dueBefore is how many requests are due strictly before t.
func (o *openSchedule) dueBefore(t time.Time) int64 {
	return o.dueBy(t.Add(-time.Nanosecond))
}

// settle counts the measured interval's requests and those of them not
// Sent (requests leave in schedule order, so the unsent ones are the last).
func (o *openSchedule) settle() {
	first, last := o.dueBefore(o.pacer.Start), o.dueBefore(o.pacer.End)
	o.due = max(0, last-first)
	sent := min(max(0, o.next-first), o.due)
	o.unsent = o.due - sent
}

// openWindows gives each of n connections its own copy of w with its share
// of the schedule at rate requests per second in total, starting at t0;
// with rate 0 every connection shares w (closed loop).
func openWindows(w *Window, rate float64, n int, t0 time.Time) []*Window {
	out := make([]*Window, n)
	for i := range out {
		if !(rate > 0) { // NaN too
			out[i] = w
			continue
		}
		wi := *w
		wi.open = &openSchedule{pacer: Pacer{
			Rate: rate / float64(n),
			T0:   t0.Add(time.Duration(float64(i) / rate * float64(time.Second))),
			// The schedule ends with the window: nothing is due at or
			// after end.
			Start: w.Start, End: w.End,
			Now: time.Now,
		}}
		out[i] = &wi
	}
	return out
}

// openResult gathers an open-loop phase's counts and latencies from its
// connections' windows and per-connection stats; nil in closed loop.
func openResult(rate float64, ws []*Window, perConn []ConnStats) *OpenLoopResult {
	if !(rate > 0) {
		return nil
	}
	r := &OpenLoopResult{Rate: rate, Hist: stats.NewHist()}
	for _, w := range ws {
		if w.open != nil {
			r.Due += w.open.due
			r.Unsent += w.open.unsent
		}
	}
	for i := range perConn {
		if perConn[i].intended != nil {
			r.Hist.Merge(perConn[i].intended)
		}
	}
	r.FromIntended = r.Hist.Summary()
	return r
}

// openWriteLoop is writeLoop's open-loop counterpart: it sends every
// request that is due and fits the window in one write, records when each
// was meant to leave, and sleeps until the next is due (or, with requests
// waiting, until a reply frees a slot). It sends closeSession at the end
// of the window.
func (c *Conn) openWriteLoop(ctx context.Context, src source, p *Pipe, w *Window) error {
	o := w.open
	defer o.settle()
	var e wire.Encoder
	batch := make([]Pending, 0, p.inflight)
	ticker := time.NewTicker(c.pingEvery())
	defer ticker.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	sentSinceTick := false
	total := o.dueBefore(w.End)
	for {
		now := o.pacer.Now()
		if !now.Before(w.End) || o.next >= total {
			return c.SendClose(&e, p)
		}
		waiting := min(o.dueBy(now), total) - o.next
		if waiting > 0 {
			free := p.Free.Swap(0)
			n := min(waiting, free)
			if free > n {
				p.Free.Add(free - n) // the writer's own slots: no wake-up needed
			}
			if n > 0 {
				g, last := w.take(int(n))
				if g > 0 {
					var err error
					batch, err = c.sendBatch(&e, p, src, batch, g, now, func(j int) time.Time { return o.pacer.dueAt(o.next + int64(j)) })
					if err != nil {
						return err
					}
					o.next += int64(g)
					sentSinceTick = true
				}
				if last {
					return c.SendClose(&e, p)
				}
				continue
			}
		}
		// Sleep until the next request is due, or, if requests are
		// already waiting for a slot, until a reply frees one; the end of
		// the window wakes the writer either way.
		wake := w.End.Sub(now)
		var slot <-chan struct{}
		if waiting > 0 {
			slot = p.Wake
		} else {
			wake = min(wake, o.pacer.dueAt(o.next).Sub(now))
		}
		// At least a microsecond, so a clock that rounds the due time to
		// Now still moves on. (Since Go 1.23 Reset leaves no stale tick
		// behind, whether or not the timer fired.)
		timer.Reset(max(wake, time.Microsecond))
		select {
		case <-timer.C:
		case <-slot:
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
			// Idle for a whole tick (a slow schedule): keep the session
			// alive, as writeLoop does.
			if err := c.keepAlive(&e, p, sentSinceTick); err != nil {
				return err
			}
			sentSinceTick = false
		}
	}
}

// Bounds on --rate: every load loop is bounded.
const MaxRate = 10_000_000

// RegisterRate adds --rate to a command's flags.
func RegisterRate(fs *flag.FlagSet) *float64 {
	return fs.Float64("rate", 0, "open loop: requests per second, all connections together, sent on a fixed schedule "+
		"whatever the replies (at most --inflight outstanding per connection; latency also from each request's "+
		"intended send time); 0: closed loop")
}

func ValidateRate(rate float64) error {
	if math.IsNaN(rate) || rate < 0 || rate > MaxRate {
		return fmt.Errorf("--rate must be in [0, %d] (0: closed loop)", MaxRate)
	}
	return nil
}

var ErrRateSeq = errors.New("bench: the seqcreate workload is one request at a time; it has no open-loop form")
