package load

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/wire"
)

// Window is what the workers of one phase share: replies that arrive in
// [start, end) are measured, no request is issued at or after end, and
// Budget, if not nil, bounds the number of requests issued by all workers
// together.
type Window struct {
	Start, End time.Time
	Budget     *atomic.Int64
	// Drain is how long after end the replies may take.
	Drain time.Duration
	// open, if set, issues this connection's requests on a fixed schedule
	// whatever the replies do (open loop, see openloop.go) instead of
	// refilling the window as replies free it (closed loop).
	open *openSchedule
	// replies, if set, counts the replies the readers have seen, for the
	// progress display (see progress.go).
	replies *atomic.Int64
}

// take grants up to n requests from the budget.
func (w *Window) take(n int) (granted int, last bool) {
	if w.Budget == nil {
		return n, false
	}
	left := w.Budget.Add(-int64(n))
	if left >= 0 {
		return n, left == 0
	}
	before := left + int64(n)
	if before <= 0 {
		return 0, true
	}
	return int(before), true
}

// ConnStats is what one connection's reader saw.
type ConnStats struct {
	Hist     *stats.Hist
	Ops      int64 // measured successful replies
	Errs     int64 // measured error replies
	FirstErr int32 // first measured error code
	// intended, in open loop, holds the measured replies' latencies from
	// the time the schedule meant each request to leave, so a server that
	// stalls is charged for the requests it delayed as well as the ones
	// it held (coordinated omission).
	intended  *stats.Hist
	total     int64 // every request reply, warm-up and drain included
	totalErrs int64
	// Writes and requests count the writer's syscalls and what they
	// carried: how well requests are batched.
	writes, requests int64
}

type Pending struct {
	Xid   int32
	Sent  time.Time
	Close bool
	// intended is when an open-loop schedule meant the request to leave;
	// zero in closed loop.
	intended time.Time
}

// ErrStalled ends a connection whose server stopped answering: its
// replies were not all in by the drain timeout after the phase's end.
var ErrStalled = errors.New("bench: server stopped answering")

// DefaultDrainTimeout bounds how long a connection waits for its
// outstanding replies after the measured interval ends.
const DefaultDrainTimeout = 30 * time.Second

// Pipe is what a connection's writer and reader share.
type Pipe struct {
	inflight int
	// Fifo holds the outstanding requests in the order they were sent; one
	// more slot than the window for the closing request. Never full when
	// the writer sends: free slots bound what it sends.
	Fifo chan Pending
	// Free counts window slots the writer may use. The reader returns
	// slots once per read syscall rather than per reply, and wakes the
	// writer once, so requests leave in batches instead of one per write.
	Free atomic.Int64
	Wake chan struct{} // capacity 1
	// pingOut is set while a ping is unanswered; closeSent once
	// CloseSession has been queued.
	pingOut, CloseSent atomic.Bool
	// Writes and requests count the writer's syscalls and the requests
	// they carried; written by the writer only.
	writes, requests int64
}

func NewPipe(inflight int) *Pipe {
	p := &Pipe{inflight: inflight, Fifo: make(chan Pending, inflight+1), Wake: make(chan struct{}, 1)}
	p.Free.Store(int64(inflight))
	return p
}

// Release returns n slots to the writer.
func (p *Pipe) Release(n int64) {
	p.Free.Add(n)
	select {
	case p.Wake <- struct{}{}:
	default:
	}
}

