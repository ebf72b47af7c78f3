package failover

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/wire"
)

// failWriter is the failover trial's client: one session issuing setData
// in a closed loop (one request outstanding) and, like a real client,
// moving to another server when its connection is lost, keeping its
// session (id, password, lastZxidSeen) unless the ensemble says it expired.
type failWriter struct {
	addrs     []string
	path      []byte
	data      []byte
	requested time.Duration // session timeout asked for
	maxWrites int
	maxTime   time.Duration
	log       bench.LogFunc

	t0 time.Time
	// quit, closed by finish, stops the writer between writes, so the
	// last one is answered and the session closed cleanly.
	quit     chan struct{}
	quitOnce sync.Once
	// okCount counts successful writes; lastOKSent is the send offset of
	// the latest one (-1 before any): the harness polls both.
	okCount    atomic.Int64
	lastOKSent atomic.Int64

	// Owned by the run goroutine; read by others after it has returned.
	recs        []writeRec
	cur         int // index into addrs of the server connected to, or last tried
	sessionID   int64
	passwd      []byte
	lastZxid    int64
	negotiated  time.Duration
	reconnects  int // connections after the first
	newSessions int // sessions created because the previous one expired
	stopErr     error

	mu sync.Mutex // guards c, for interrupt
	c  *load.Conn
}

// writerPause is the failover writer's wait after such a round. It is the
// resolution of the restoration time the writer measures (kill to first
// write accepted, 40-100 ms for corral here): at 25 ms, as it was, an
// ensemble that began serving a few milliseconds after a failed round was
// Measured 25 ms late, and a few milliseconds of difference between two
// configurations (a diskless survivor's checkpoint, 3-11 ms) came out as
// 0 or 25 ms from trial to trial. One writer's round is three connection
// attempts that the servers refuse at once, so retrying every 5 ms costs
// the election little.
const writerPause = 5 * time.Millisecond

func newFailWriter(addrs []string, start int, path, data []byte, timeout time.Duration, maxWrites int, maxTime time.Duration, log bench.LogFunc) *failWriter {
	w := &failWriter{
		addrs: addrs, cur: start, path: path, data: data, requested: timeout,
		maxWrites: maxWrites, maxTime: maxTime, log: log, passwd: make([]byte, load.PasswdSize),
		t0: time.Now(), quit: make(chan struct{}),
	}
	w.lastOKSent.Store(-1)
	return w
}

// since is the offset of now from the trial's start.
func (w *failWriter) since() time.Duration { return time.Since(w.t0) }

// Finish asks run to return after the write in progress.
func (w *failWriter) finish() { w.quitOnce.Do(func() { close(w.quit) }) }

func (w *failWriter) quitting() bool {
	select {
	case <-w.quit:
		return true
	default:
		return false
	}
}

// Run writes until finish is called, maxWrites writes have been made or
// maxTime has passed, and then closes the session. ctx ending interrupts
// it at once, even within a write.
func (w *failWriter) run(ctx context.Context) {
	stop := context.AfterFunc(ctx, w.interrupt)
	defer stop()
	defer w.closeSession()
	end := time.Now().Add(w.maxTime)
	first := true
	for ctx.Err() == nil && !w.quitting() {
		if time.Now().After(end) {
			w.stopErr = fmt.Errorf("bench: failover writer ran out of time (%v)", w.maxTime)
			return
		}
		if len(w.recs) >= w.maxWrites {
			w.stopErr = fmt.Errorf("bench: failover writer made its %d writes", w.maxWrites)
			return
		}
		if w.conn() == nil {
			if !w.connectRound(ctx, first) {
				w.pause(ctx, writerPause)
				continue
			}
			first = false
		}
		sent := w.since()
		code, err := w.setData()
		r := writeRec{sent: sent, done: w.since(), ok: err == nil && code == wire.CodeOK, server: w.cur}
		w.recs = append(w.recs, r)
		if r.ok {
			w.okCount.Add(1)
			w.lastOKSent.Store(int64(sent))
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				w.log("writer lost its connection", "server", w.addrs[w.cur], "err", err)
			}
			w.drop()
			continue
		}
		w.log("write failed", "server", w.addrs[w.cur], "code", code)
		if code == wire.CodeSessionExpired {
			w.drop()
			w.forgetSession()
		}
	}
}

func (w *failWriter) conn() *load.Conn {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.c
}

// interrupt unblocks a request or handshake in progress when ctx ends.
func (w *failWriter) interrupt() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.c != nil {
		w.c.NetConn.SetDeadline(time.Unix(1, 0))
	}
}

func (w *failWriter) drop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.c != nil {
		w.c.NetConn.Close()
		w.c = nil
	}
}

func (w *failWriter) forgetSession() {
	w.sessionID, w.lastZxid = 0, 0
	w.passwd = make([]byte, load.PasswdSize)
}

