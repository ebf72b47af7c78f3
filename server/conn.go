package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corral-db/corral/internal/probe"
	"github.com/corral-db/corral/wire"
)

// conn is one client connection. Its reader goroutine decodes frames and
// either answers them (reads, when nothing of this connection is in
// flight) or queues them; its writer goroutine flushes out.
type conn struct {
	s      *Server
	nc     net.Conn
	id     uint64
	remote string // ip:port
	ip     string
	out    *outbuf

	// sess is set once the handshake completes.
	sess atomic.Pointer[session]
	// readOnlyByte: the client sent the optional readOnly byte.
	readOnlyByte bool
	timeout      int32
	// auth is the connection's identities, replaced wholesale (copy on
	// write) so readers on other goroutines see a consistent list.
	auth atomic.Pointer[[]wire.Id]

	// mu guards queue: this connection's requests that have not been
	// answered yet, in arrival order. Replies leave strictly in this
	// order (PROTOCOL §4).
	mu    sync.Mutex
	queue []*request
	// writes counts the writes in queue.
	writes int

	closed atomic.Bool
	stats  connStats
	// raw is nc's file descriptor access, for tryWrite; nil if nc has
	// none (then replies always go through the writer goroutine).
	raw syscall.RawConn
	// rw is tryWrite's, reused from one reply to the next.
	rw rawWrite

	// batch holds writes the reader decoded and queued but has not yet
	// handed to the server, while more frames wait in its read buffer:
	// they go to prep together (Server.submitBatch), one prepMu
	// acquisition for the lot. Only the reader goroutine touches it.
	batch []*request
}

// maxConnBatch bounds the writes one connection hands to prep at once.
const maxConnBatch = 64

// connStats feeds the cons and stat four-letter words.
type connStats struct {
	received    atomic.Int64
	sent        atomic.Int64
	established atomic.Int64 // epoch ms
	mu          sync.Mutex
	lastOp      string
	lastCxid    int64
	lastZxid    int64
	lastResp    int64
	lastLat     int64
	minLat      int64
	maxLat      int64
	totalLat    int64
	count       int64
}

func (st *connStats) record(op string, cxid int32, zxid int64, lat time.Duration, nowMono int64) {
	ms := lat.Milliseconds()
	st.mu.Lock()
	st.lastOp = op
	if cxid >= 0 {
		st.lastCxid = int64(cxid)
	}
	st.lastZxid = zxid
	st.lastResp = nowMono
	st.lastLat = ms
	if st.count == 0 || ms < st.minLat {
		st.minLat = ms
	}
	if ms > st.maxLat {
		st.maxLat = ms
	}
	st.totalLat += ms
	st.count++
	st.mu.Unlock()
}

func (st *connStats) reset() {
	st.mu.Lock()
	st.lastLat, st.minLat, st.maxLat, st.totalLat, st.count = 0, 0, 0, 0, 0
	st.mu.Unlock()
	st.received.Store(0)
	st.sent.Store(0)
}

func (c *conn) sessionID() int64 {
	if s := c.sess.Load(); s != nil {
		return s.id
	}
	return 0
}

func (c *conn) authIDs() []wire.Id {
	if p := c.auth.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *conn) addAuth(id wire.Id) {
	old := c.authIDs()
	for _, o := range old {
		if o == id {
			return
		}
	}
	ids := make([]wire.Id, len(old), len(old)+1)
	copy(ids, old)
	ids = append(ids, id)
	c.auth.Store(&ids)
}

// close tears the connection down at once; the reader and writer exit.
func (c *conn) close(reason error) {
	if c.closed.Swap(true) {
		return
	}
	c.out.close(reason)
	c.nc.Close()
}

// errBadFrame is the reason logged when a client sends a frame that is
// negative or larger than jute.maxbuffer.
var errBadFrame = errors.New("frame length out of range")