// Run drives the connection until the window ends or the budget is spent,
// waits for the outstanding replies, and ends the session. The writer keeps
// at most inflight requests outstanding and writes all that the window
// allows in one syscall; the reader matches replies to requests through a
// FIFO, since a ZooKeeper server answers a connection's requests in order.
// The socket is closed when run returns.
func (c *Conn) Run(ctx context.Context, src source, inflight int, w *Window) (ConnStats, error) {
	if inflight <= 1 && w.open == nil {
		return c.runSequential(ctx, src, w)
	}
	st := ConnStats{Hist: stats.NewHist()}
	if w.open != nil {
		st.intended = stats.NewHist()
	}
	p := NewPipe(max(inflight, 1))

	parent := ctx
	ctx, cancel, done := c.bound(ctx, w)
	defer done()

	readErr := make(chan error, 1)
	go func() {
		err := c.readLoop(p, w, &st)
		if err != nil {
			cancel()
		}
		readErr <- err
	}()
	var werr error
	if w.open != nil {
		werr = c.openWriteLoop(ctx, src, p, w)
	} else {
		werr = c.writeLoop(ctx, src, p, w)
	}
	if werr != nil {
		cancel()
	}
	rerr := <-readErr
	st.writes, st.requests = p.writes, p.requests
	switch {
	case rerr == nil && werr == nil:
		return st, nil
	case parent.Err() != nil:
		return st, parent.Err()
	case errors.Is(context.Cause(ctx), ErrStalled):
		return st, ErrStalled
	case werr != nil && !errors.Is(werr, context.Canceled):
		// The write failed first; the read failed because of it.
		return st, werr
	}
	return st, rerr
}

// bound returns ctx limited to the window's end plus the drain allowance:
// a server that stops answering must not hold the phase forever. When it
// ends the socket is closed, which is what interrupts a blocked read or
// write. done releases it all and closes the socket.
func (c *Conn) bound(ctx context.Context, w *Window) (_ context.Context, cancel, done func()) {
	ctx, cancel = context.WithDeadlineCause(ctx, w.End.Add(w.Drain), ErrStalled)
	stop := context.AfterFunc(ctx, func() { c.NetConn.Close() })
	return ctx, cancel, func() {
		c.NetConn.Close()
		stop()
		cancel()
	}
}

// keepAlive sends a ping if nothing was sent for a whole tick and no ping
// is outstanding, so an idle session stays alive. Pings bypass the window
// and are answered out of band (xid -2), as the Java client treats them.
func (c *Conn) keepAlive(e *wire.Encoder, p *Pipe, sentSinceTick bool) error {
	if sentSinceTick || !p.pingOut.CompareAndSwap(false, true) {
		return nil
	}
	e.Reset()
	appendPing(e)
	_, err := c.NetConn.Write(e.B)
	return err
}

// pingEvery is how often an idle connection pings: a third of its
// session timeout.
func (c *Conn) pingEvery() time.Duration {
	if d := c.Timeout / 3; d > 0 {
		return d
	}
	return time.Second
}

// sendBatch encodes n requests from src and sends them in one write, each
// queued on the pipe before the write so the reader always finds it.
// intended, if not nil, gives the j-th request's scheduled send time (open
// loop). batch is reused scratch space.
func (c *Conn) sendBatch(e *wire.Encoder, p *Pipe, src source, batch []Pending, n int, now time.Time,
	intended func(j int) time.Time) ([]Pending, error) {
	e.Reset()
	batch = batch[:0]
	for j := range n {
		xid := c.NextXid()
		src.Next(e, xid)
		q := Pending{Xid: xid, Sent: now}
		if intended != nil {
			q.intended = intended(j)
		}
		batch = append(batch, q)
	}
	for _, q := range batch {
		p.Fifo <- q
	}
	if _, err := c.NetConn.Write(e.B); err != nil {
		return batch, err
	}
	p.writes++
	p.requests += int64(n)
	return batch, nil
}

