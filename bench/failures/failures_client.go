package failures

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/wire"
)

// tlClient is one client of the failure experiment. It keeps inflight
// requests of its mixed source outstanding on one connection, counting
// every reply into the shared timeline. When the connection breaks (the
// server died or closed it, or sent nothing for the read timeout) it
// counts the requests in flight as lost and opens a session on the next
// server of its list, and the one after that, until one accepts; so a
// server dying mid-run costs errors, not the run. Like the paper's
// clients it moves only when its connection breaks: a restarted server
// gets clients back only from other failures.
//
// A new session is opened rather than the old one resumed: the experiment
// counts requests, and a resumed session would be refused by a server
// behind the client's last zxid, which a fresh one never is. The old
// session expires on the servers after its timeout.
type tlClient struct {
	addrs    []string
	cur      int // index into addrs of the server to try first
	src      *load.MixedSource
	inflight int
	// Timeout is the session timeout asked for.
	timeout time.Duration
	tl      *timeline
	// End is when the client stops issuing requests and closes its
	// session.
	end time.Time
	log bench.LogFunc

	// Written by run; read after it returns.
	sessions     int // sessions opened
	reconnects   int // sessions opened after a lost connection
	connectFails int // connection or handshake attempts that failed
	lastErr      error
}

// Reconnection pacing. A client that finds no server taking sessions
// waits before the next round over its list, starting at failWriter's
// ReconnectPause and doubling to maxReconnectPause, each wait drawn from
// its upper half: tens of clients retrying every few milliseconds would
// take the CPU an election needs on a small machine, while the Java
// client's up-to-a-second back-off would measure the client more than the
// servers.
const maxReconnectPause = 200 * time.Millisecond

// minConnectTimeout bounds the time a connection attempt gets from below;
// like the Java client an attempt gets the session timeout divided by the
// number of servers.
const minConnectTimeout = 500 * time.Millisecond

// closeDrain bounds the wait for the replies still outstanding when the
// client stops.
const closeDrain = 5 * time.Second

// Run drives the client until end or ctx ends.
func (cl *tlClient) run(ctx context.Context) {
	pause := bench.ReconnectPause
	for ctx.Err() == nil && time.Now().Before(cl.end) {
		c, i := cl.connectRound(ctx)
		if c == nil {
			// Jittered, so that clients that lost their servers together
			// do not retry in lockstep.
			cl.sleep(ctx, pause/2+time.Duration(cl.src.Rng.Int64N(int64(pause/2)+1)))
			pause = min(2*pause, maxReconnectPause)
			continue
		}
		pause = bench.ReconnectPause
		cl.cur = i
		if cl.sessions > 0 {
			cl.reconnects++
			cl.tl.Add(SeriesReconnects, time.Now(), 1)
			cl.log("client reconnected", "server", cl.addrs[i])
		}
		cl.sessions++
		err := cl.serve(ctx, c)
		if err == nil {
			return
		}
		cl.lastErr = err
		if ctx.Err() != nil {
			return
		}
		cl.log("client lost its connection", "server", cl.addrs[i], "err", err)
		cl.cur = (i + 1) % len(cl.addrs)
	}
}

