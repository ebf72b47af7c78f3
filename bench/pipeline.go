package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/wire"
)

// window is what the workers of one phase share: replies that arrive in
// [start, end) are measured, no request is issued at or after end, and
// budget, if not nil, bounds the number of requests issued by all workers
// together.
type window struct {
	start, end time.Time
	budget     *atomic.Int64
	// drain is how long after end the replies may take.
	drain time.Duration
}

// take grants up to n requests from the budget.
func (w *window) take(n int) (granted int, last bool) {
	if w.budget == nil {
		return n, false
	}
	left := w.budget.Add(-int64(n))
	if left >= 0 {
		return n, left == 0
	}
	before := left + int64(n)
	if before <= 0 {
		return 0, true
	}
	return int(before), true
}

// connStats is what one connection's reader saw.
type connStats struct {
	hist      *Hist
	ops       int64 // measured successful replies
	errs      int64 // measured error replies
	firstErr  int32 // first measured error code
	total     int64 // every request reply, warm-up and drain included
	totalErrs int64
}

type pending struct {
	xid   int32
	sent  time.Time
	close bool
}

// ErrStalled ends a connection whose server stopped answering: its
// replies were not all in by the drain timeout after the phase's end.
var ErrStalled = errors.New("bench: server stopped answering")

// DefaultDrainTimeout bounds how long a connection waits for its
// outstanding replies after the measured interval ends.
const DefaultDrainTimeout = 30 * time.Second

// run drives the connection until the window ends or the budget is spent,
// waits for the outstanding replies, and ends the session. The writer keeps
// at most inflight requests outstanding and writes whatever the window
// allows in one syscall; the reader matches replies to requests through a
// FIFO, since a ZooKeeper server answers a connection's requests in order.
// The socket is closed when run returns.
func (c *conn) run(ctx context.Context, src source, inflight int, w *window) (connStats, error) {
	st := connStats{hist: NewHist()}
	if inflight < 1 {
		inflight = 1
	}
	tokens := make(chan struct{}, inflight)
	for range inflight {
		tokens <- struct{}{}
	}
	// One more slot than the window for the closing request.
	fifo := make(chan pending, inflight+1)
	var pingOut, closeSent atomic.Bool

	parent := ctx
	// A server that stops answering must not hold the phase forever: past
	// the end of the window plus the drain allowance the socket is closed.
	ctx, cancel := context.WithDeadlineCause(ctx, w.end.Add(w.drain), ErrStalled)
	defer cancel()
	// Closing the socket is what interrupts a blocked read or write.
	stop := context.AfterFunc(ctx, func() { c.nc.Close() })
	defer stop()
	defer c.nc.Close()

	readErr := make(chan error, 1)
	go func() {
		err := c.readLoop(fifo, tokens, &pingOut, &closeSent, w, &st)
		if err != nil {
			cancel()
		}
		readErr <- err
	}()
	werr := c.writeLoop(ctx, src, inflight, tokens, fifo, &pingOut, &closeSent, w)
	if werr != nil {
		cancel()
	}
	rerr := <-readErr
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

func (c *conn) writeLoop(ctx context.Context, src source, inflight int, tokens chan struct{}, fifo chan pending,
	pingOut, closeSent *atomic.Bool, w *window) error {
	var e wire.Encoder
	batch := make([]pending, 0, inflight)
	pingEvery := c.timeout / 3
	if pingEvery <= 0 {
		pingEvery = time.Second
	}
	ticker := time.NewTicker(pingEvery)
	defer ticker.Stop()
	sentSinceTick := false
	for {
		select {
		case <-tokens:
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
			// Idle for a whole tick: keep the session alive. Pings bypass
			// the window and are answered out of band (xid -2), as the Java
			// client treats them.
			if !sentSinceTick && pingOut.CompareAndSwap(false, true) {
				e.Reset()
				appendPing(&e)
				if _, err := c.nc.Write(e.B); err != nil {
					return err
				}
			}
			sentSinceTick = false
			continue
		}
		n := 1
	more:
		for n < inflight {
			select {
			case <-tokens:
				n++
			default:
				break more
			}
		}
		now := time.Now()
		if !now.Before(w.end) {
			return c.sendClose(&e, fifo, closeSent)
		}
		n, last := w.take(n)
		if n > 0 {
			e.Reset()
			batch = batch[:0]
			for range n {
				xid := c.nextXid()
				src.next(&e, xid)
				batch = append(batch, pending{xid: xid, sent: now})
			}
			// Queued before the write so the reader always finds them.
			// Never blocks: at most inflight are outstanding.
			for _, p := range batch {
				fifo <- p
			}
			if _, err := c.nc.Write(e.B); err != nil {
				return err
			}
			sentSinceTick = true
		}
		if last {
			return c.sendClose(&e, fifo, closeSent)
		}
	}
}

// sendClose sends closeSession behind the outstanding requests; its reply
// tells the reader that everything before it has been answered.
func (c *conn) sendClose(e *wire.Encoder, fifo chan pending, closeSent *atomic.Bool) error {
	xid := c.nextXid()
	e.Reset()
	appendCloseSession(e, xid)
	fifo <- pending{xid: xid, close: true}
	closeSent.Store(true)
	_, err := c.nc.Write(e.B)
	return err
}

func (c *conn) readLoop(fifo chan pending, tokens chan struct{}, pingOut, closeSent *atomic.Bool,
	w *window, st *connStats) error {
	var hdr [4 + replyHeaderSize]byte
	for {
		if _, err := io.ReadFull(c.br, hdr[:]); err != nil {
			if closeSent.Load() && len(fifo) == 1 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
				// The server closed the connection on closeSession without
				// replying; every request was answered.
				return nil
			}
			return err
		}
		n := int(int32(binary.BigEndian.Uint32(hdr[:4])))
		if n < replyHeaderSize || n > maxReplyFrame {
			return fmt.Errorf("%w: length %d", ErrBadFrame, n)
		}
		if rest := n - replyHeaderSize; rest > 0 {
			if _, err := c.br.Discard(rest); err != nil {
				return err
			}
		}
		now := time.Now()
		h := decodeReplyHeader(hdr[4:])
		switch h.Xid {
		case wire.XidPing:
			pingOut.Store(false)
			continue
		case wire.XidNotification:
			continue
		}
		var p pending
		select {
		case p = <-fifo:
		default:
			return fmt.Errorf("%w: xid %d", ErrUnexpectedReply, h.Xid)
		}
		if p.xid != h.Xid {
			return fmt.Errorf("%w: got %d, want %d", ErrXidMismatch, h.Xid, p.xid)
		}
		if p.close {
			return nil
		}
		tokens <- struct{}{}
		st.total++
		if h.Err != 0 {
			st.totalErrs++
		}
		if now.Before(w.start) || !now.Before(w.end) {
			continue
		}
		if h.Err != 0 {
			if st.errs == 0 {
				st.firstErr = h.Err
			}
			st.errs++
			continue
		}
		st.ops++
		st.hist.Record(now.Sub(p.sent))
	}
}
