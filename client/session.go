package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/corral-db/corral/wire"
)

// The session goroutine (run) owns the connection life cycle: connect,
// handshake, start a link, watch it (heartbeats, failure detection),
// tear it down, reconnect, and finally shut the Conn down on expiry,
// refused authentication or Close.

const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
	// setWatchesMaxPaths bounds the path text of one SetWatches frame, as
	// the Java client does, to stay well under the server's frame limit.
	setWatchesMaxPaths = 128 << 10
)

var errExpiredHandshake = errors.New("zk: server reports the session expired")

func (c *Conn) run() {
	defer close(c.done)
	backoff := minBackoff
	disconnectedAt := time.Now()
	for {
		if c.ctx.Err() != nil {
			c.shutdown(ErrClosed, StateClosed)
			return
		}
		addr, wrapped := c.hosts.take()
		l, err := c.open(addr)
		switch {
		case errors.Is(err, errExpiredHandshake):
			c.log.Warn("zk: session expired", "session", fmt.Sprintf("%#x", c.SessionID()))
			c.shutdown(ErrSessionExpired, StateExpired)
			return
		case err != nil:
			if c.ctx.Err() == nil {
				c.log.Info("zk: connect failed", "server", addr, "err", err)
			}
			c.checkFailFast(disconnectedAt)
			if wrapped {
				if !c.sleep(jitter(c, backoff)) {
					continue // closing: handled at the top
				}
				backoff = min(2*backoff, maxBackoff)
			}
			continue
		}
		backoff = minBackoff
		c.serve(l)
		if c.authFailed.Load() {
			c.shutdown(ErrAuthFailed, StateAuthFailed)
			return
		}
		disconnectedAt = time.Now()
	}
}

// jitter spreads reconnect attempts of many clients: d/2 + rand(d/2).
func jitter(c *Conn, d time.Duration) time.Duration {
	return d/2 + time.Duration(c.cfg.rand.Int64N(int64(d/2)+1))
}

// sleep waits d unless the Conn is closing; it reports whether it slept.
func (c *Conn) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// checkFailFast fails queued requests with ErrConnectionLoss once the
// client has had no connection for a whole session timeout (after which
// the session is gone unless the servers themselves were down), and makes
// new calls fail at once until a connection is back.
func (c *Conn) checkFailFast(since time.Time) {
	if time.Since(since) >= c.SessionTimeout() {
		c.failQueue(ErrConnectionLoss, false)
	}
}

// open dials addr and performs the handshake. It returns a link ready to
// start, or errExpiredHandshake, or a connection error.
func (c *Conn) open(addr string) (*link, error) {
	c.mu.Lock()
	timeout := c.timeout
	sid, passwd := c.sessionID, c.passwd
	c.mu.Unlock()
	// As in Java: the session timeout is shared among the servers, so a
	// client gets round the whole list within one timeout.
	connectTimeout := timeout / time.Duration(c.hosts.len())
	ctx, cancel := context.WithTimeout(c.ctx, connectTimeout)
	defer cancel()
	nc, err := c.cfg.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if c.cfg.tls != nil {
		if nc, err = startTLS(ctx, nc, addr, c.cfg.tls); err != nil {
			return nil, err
		}
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() }) // Close or timeout interrupts the handshake
	resp, err := c.handshake(nc, sid, passwd, timeout)
	if !stop() {
		nc.Close()
		if err == nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	if resp.Timeout <= 0 || (sid != 0 && resp.SessionID != sid) {
		nc.Close()
		return nil, errExpiredHandshake
	}
	c.mu.Lock()
	c.sessionID = resp.SessionID
	c.passwd = resp.Passwd
	c.timeout = time.Duration(resp.Timeout) * time.Millisecond
	c.server = addr
	c.mu.Unlock()
	c.sid.Store(resp.SessionID)
	return newLink(c, nc, addr), nil
}

