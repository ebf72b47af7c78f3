package client

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/corral-db/corral/wire"
)

// link is one TCP connection of the session: a writer goroutine that
// batches every queued request into one write, a reader goroutine that
// matches replies to the FIFO of sent requests, and the counters the
// session goroutine uses for heartbeats and failure detection.
type link struct {
	c    *Conn
	nc   net.Conn
	addr string

	sent fifo // every sent request that expects a reply, in send order
	// oob holds the sent requests ZooKeeper answers as soon as it reads
	// them, ahead of earlier replies: auth (answered with xid -4) and SASL
	// (answered with its own xid). See outOfBand.
	oob fifo

	stop       chan struct{} // closed to stop the writer
	readerDone chan struct{}
	writerDone chan struct{}

	ping    atomic.Bool   // the writer should send a ping
	recvSeq atomic.Uint64 // frames received
	sendSeq atomic.Uint64 // writes made
	// stalled: the reader is blocked handing an event to a full Watcher
	// channel, so silence is the consumer's doing, not the server's.
	stalled atomic.Bool

	failOnce sync.Once
	err      error // why the connection ended
}

func newLink(c *Conn, nc net.Conn, addr string) *link {
	return &link{
		c:          c,
		nc:         nc,
		addr:       addr,
		stop:       make(chan struct{}),
		readerDone: make(chan struct{}),
		writerDone: make(chan struct{}),
	}
}

// fail records why the connection ends and closes the socket, which stops
// the reader (and a writer blocked in Write).
func (l *link) fail(err error) {
	l.failOnce.Do(func() {
		l.err = err
		l.nc.Close()
	})
}

func (l *link) start() {
	go l.readLoop()
	go l.writeLoop()
}

// shutdown stops both goroutines and waits for them.
func (l *link) shutdown(err error) {
	l.fail(err)
	close(l.stop)
	<-l.readerDone
	<-l.writerDone
}

// writeLoop sends queued requests. Each wake-up takes the whole queue and
// writes it with one Write call: while one write is in progress, the
// calls made meanwhile pile up and go out together in the next.
func (l *link) writeLoop() {
	defer close(l.writerDone)
	c := l.c
	enc := wire.Encoder{B: make([]byte, 0, 64<<10)}
	var spare []*request
	for {
		batch := c.takeQueue(spare)
		ping := l.ping.Swap(false)
		if len(batch) == 0 && !ping {
			spare = batch
			select {
			case <-c.wake:
				continue
			case <-l.stop:
				return
			}
		}
		enc.B = enc.B[:0]
		n, closing := 0, false
		for i, r := range batch {
			if r.state.Load() == reqAbandoned {
				c.finish(r, errAbandoned) // never sent: just release its slot
				continue
			}
			xid := wire.XidAuth
			if r.op != wire.OpAuth {
				xid = c.nextXid()
			}
			r.xid = xid
			start := enc.BeginFrame()
			h := wire.RequestHeader{Xid: xid, Type: r.op}
			h.Encode(&enc)
			if r.body != nil {
				r.body.Encode(&enc)
			}
			enc.EndFrame(start)
			batch[n] = r
			n++
			if r.op == wire.OpCloseSession {
				// Nothing may follow closeSession on this connection; the
				// rest fail with ErrClosed when the Conn shuts down.
				c.requeueFront(append([]*request(nil), batch[i+1:]...))
				closing = true
				break
			}
		}
		if ping && !closing {
			start := enc.BeginFrame()
			h := wire.RequestHeader{Xid: wire.XidPing, Type: wire.OpPing}
			h.Encode(&enc)
			enc.EndFrame(start)
		}
		// Register before writing, so a reply always finds its request.
		sent := batch[:n]
		l.sent.push(sent)
		for _, r := range sent {
			if outOfBand(r.op) {
				l.oob.push1(r)
			}
		}
		clear(batch)
		spare = batch[:0]
		if len(enc.B) > 0 {
			if _, err := l.nc.Write(enc.B); err != nil {
				l.fail(fmt.Errorf("write: %w", err))
				return
			}
			l.sendSeq.Add(1)
		}
		if cap(enc.B) > 1<<20 {
			enc.B = make([]byte, 0, 64<<10) // let a one-off large batch go
		}
		if closing {
			return
		}
	}
}

// errAbandoned completes a request whose waiter gave up before it was
// sent; nobody sees it.
var errAbandoned = errors.New("zk: request abandoned")

// nextXid returns the next ordinary xid: 1, 2, ... wrapping back to 1 as
// Java does. Only the current writer calls it.
func (c *Conn) nextXid() int32 {
	x := c.xid
	c.xid++
	if c.xid <= 0 {
		c.xid = 1
	}
	return x
}