func (c *Conn) writeLoop(ctx context.Context, src source, p *Pipe, w *Window) error {
	var e wire.Encoder
	batch := make([]Pending, 0, p.inflight)
	ticker := time.NewTicker(c.pingEvery())
	defer ticker.Stop()
	sentSinceTick := false
	for {
		n := int(p.Free.Swap(0))
		if n == 0 {
			select {
			case <-p.Wake:
			case <-ctx.Done():
				return ctx.Err()
			case <-ticker.C:
				if err := c.keepAlive(&e, p, sentSinceTick); err != nil {
					return err
				}
				sentSinceTick = false
			}
			continue
		}
		now := time.Now()
		if !now.Before(w.End) {
			return c.SendClose(&e, p)
		}
		n, last := w.take(n)
		if n > 0 {
			var err error
			if batch, err = c.sendBatch(&e, p, src, batch, n, now, nil); err != nil {
				return err
			}
			sentSinceTick = true
		}
		if last {
			return c.SendClose(&e, p)
		}
	}
}

// SendClose sends closeSession behind the outstanding requests; its reply
// tells the reader that everything before it has been answered.
func (c *Conn) SendClose(e *wire.Encoder, p *Pipe) error {
	xid := c.NextXid()
	e.Reset()
	appendCloseSession(e, xid)
	p.Fifo <- Pending{Xid: xid, Close: true}
	p.CloseSent.Store(true)
	_, err := c.NetConn.Write(e.B)
	return err
}

func (c *Conn) readLoop(p *Pipe, w *Window, st *ConnStats) error {
	var hdr [4 + ReplyHeaderSize]byte
	var freed int64
	for {
		// About to block for more bytes: hand the answered slots back
		// first, so the writer refills the window in one write.
		if freed > 0 && c.Reader.Buffered() < len(hdr) {
			p.Release(freed)
			if w.replies != nil {
				w.replies.Add(freed)
			}
			freed = 0
		}
		h, err := c.readReplyHeader(&hdr)
		if err != nil {
			if p.CloseSent.Load() && len(p.Fifo) == 1 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
				// The server closed the connection on closeSession without
				// replying; every request was answered.
				return nil
			}
			return err
		}
		now := time.Now()
		switch h.Xid {
		case wire.XidPing:
			p.pingOut.Store(false)
			continue
		case wire.XidNotification:
			continue
		}
		var q Pending
		select {
		case q = <-p.Fifo:
		default:
			return fmt.Errorf("%w: xid %d", ErrUnexpectedReply, h.Xid)
		}
		if q.Xid != h.Xid {
			return errXid(h.Xid, q.Xid)
		}
		if q.Close {
			return nil
		}
		freed++
		if st.record(h, q.Sent, now, w) && st.intended != nil {
			st.intended.Record(now.Sub(q.intended))
		}
	}
}

// readReplyHeader reads one reply frame, keeping its header and
// discarding its body: the load generator needs only the xid and error.
func (c *Conn) readReplyHeader(hdr *[4 + ReplyHeaderSize]byte) (replyHeader, error) {
	if _, err := io.ReadFull(c.Reader, hdr[:]); err != nil {
		return replyHeader{}, err
	}
	n := int(int32(binary.BigEndian.Uint32(hdr[:4])))
	if n < ReplyHeaderSize || n > MaxReplyFrame {
		return replyHeader{}, fmt.Errorf("%w: length %d", ErrBadFrame, n)
	}
	if rest := n - ReplyHeaderSize; rest > 0 {
		if _, err := c.Reader.Discard(rest); err != nil {
			return replyHeader{}, err
		}
	}
	return DecodeReplyHeader(hdr[4:]), nil
}

func errXid(got, want int32) error {
	return fmt.Errorf("%w: got %d, want %d", ErrXidMismatch, got, want)
}

// record counts the reply h to a request sent at sent that arrived at now,
// and reports whether it was a measured success (its latency recorded).
func (st *ConnStats) record(h replyHeader, sent, now time.Time, w *Window) bool {
	st.total++
	if h.Err != 0 {
		st.totalErrs++
	}
	if now.Before(w.Start) || !now.Before(w.End) {
		return false
	}
	if h.Err != 0 {
		if st.Errs == 0 {
			st.FirstErr = h.Err
		}
		st.Errs++
		return false
	}
	st.Ops++
	st.Hist.Record(now.Sub(sent))
	return true
}