// Sleep waits for d, or until ctx or the client's time ends.
func (cl *tlClient) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(min(d, max(time.Until(cl.end), 0)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// connectRound tries every server once, from cl.cur on, and returns the
// first session made and the server's index, or nil.
func (cl *tlClient) connectRound(ctx context.Context) (*load.Conn, int) {
	n := len(cl.addrs)
	timeout := max(cl.timeout/time.Duration(n), minConnectTimeout)
	for k := range n {
		if ctx.Err() != nil || !time.Now().Before(cl.end) {
			return nil, 0
		}
		i := (cl.cur + k) % n
		dctx, cancel := context.WithTimeout(ctx, timeout)
		c, err := load.Dial(dctx, cl.addrs[i], cl.timeout)
		cancel()
		if err == nil {
			return c, i
		}
		cl.connectFails++
		cl.lastErr = err
	}
	return nil, 0
}

// serve pipelines requests on c until the client's end (nil: the session
// was closed after its replies) or until the connection breaks (the
// error). It closes the socket.
func (cl *tlClient) serve(ctx context.Context, c *load.Conn) error {
	defer c.NetConn.Close()
	stop := context.AfterFunc(ctx, func() { c.NetConn.Close() })
	defer stop()
	readTimeout := c.Timeout * 2 / 3
	if readTimeout <= 0 {
		readTimeout = cl.timeout * 2 / 3
	}
	p := load.NewPipe(max(cl.inflight, 1))
	// kinds says, in the order the requests were sent, whether each was a
	// read; the reader takes one per reply beside the pipe's FIFO.
	kinds := make(chan bool, cap(p.Fifo))
	var rerr error
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		rerr = cl.readLoop(c, p, kinds, readTimeout)
		if rerr != nil {
			// Unblock a writer stuck on a full socket.
			c.NetConn.Close()
		}
	}()
	werr := cl.writeLoop(ctx, c, p, kinds, readDone)
	if werr != nil && werr != errReaderDone {
		c.NetConn.Close()
	}
	t := time.NewTimer(closeDrain)
	stalled := false
	select {
	case <-readDone:
	case <-t.C:
		stalled = true
		c.NetConn.Close()
		<-readDone
	}
	t.Stop()
	err := werr
	switch {
	case err == errReaderDone:
		err = rerr
	case stalled:
		err = load.ErrStalled
	case err == nil:
		err = rerr
	}
	if err != nil {
		// The requests still queued never got a reply.
		var lost int64
		for len(p.Fifo) > 0 {
			if q := <-p.Fifo; !q.Close {
				lost++
			}
		}
		cl.tl.Add(SeriesLost, time.Now(), lost)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return err
}

// errReaderDone ends the writer when the reader has returned first.
var errReaderDone = errors.New("bench: reader done")

// writeLoop fills the window whenever the reader hands slots back, and at
// the client's end sends closeSession behind the outstanding requests.
// It returns nil after the closeSession was written, errReaderDone if the
// reader stopped first, or the write's error.
func (cl *tlClient) writeLoop(ctx context.Context, c *load.Conn, p *load.Pipe, kinds chan<- bool, readDone <-chan struct{}) error {
	var e wire.Encoder
	endTimer := time.NewTimer(time.Until(cl.end))
	defer endTimer.Stop()
	for {
		n := int(p.Free.Swap(0))
		if n == 0 {
			select {
			case <-p.Wake:
			case <-endTimer.C:
				return c.SendClose(&e, p)
			case <-ctx.Done():
				return ctx.Err()
			case <-readDone:
				return errReaderDone
			}
			continue
		}
		now := time.Now()
		if !now.Before(cl.end) {
			return c.SendClose(&e, p)
		}
		e.Reset()
		for range n {
			xid := c.NextXid()
			read := cl.src.NextOp(&e, xid)
			// Queued before the write so the reader always finds them.
			p.Fifo <- load.Pending{Xid: xid, Sent: now}
			kinds <- read
		}
		if _, err := c.NetConn.Write(e.B); err != nil {
			return err
		}
	}
}

// readLoop matches replies to requests in order and counts them into the
// timeline: successful reads and writes, and error replies. It returns nil
// when closeSession has been answered (or the server closed the
// connection after it), and an error when the connection broke or nothing
// arrived for readTimeout.
func (cl *tlClient) readLoop(c *load.Conn, p *load.Pipe, kinds <-chan bool, readTimeout time.Duration) error {
	var hdr [4 + load.ReplyHeaderSize]byte
	var freed int64
	deadlineSet := time.Time{}
	for {
		if freed > 0 && c.Reader.Buffered() < len(hdr) {
			p.Release(freed)
			freed = 0
		}
		// Moving the deadline costs a timer update; once per quarter of
		// the timeout is enough to catch a server that stopped answering.
		if now := time.Now(); now.Sub(deadlineSet) > readTimeout/4 {
			c.NetConn.SetReadDeadline(now.Add(readTimeout))
			deadlineSet = now
		}
		if _, err := io.ReadFull(c.Reader, hdr[:]); err != nil {
			if p.CloseSent.Load() && len(p.Fifo) == 1 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
				// Closed on closeSession without a reply: all answered.
				return nil
			}
			return err
		}
		n := int(int32(binary.BigEndian.Uint32(hdr[:4])))
		if n < load.ReplyHeaderSize || n > load.MaxReplyFrame {
			return fmt.Errorf("%w: length %d", load.ErrBadFrame, n)
		}
		if rest := n - load.ReplyHeaderSize; rest > 0 {
			if _, err := c.Reader.Discard(rest); err != nil {
				return err
			}
		}
		now := time.Now()
		h := load.DecodeReplyHeader(hdr[4:])
		if h.Xid == wire.XidPing || h.Xid == wire.XidNotification {
			continue
		}
		var q load.Pending
		select {
		case q = <-p.Fifo:
		default:
			return fmt.Errorf("%w: xid %d", load.ErrUnexpectedReply, h.Xid)
		}
		if q.Xid != h.Xid {
			return fmt.Errorf("%w: got %d, want %d", load.ErrXidMismatch, h.Xid, q.Xid)
		}
		if q.Close {
			return nil
		}
		read := <-kinds
		freed++
		switch {
		case h.Err != 0:
			cl.tl.Add(seriesErrors, now, 1)
		case read:
			cl.tl.Add(SeriesReads, now, 1)
		default:
			cl.tl.Add(SeriesWrites, now, 1)
		}
	}
}