// readLoop reads frames until the connection fails, dispatching
// notifications, auth replies and ordinary replies in arrival order.
func (l *link) readLoop() {
	defer close(l.readerDone)
	c := l.c
	fr := wire.NewFrameReader(bufio.NewReaderSize(l.nc, 64<<10), c.cfg.maxBuffer)
	d := wire.Decoder{Max: c.cfg.maxBuffer}
	for {
		p, err := fr.ReadFrame()
		if err != nil {
			if errors.Is(err, wire.ErrFrameTooLarge) {
				c.log.Warn("zk: frame from server exceeds MaxBufferSize; dropping connection",
					"server", l.addr, "max", c.cfg.maxBuffer, "err", err)
			}
			l.fail(fmt.Errorf("read: %w", err))
			return
		}
		l.recvSeq.Add(1)
		d.Reset(p)
		var h wire.ReplyHeader
		if h.Decode(&d) != nil {
			l.fail(fmt.Errorf("short reply header: %w", errProtocol))
			return
		}
		switch h.Xid {
		case wire.XidNotification:
			err = l.notification(&d, h.Zxid)
		case wire.XidPing:
		case wire.XidAuth:
			err = l.oobReply(&d, &h)
		default:
			if o := l.oob.peek(); o != nil && o.op == wire.OpSASL && o.xid == h.Xid {
				err = l.oobReply(&d, &h)
			} else {
				err = l.reply(&d, &h)
			}
		}
		if err != nil {
			l.fail(err)
			return
		}
	}
}

// reply completes the oldest sent request with an ordinary reply.
func (l *link) reply(d *wire.Decoder, h *wire.ReplyHeader) error {
	c := l.c
	r := l.sent.peek()
	for r != nil && outOfBand(r.op) {
		// An auth or SASL request ahead of this reply: ZooKeeper answers
		// those as soon as it reads them, so their replies normally came
		// first.
		l.sent.pop()
		if r.answered {
			c.finish(r, r.err)
		} else {
			r.held = true // the server answered a later request first
		}
		r = l.sent.peek()
	}
	if r == nil || r.xid != h.Xid {
		want := "none"
		if r != nil {
			want = fmt.Sprint(r.xid)
		}
		return fmt.Errorf("reply xid %d, expected %s: %w", h.Xid, want, errProtocol)
	}
	l.sent.pop()
	if h.Zxid > 0 {
		c.observeZxid(h.Zxid)
	}
	r.replied = true
	var err error
	if h.Err != wire.CodeOK {
		err = h.Err
	} else if r.reply != nil {
		if derr := r.reply.Decode(d); derr != nil {
			c.finish(r, fmt.Errorf("zk: decoding reply to op %d: %w", r.op, wire.CodeMarshallingError))
			return fmt.Errorf("reply to op %d: %v: %w", r.op, derr, errProtocol)
		}
	}
	c.finish(r, err)
	l.finishAnswered()
	return nil
}

// outOfBand reports whether ZooKeeper answers op as soon as it reads it
// rather than in request order: auth and SASL bypass its request
// pipeline.
func outOfBand(op wire.Op) bool { return op == wire.OpAuth || op == wire.OpSASL }

// oobReply records the outcome of the oldest unanswered out-of-band
// request. It completes at once if everything sent before it has
// completed; otherwise it completes when the replies before it have
// arrived, so completions stay in call order even though the server
// answered out of order.
func (l *link) oobReply(d *wire.Decoder, h *wire.ReplyHeader) error {
	r := l.oob.peek()
	if r == nil || (h.Xid == wire.XidAuth) != (r.op == wire.OpAuth) {
		return fmt.Errorf("out-of-band reply xid %d matches no request: %w", h.Xid, errProtocol)
	}
	l.oob.pop()
	if h.Zxid > 0 {
		l.c.observeZxid(h.Zxid)
	}
	r.answered, r.replied = true, true
	r.err = codeErr(h.Err)
	if r.err == nil && r.reply != nil {
		if err := r.reply.Decode(d); err != nil {
			r.err = fmt.Errorf("zk: decoding reply to op %d: %w", r.op, wire.CodeMarshallingError)
		}
	}
	if r.held {
		l.c.finish(r, r.err)
	} else {
		l.finishAnswered()
	}
	if h.Err == wire.CodeAuthFailed {
		// ZooKeeper closes the connection after refusing a credential.
		l.c.log.Warn("zk: server refused authentication", "server", l.addr)
	}
	return nil
}

// finishAnswered completes answered out-of-band requests that reached
// the head of the FIFO.
func (l *link) finishAnswered() {
	for r := l.sent.peek(); r != nil && outOfBand(r.op) && r.answered; r = l.sent.peek() {
		l.sent.pop()
		l.c.finish(r, r.err)
	}
}

// notification dispatches a watch event.
func (l *link) notification(d *wire.Decoder, zxid int64) error {
	var ev wire.WatcherEvent
	if err := ev.Decode(d); err != nil {
		return fmt.Errorf("notification: %v: %w", err, errProtocol)
	}
	l.c.watches.trigger(l.c, ev, zxid, l)
	return nil
}

// failPending fails what the dead connection left unanswered, in the order
// it was sent. An out-of-band request whose answer arrived but whose turn
// had not come completes with that answer (an auth did succeed on the
// server).
func (l *link) failPending(err error) {
	for _, r := range l.sent.drain() {
		if outOfBand(r.op) && r.answered {
			l.c.finish(r, r.err)
			continue
		}
		l.c.finish(r, err)
	}
	for _, r := range l.oob.drain() {
		if r.held {
			l.c.finish(r, err)
		}
	}
}