// serve runs the connection until it closes. It owns the reader side; the
// writer runs in its own goroutine.
func (c *conn) serve(ctx context.Context) {
	s := c.s
	defer s.connClosed(c)
	var writerDone = make(chan struct{})
	go func() {
		defer close(writerDone)
		err := c.out.run(c.nc, c.onWrite)
		if err != nil && !errors.Is(err, net.ErrClosed) && !c.closed.Load() {
			s.log.Debug("connection write ended", "remote", c.remote, "err", err)
		}
		c.close(err)
	}()
	defer func() {
		// Let the writer flush what is queued (a closeSession or
		// AuthFailed reply, an expired-session response), but do not wait
		// on a client that stopped reading.
		c.out.finish()
		select {
		case <-writerDone:
		case <-time.After(2 * time.Second):
		}
		c.close(nil)
		<-writerDone
	}()
	stop := context.AfterFunc(ctx, func() { c.close(context.Canceled) })
	defer stop()

	br := bufio.NewReaderSize(c.nc, 64<<10)
	var lenBuf [4]byte
	if _, err := io.ReadFull(br, lenBuf[:]); err != nil {
		return
	}
	n := int32(binary.BigEndian.Uint32(lenBuf[:]))
	if word, ok := wire.FourLetterWord(n); ok {
		s.fourLetterWord(c, word)
		return
	}
	var frame []byte
	var err error
	if frame, err = c.readBody(br, n, frame); err != nil {
		c.logDrop(err)
		return
	}
	if !c.handshake(frame) {
		return
	}
	// Writes batched behind a frame that turns out bad are still
	// submitted, as they were before it was read.
	defer c.flushWrites()
	for {
		if _, err := io.ReadFull(br, lenBuf[:]); err != nil {
			if !errors.Is(err, io.EOF) && !c.closed.Load() {
				c.logDrop(err)
			}
			return
		}
		n := int32(binary.BigEndian.Uint32(lenBuf[:]))
		if frame, err = c.readBody(br, n, frame); err != nil {
			c.logDrop(err)
			return
		}
		c.stats.received.Add(1)
		s.stats.received.Add(1)
		if !c.handleFrame(frame, frameBuffered(br)) {
			return
		}
		if c.aliasFrame(frame) {
			frame = nil // the request's data are slices of it
		}
	}
}

// frameBuffered reports whether br already holds a whole frame, so that
// reading it will not block.
func frameBuffered(br *bufio.Reader) bool {
	if br.Buffered() < 4 {
		return false
	}
	b, _ := br.Peek(4)
	n := int32(binary.BigEndian.Uint32(b))
	return n >= 0 && int(n) <= br.Buffered()-4
}

// onWrite counts frames written to the client.
func (c *conn) onWrite(frames int) {
	c.stats.sent.Add(int64(frames))
	c.s.stats.sent.Add(int64(frames))
}

func (c *conn) logDrop(err error) {
	if c.closed.Load() {
		return
	}
	c.s.log.Info("closing client connection", "remote", c.remote, "session", hex(c.sessionID()), "reason", err)
}

// readBody reads a frame of n bytes into buf (reused when large enough).
func (c *conn) readBody(br *bufio.Reader, n int32, buf []byte) ([]byte, error) {
	if n < 0 || int(n) > c.s.opts.MaxBuffer {
		return buf, fmt.Errorf("%w: %d (jute.maxbuffer %d)", errBadFrame, n, c.s.opts.MaxBuffer)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n, max(int(n), 4096))
	}
	buf = buf[:n]
	_, err := io.ReadFull(br, buf)
	return buf, err
}

// aliasFrameMin is the frame size from which a request's data (a
// create's or setData's payload) are decoded as slices of the frame
// instead of copies; the reader then does not reuse that frame. Below
// it a copy costs less than a frame allocated for each request.
const aliasFrameMin = 16 << 10