// CloseSession ends the session if connected and no write was cut short,
// so it does not linger into the next trial.
func (w *failWriter) closeSession() {
	c := w.conn()
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c.CloseSession(ctx)
	w.mu.Lock()
	w.c = nil
	w.mu.Unlock()
}

// connectRound tries each server once, starting with w.cur on the first
// connection and with the next one after a loss, as a client walking its
// connect string does. It reports whether it got a session.
func (w *failWriter) connectRound(ctx context.Context, first bool) bool {
	n := len(w.addrs)
	for k := range n {
		if ctx.Err() != nil || w.quitting() {
			return false
		}
		i := (w.cur + k) % n
		if !first {
			i = (w.cur + 1 + k) % n
		}
		c, err := w.connect(ctx, w.addrs[i])
		if errors.Is(err, errSessionExpired) {
			w.log("writer session expired; creating a new one", "server", w.addrs[i])
			w.forgetSession()
			w.newSessions++
			c, err = w.connect(ctx, w.addrs[i])
		}
		if err != nil {
			continue
		}
		w.mu.Lock()
		w.c = c
		w.mu.Unlock()
		w.cur = i
		if !first {
			w.reconnects++
			w.log("writer reconnected", "server", w.addrs[i], "at", w.since())
		}
		return true
	}
	return false
}

var errSessionExpired = errors.New("bench: session expired")

// connect opens a connection to addr and resumes the writer's session on
// it, or creates one if it has none. As in the Java client, the handshake
// gets the session timeout divided by the number of servers.
func (w *failWriter) connect(ctx context.Context, addr string) (*load.Conn, error) {
	timeout := w.requested
	if w.negotiated > 0 {
		timeout = w.negotiated
	}
	ctx, cancel := context.WithTimeout(ctx, timeout/time.Duration(len(w.addrs)))
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &load.Conn{NetConn: nc, Reader: bufio.NewReaderSize(nc, 4096)}
	dl, _ := ctx.Deadline()
	nc.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var e wire.Encoder
	at := load.BeginFrame(&e)
	e.Int(0)           // protocolVersion
	e.Long(w.lastZxid) // lastZxidSeen
	e.Int(int32(timeout / time.Millisecond))
	e.Long(w.sessionID)
	e.Buffer(w.passwd)
	e.Bool(false) // readOnly
	load.EndFrame(&e, at)
	if _, err := nc.Write(e.B); err != nil {
		nc.Close()
		return nil, err
	}
	// A server behind the session's lastZxidSeen closes the connection
	// without an answer; so does one that is not serving.
	body, err := c.ReadFrame()
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("%s: %w: %w", addr, load.ErrHandshake, err)
	}
	d2 := wire.NewDecoder(body)
	d2.Int() // protocolVersion
	to := d2.Int()
	id := d2.Long()
	passwd := d2.Buffer()
	if err := d2.Err(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%s: %w: %w", addr, load.ErrHandshake, err)
	}
	if to <= 0 || id == 0 {
		nc.Close()
		return nil, errSessionExpired
	}
	nc.SetDeadline(time.Time{})
	w.sessionID, w.passwd = id, append([]byte(nil), passwd...)
	w.negotiated = time.Duration(to) * time.Millisecond
	c.Timeout, c.SessionID = w.negotiated, id
	return c, nil
}

// readTimeout is how long a request may go unanswered before the
// connection counts as lost: two thirds of the session timeout, the Java
// client's read timeout.
func (w *failWriter) readTimeout() time.Duration { return w.negotiated * 2 / 3 }

// setData sends one setData and waits for its reply; an error means the
// connection is lost.
func (w *failWriter) setData() (wire.Code, error) {
	c := w.conn()
	if c == nil {
		return 0, net.ErrClosed
	}
	c.NetConn.SetDeadline(time.Now().Add(w.readTimeout()))
	xid := c.NextXid()
	var e wire.Encoder
	load.AppendSetData(&e, xid, w.path, w.data)
	if _, err := c.NetConn.Write(e.B); err != nil {
		return 0, err
	}
	for {
		body, err := c.ReadFrame()
		if err != nil {
			return 0, err
		}
		if len(body) < load.ReplyHeaderSize {
			return 0, fmt.Errorf("%w: %d-byte reply", load.ErrBadFrame, len(body))
		}
		h := load.DecodeReplyHeader(body)
		if h.Zxid > w.lastZxid {
			w.lastZxid = h.Zxid
		}
		switch {
		case h.Xid == wire.XidNotification || h.Xid == wire.XidPing:
			continue
		case h.Xid != xid:
			return 0, fmt.Errorf("%w: got %d, want %d", load.ErrXidMismatch, h.Xid, xid)
		}
		return wire.Code(h.Err), nil
	}
}

// pause sleeps for d, or until ctx ends or finish is called.
func (w *failWriter) pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-w.quit:
	}
}