// startTLS runs the TLS handshake on a new connection to addr.
func startTLS(ctx context.Context, nc net.Conn, addr string, cfg *tls.Config) (net.Conn, error) {
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// handshake sends the ConnectRequest and reads the ConnectResponse.
func (c *Conn) handshake(nc net.Conn, sid int64, passwd []byte, timeout time.Duration) (*wire.ConnectResponse, error) {
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	req := wire.ConnectRequest{
		// Never less than what this client has seen: a server that is
		// behind refuses the session instead of serving older state.
		LastZxidSeen: c.lastZxid.Load(),
		// The timeout the caller asked for, as Java does, not the one the
		// last server granted.
		Timeout:     int32(c.cfg.sessionTimeout / time.Millisecond),
		SessionID:   sid,
		Passwd:      passwd,
		HasReadOnly: true,
	}
	var e wire.Encoder
	start := e.BeginFrame()
	req.Encode(&e)
	e.EndFrame(start)
	if _, err := nc.Write(e.B); err != nil {
		return nil, fmt.Errorf("handshake write: %w", err)
	}
	p, err := wire.ReadFrame(nc, nil, 1024)
	if err != nil {
		// ZooKeeper closes without answering when our lastZxidSeen is
		// ahead of it: try another server.
		return nil, fmt.Errorf("handshake read: %w", err)
	}
	var resp wire.ConnectResponse
	if err := resp.Decode(wire.NewDecoder(p)); err != nil {
		return nil, fmt.Errorf("handshake: %w", err)
	}
	return &resp, nil
}

// serve runs one established connection until it fails or the Conn is
// closed.
func (c *Conn) serve(l *link) {
	c.clearFailFast()
	c.setState(StateConnected)
	first := c.prime(l)

	// Persistent watchers hear of the reconnect before any event from the
	// new connection.
	c.watches.sessionEvent(c, Event{Type: EventSession, State: StateConnected})
	l.start()
	c.emit(Event{Type: EventSession, State: StateConnected})
	if first {
		c.reportFirst(nil)
	}

	c.mu.Lock()
	timeout := c.timeout
	c.mu.Unlock()
	pingEvery := timeout / 3
	readTimeout := timeout * 2 / 3
	tick := min(max(timeout/12, 5*time.Millisecond), time.Second)
	ticker := time.NewTicker(tick)
	defer ticker.Stop()

	now := time.Now()
	lastRecv, lastSend := now, now
	var seenRecv, seenSend uint64
	closing := c.ctx.Done()
	var closed <-chan struct{}
	var why error
loop:
	for {
		select {
		case <-l.readerDone:
			why = l.err
			break loop
		case <-closing:
			closing = nil
			closed = c.sendCloseSession()
		case <-closed:
			why = ErrClosed
			break loop
		case now := <-ticker.C:
			if rs := l.recvSeq.Load(); rs != seenRecv || l.stalled.Load() {
				seenRecv, lastRecv = rs, now
			}
			if ss := l.sendSeq.Load(); ss != seenSend {
				seenSend, lastSend = ss, now
			}
			if now.Sub(lastRecv) >= readTimeout {
				why = fmt.Errorf("no frame from the server for %v", now.Sub(lastRecv).Round(time.Millisecond))
				break loop
			}
			if closed == nil && now.Sub(lastSend) >= pingEvery {
				l.ping.Store(true)
				c.wakeWriter()
				lastSend = now
			}
		}
	}
	l.shutdown(why)
	if c.ctx.Err() == nil && !c.authFailed.Load() {
		c.log.Info("zk: disconnected", "server", l.addr, "err", why)
		c.setState(StateDisconnected)
	}
	l.failPending(ErrConnectionLoss)
	if c.ctx.Err() == nil && !c.authFailed.Load() {
		c.watches.sessionEvent(c, Event{Type: EventSession, State: StateDisconnected})
		c.emit(Event{Type: EventSession, State: StateDisconnected})
	}
}

// prime queues, ahead of everything already queued, what a new connection
// must send first: the credentials, then the watches to re-register. It
// reports whether this is the Conn's first connection, whose credentials
// Connect waits for.
func (c *Conn) prime(l *link) bool {
	c.mu.Lock()
	creds := append([]credential(nil), c.creds...)
	c.mu.Unlock()
	first := !c.firstDone.Load()
	var pre []*request
	pending := len(creds)
	for _, cr := range creds {
		r := c.internalRequest(wire.OpAuth, func(c *Conn, r *request) {
			if r.err != nil && errors.Is(r.err, wire.CodeAuthFailed) {
				c.authFailed.Store(true)
				return
			}
			if r.err == nil && first {
				pending--
				if pending == 0 {
					c.reportFirst(nil)
				}
			}
		})
		r.body = &wire.AuthPacket{Scheme: cr.scheme, Auth: cr.auth}
		pre = append(pre, r)
	}
	pre = append(pre, c.setWatchesRequests()...)
	c.requeueFront(pre)
	return first && len(creds) == 0
}

// setWatchesRequests builds the frames that re-register every watch,
// relative to the last zxid seen so that the server fires at once for
// changes the client missed. Each frame carries at most ~128 KB of paths.
// SetWatches (101) is used when a frame holds no persistent watch, so
// servers older than 3.6 keep working; SetWatches2 (105) otherwise.
func (c *Conn) setWatchesRequests() []*request {
	data, exist, child, persistent, recursive := c.watches.watchedPaths()
	zxid := c.lastZxid.Load()
	var (
		out   []*request
		cur   wire.SetWatches2
		size  int
		count int
	)
	flush := func() {
		if count == 0 {
			return
		}
		var r *request
		if len(cur.PersistentWatches) == 0 && len(cur.PersistentRecursiveWatches) == 0 {
			r = c.internalRequest(wire.OpSetWatches, logSetWatches)
			r.body = &wire.SetWatches{RelativeZxid: zxid, DataWatches: nonNil(cur.DataWatches),
				ExistWatches: nonNil(cur.ExistWatches), ChildWatches: nonNil(cur.ChildWatches)}
		} else {
			r = c.internalRequest(wire.OpSetWatches2, logSetWatches)
			sw := cur
			sw.RelativeZxid = zxid
			r.body = &sw
		}
		out = append(out, r)
		cur, size, count = wire.SetWatches2{}, 0, 0
	}
	add := func(list *[]string, paths []string) {
		for _, p := range paths {
			if size > 0 && size+len(p) > setWatchesMaxPaths {
				flush() // resets cur in place: list still points into it
			}
			*list = append(*list, p)
			size += len(p)
			count++
		}
	}
	add(&cur.DataWatches, data)
	add(&cur.ExistWatches, exist)
	add(&cur.ChildWatches, child)
	add(&cur.PersistentWatches, persistent)
	add(&cur.PersistentRecursiveWatches, recursive)
	flush()
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func logSetWatches(c *Conn, r *request) {
	if r.err != nil && !errors.Is(r.err, ErrConnectionLoss) {
		c.log.Warn("zk: re-registering watches failed", "err", r.err)
	}
}

// sendCloseSession queues closeSession behind everything already queued
// and returns a channel closed when it completes (reply or connection
// loss).
func (c *Conn) sendCloseSession() <-chan struct{} {
	done := make(chan struct{})
	r := c.internalRequest(wire.OpCloseSession, func(*Conn, *request) { close(done) })
	c.qmu.Lock()
	c.queue = append(c.queue, r)
	c.qWoken = true
	c.qmu.Unlock()
	c.wakeWriter()
	return done
}

// shutdown makes the Conn dead: queued calls and later ones fail with err,
// watches end, the final state is announced and Events is closed.
func (c *Conn) shutdown(err error, state State) {
	c.failQueue(err, true)
	c.setState(state)
	c.watches.endAll(c, err, state)
	c.reportFirst(err)
	c.emit(Event{Type: EventSession, State: state, Err: err})
	close(c.events)
	c.cancel()
}