// aliasFrame says whether frame's request data are decoded as slices of
// it. Only where the proposal copies them (txn.AppendShared: a member of
// an ensemble, a diskless server), after which nothing keeps the frame;
// a standalone server's tree keeps the request's own data, and a small
// node must not keep a large frame alive.
func (c *conn) aliasFrame(frame []byte) bool {
	return len(frame) >= aliasFrameMin && c.s.rep != nil && !c.s.rep.pooled
}

// handleFrame decodes and dispatches one request frame. It returns false
// when the connection must stop reading. A frame of aliasFrameMin bytes
// or more is the request's from then on.
func (c *conn) handleFrame(frame []byte, more bool) bool {
	s := c.s
	d := wire.Decoder{B: frame, Max: s.opts.MaxBuffer, Alias: c.aliasFrame(frame)}
	var h wire.RequestHeader
	if err := h.Decode(&d); err != nil {
		c.logDrop(fmt.Errorf("bad request header: %w", err))
		return false
	}
	sess := c.sess.Load()
	s.sessions.touch(sess)
	r := &request{c: c, xid: h.Xid, op: h.Type, sid: sess.id, recv: time.Now()}
	rec, err := wire.DecodeRequest(h.Type, &d)
	write := err == nil && (isWrite(h.Type) || h.Type == wire.OpSync)
	if !write && !c.flushWrites() {
		// Everything before this request goes to the server first.
		return false
	}
	switch {
	case errors.Is(err, wire.ErrUnknownOp), h.Type == wire.OpCheck:
		// ZooKeeper answers -6 and then drops the connection (its
		// UnimplementedRequestProcessor closes it); the session lives on.
		// A check outside a multi gets the same treatment there
		// (observed on 3.9.3).
		r.kind = kindUnknown
		c.submitRead(r)
		return false
	case err != nil:
		// A body that does not decode is answered with a marshalling
		// error; the connection stays up, as in ZooKeeper.
		r.kind = kindBadBody
		return c.submitRead(r)
	}
	r.rec = rec
	switch h.Type {
	case wire.OpAuth:
		return c.handleAuth(r)
	case wire.OpSASL:
		// Without a JAAS configuration ZooKeeper has no SASL server and
		// answers every token with an empty (null) one.
		c.reply(r.xid, 0, wire.CodeOK, &wire.SetSASLResponse{})
		return true
	}
	if write {
		r.kind = kindWrite
		r.auth = c.authIDs()
		return c.submitWrite(r, more)
	}
	r.kind = kindRead
	return c.submitRead(r)
}

// submitRead answers a read at once if nothing of this connection is
// ahead of it, and otherwise queues it behind the pending writes.
func (c *conn) submitRead(r *request) bool {
	c.mu.Lock()
	if len(c.queue) == 0 {
		c.mu.Unlock()
		c.s.execRead(r)
		return !c.closed.Load()
	}
	c.mu.Unlock()
	if !c.s.acquire() {
		return false
	}
	r.slot = true
	c.mu.Lock()
	c.queue = append(c.queue, r)
	c.mu.Unlock()
	// The queue may have drained while we waited for a slot.
	c.drain(false)
	return !c.closed.Load()
}

// submitWrite queues a write on the connection and hands it to the
// server, together with the writes batched before it, unless more
// frames are already buffered (more) and the batch has room: then it
// waits for them, so that a client with many writes in flight costs prep
// one lock acquisition per read instead of one per write.
func (c *conn) submitWrite(r *request, more bool) bool {
	probe.Mark("c-write-rx", 0)
	if !c.s.tryAcquire() {
		// The pipeline is full: what this connection holds back must
		// move before it waits for a slot, or every reader could wait
		// for slots held by batches that are never submitted.
		if !c.flushWrites() || !c.s.acquire() {
			return false
		}
	}
	r.slot = true
	c.mu.Lock()
	c.queue = append(c.queue, r)
	c.writes++
	c.mu.Unlock()
	c.batch = append(c.batch, r)
	if more && len(c.batch) < maxConnBatch {
		return true
	}
	return c.flushWrites()
}

// flushWrites hands the batched writes to the server. It reports false
// if the server is stopping or the connection closed.
func (c *conn) flushWrites() bool {
	if len(c.batch) == 0 {
		return !c.closed.Load()
	}
	ok := c.s.submitBatch(c.batch)
	clear(c.batch)
	c.batch = c.batch[:0]
	return ok && !c.closed.Load()
}

// drain answers, in order, every request at the head of the queue that
// can be answered: completed writes and the reads behind them. The apply
// goroutine calls it with locked set, holding the tree's write lock right
// after applying one of this connection's writes, so a read queued behind
// that write sees exactly the state after it and none of the connection's
// later writes (ZooKeeper's CommitProcessor gives the same per-session
// order). The reader calls it unlocked after queueing a read.
func (c *conn) drain(locked bool) {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.mu.Unlock()
			return
		}
		r := c.queue[0]
		// While any write of this connection is queued, only apply
		// answers: a read the reader took here would run once apply let go
		// of the lock, possibly after that write was applied.
		if r.claimed || (!locked && c.writes > 0) || (r.kind == kindWrite && !r.done.Load()) {
			// Not answerable yet, or another goroutine is answering it
			// and will pop it.
			c.mu.Unlock()
			return
		}
		r.claimed = true
		c.mu.Unlock()

		switch {
		case r.kind == kindWrite:
			c.s.replyWrite(r)
		case locked:
			zxid, code, body := c.s.readLocked(r)
			c.s.sendRead(r, zxid, code, body)
		default:
			c.s.execRead(r)
		}

		c.mu.Lock()
		if r.kind == kindWrite {
			c.writes--
		}
		c.queue[0] = nil
		c.queue = c.queue[1:]
		if len(c.queue) == 0 {
			c.queue = nil
		}
		c.mu.Unlock()
		if r.slot {
			c.s.release()
		}
	}
}

// reply writes a reply frame: header and, on success, body.
func (c *conn) reply(xid int32, zxid int64, code wire.Code, body wire.Record) {
	e := c.out.begin()
	if e == nil {
		return
	}
	e.Int(xid)
	e.Long(zxid)
	e.Int(int32(code))
	if code == wire.CodeOK && body != nil {
		body.Encode(e)
	}
	c.out.end()
}

// tryWrite writes b with one non-blocking write(2) and returns how much
// the socket took: all, some, or none when its buffer is full (EAGAIN).
func (c *conn) tryWrite(b []byte) (int, error) {
	if c.raw == nil {
		return 0, nil
	}
	// One tryWrite runs at a time (outbuf.writing), so its scratch and
	// the function made once are reused: a closure over locals moved
	// them to the heap at every reply.
	w := &c.rw
	if w.fn == nil {
		w.fn = func(fd uintptr) bool {
			w.n, w.err = syscall.Write(int(fd), w.b)
			return true // one attempt: never wait for the socket
		}
	}
	w.b = b
	err := c.raw.Write(w.fn)
	n, werr := w.n, w.err
	w.b, w.err = nil, nil
	if err != nil {
		return 0, err
	}
	if werr == syscall.EAGAIN || werr == syscall.EINTR {
		werr = nil
	}
	return max(n, 0), werr
}

// rawWrite is tryWrite's scratch (one write at a time).
type rawWrite struct {
	b   []byte
	n   int
	err error
	fn  func(fd uintptr) bool
}

// notify writes a watch notification.
func (c *conn) notify(typ int32, path string, zxid int64) {
	e := c.out.begin()
	if e == nil {
		return
	}
	e.Int(wire.XidNotification)
	e.Long(zxid)
	e.Int(0)
	e.Int(typ)
	e.Int(wire.StateSyncConnected)
	e.String(path)
	c.out.end()
}
