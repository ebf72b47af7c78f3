package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corral-db/corral/zab"
)

// TCP is the transport between the servers of an ensemble over TCP (see
// the package documentation for the design).
type TCP struct {
	cfg    TCPConfig
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc

	listeners map[lane]net.Listener
	// peersMu guards peers and ids: fixed after NewTCP unless the
	// membership changes (SetPeers, AcceptUnknown; membership.go).
	peersMu sync.RWMutex
	peers   map[uint64]*peerLink
	ids     []uint64 // peer ids in order

	recv      chan zab.Message
	handshake chan struct{} // semaphore of pending incoming handshakes

	randMu sync.Mutex
	rand   *rand.Rand

	connsMu sync.Mutex
	conns   map[*conn]struct{}
	shut    bool

	closed         atomic.Bool
	droppedUnknown atomic.Uint64
	rejected       atomic.Uint64

	wg   sync.WaitGroup // every goroutine but the shutdown watcher
	done chan struct{}  // closed once everything stopped
}

var _ Transport = (*TCP)(nil)

// peerLink is everything about one peer: one laneLink per lane.
type peerLink struct {
	id    uint64
	addr  Peer // zero for a peer known only by its connections (AcceptUnknown)
	lanes map[lane]*laneLink
	// ctx ends when the peer is removed (SetPeers): its dial loops stop.
	ctx    context.Context
	cancel context.CancelFunc
	// dialing: its dial loops run (peersMu).
	dialing bool
}

// NewTCP starts a TCP transport: it listens (on cfg's listeners or on
// Peers[ID]), dials the peers with lower ids and accepts the others. Every
// goroutine stops when ctx is done or Close is called; Close waits for
// them either way.
func NewTCP(ctx context.Context, cfg TCPConfig) (*TCP, error) {
	if err := cfg.validate(); err != nil {
		closeListeners(cfg.QuorumListener, cfg.ElectionListener)
		return nil, err
	}
	t := &TCP{
		cfg:       cfg,
		log:       cfg.Logger.With("server", cfg.ID),
		listeners: map[lane]net.Listener{},
		peers:     map[uint64]*peerLink{},
		recv:      make(chan zab.Message, cfg.RecvBuffer),
		handshake: make(chan struct{}, cfg.MaxPendingHandshakes),
		rand:      cfg.Rand,
		conns:     map[*conn]struct{}{},
		done:      make(chan struct{}),
	}
	if cfg.QuorumListener != nil {
		t.listeners[laneQuorum] = cfg.QuorumListener
		t.listeners[laneElection] = cfg.ElectionListener
	} else {
		self := cfg.Peers[cfg.ID]
		lc := net.ListenConfig{KeepAliveConfig: t.keepAlive()}
		for _, l := range lanes {
			addr := self.QuorumAddr
			if l == laneElection {
				addr = self.ElectionAddr
			}
			ln, err := t.listen(ctx, &lc, l, addr)
			if err != nil {
				for _, ln := range t.listeners {
					ln.Close()
				}
				return nil, fmt.Errorf("transport: listen on %s port %s: %w", l, addr, err)
			}
			t.listeners[l] = ln
		}
	}
	t.ctx, t.cancel = context.WithCancel(ctx)
	for id, addr := range cfg.Peers {
		if id != cfg.ID {
			t.addPeerLocked(id, addr)
		}
	}
	for l, ln := range t.listeners {
		t.wg.Add(1)
		go t.acceptLoop(l, ln)
	}
	// The higher id dials: exactly one connection per pair and lane, so
	// there is no race between two dials to resolve (ZooKeeper's election
	// does the same; its quorum connections go from learner to leader).
	for _, id := range t.ids {
		t.startDialsLocked(t.peers[id])
	}
	go t.shutdownOnDone()
	return t, nil
}

// Bind retries: a port can be taken for a short while when the server
// starts — by an outgoing connection that the kernel gave it as a source
// port while the server was down, say. ZooKeeper retries the election
// port's bind (zookeeper.electionPortBindRetry, 3 by default, a second
// apart); corral does the same for both ports. A port that stays taken
// still fails start-up, three seconds later.
var (
	bindAttempts = 3
	bindBackoff  = time.Second
)

// listen listens on addr for lane l, retrying while the address is in use.
func (t *TCP) listen(ctx context.Context, lc *net.ListenConfig, l lane, addr string) (net.Listener, error) {
	for attempt := 1; ; attempt++ {
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || attempt >= bindAttempts {
			return ln, err
		}
		t.log.Warn("transport: port in use, retrying", "lane", l.String(), "addr", addr, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(bindBackoff):
		}
	}
}

func closeListeners(lns ...net.Listener) {
	for _, ln := range lns {
		if ln != nil {
			ln.Close()
		}
	}
}

// QuorumAddr is the address the transport accepts quorum connections on.
func (t *TCP) QuorumAddr() net.Addr { return t.listeners[laneQuorum].Addr() }

// ElectionAddr is the address the transport accepts election connections
// on.
func (t *TCP) ElectionAddr() net.Addr { return t.listeners[laneElection].Addr() }

// Send implements Transport.
func (t *TCP) Send(msgs []zab.Message) {
	for i := range msgs {
		m := &msgs[i]
		p := t.peer(m.To)
		if p == nil || m.From != t.cfg.ID || t.closed.Load() {
			t.droppedUnknown.Add(1)
			continue
		}
		ll := p.lanes[laneOf(m.Type)]
		size := EncodedSize(*m)
		if size > t.cfg.MaxFrameBytes {
			ll.droppedTooLarge.Add(1)
			ll.log.Warn("transport: message too large, dropped", "msg", m.String(), "bytes", size, "limit", t.cfg.MaxFrameBytes)
			continue
		}
		ll.enqueue(*m, size)
	}
}

// Backlog returns the bytes of quorum-class messages queued for peer id
// that its connection's writer has not taken yet (0 for an unknown
// peer). A sender of bulk data (a streamed snapshot) paces itself by it
// instead of letting the bounded queue drop what it sends.
func (t *TCP) Backlog(id uint64) int64 {
	p := t.peer(id)
	if p == nil {
		return 0
	}
	ll := p.lanes[laneQuorum]
	ll.mu.Lock()
	defer ll.mu.Unlock()
	return ll.q.bytes
}

// Recv implements Transport.
func (t *TCP) Recv() <-chan zab.Message { return t.recv }

// Close implements Transport.
func (t *TCP) Close() error {
	t.cancel()
	<-t.done
	return nil
}

// Stats implements Transport.
func (t *TCP) Stats() Stats {
	s := Stats{DroppedUnknown: t.droppedUnknown.Load(), Rejected: t.rejected.Load()}
	t.peersMu.RLock()
	defer t.peersMu.RUnlock()
	for _, id := range t.ids {
		ps := PeerStats{ID: id, Connected: true}
		for _, l := range lanes {
			ll := t.peers[id].lanes[l]
			ll.mu.Lock()
			ps.Connected = ps.Connected && ll.cur != nil
			ll.mu.Unlock()
			ps.Sent += ll.sent.Load()
			ps.Received += ll.received.Load()
			ps.DroppedFull += ll.droppedFull.Load()
			ps.DroppedDown += ll.droppedDown.Load()
			ps.DroppedTooLarge += ll.droppedTooLarge.Load()
			ps.Connects += ll.connects.Load()
			ps.Disconnects += ll.disconnects.Load()
		}
		s.Peers = append(s.Peers, ps)
	}
	return s
}

// shutdownOnDone stops everything once the context is done: listeners
// and connections are closed, which unblocks every goroutine; when the
// last has returned, Recv's channel is closed.
func (t *TCP) shutdownOnDone() {
	<-t.ctx.Done()
	t.closed.Store(true)
	for _, ln := range t.listeners {
		ln.Close()
	}
	t.connsMu.Lock()
	t.shut = true
	for c := range t.conns {
		c.close(ErrClosed)
	}
	t.connsMu.Unlock()
	t.wg.Wait()
	close(t.recv)
	close(t.done)
}

// track registers a new connection so that shutdown closes it. It
// returns nil (and closes nc) if the transport is shutting down.
func (t *TCP) track(nc net.Conn, peer uint64, l lane) *conn {
	t.tune(nc)
	c := &conn{
		nc:   nc,
		dc:   &deadlineConn{c: nc, timeout: t.cfg.IOTimeout},
		peer: peer,
		lane: l,
		done: make(chan struct{}),
	}
	t.connsMu.Lock()
	defer t.connsMu.Unlock()
	if t.shut {
		nc.Close()
		return nil
	}
	t.conns[c] = struct{}{}
	return c
}

// tune sets the socket options of a TCP connection (a TLS connection's
// are set on its TCP connection before it is wrapped).
func (t *TCP) tune(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetKeepAliveConfig(t.keepAlive())
		_ = tc.SetNoDelay(true) // the writer batches frames itself
		setUserTimeout(tc, t.cfg.IOTimeout+3*t.cfg.KeepAlive)
	}
}

func (t *TCP) untrack(c *conn) {
	t.connsMu.Lock()
	delete(t.conns, c)
	t.connsMu.Unlock()
}

func (t *TCP) keepAlive() net.KeepAliveConfig {
	return net.KeepAliveConfig{Enable: true, Idle: t.cfg.KeepAlive, Interval: t.cfg.KeepAlive, Count: 3}
}

// jitter draws a wait in [d/2, d].
func (t *TCP) jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	t.randMu.Lock()
	defer t.randMu.Unlock()
	return d/2 + time.Duration(t.rand.Int64N(int64(d-d/2)+1))
}

// sleep waits d or until shutdown; it reports whether to go on.
func (t *TCP) sleep(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-t.ctx.Done():
		return false
	}
}

// acceptLoop accepts connections on one lane's listener; each gets a
// goroutine for its handshake, then its writer.
func (t *TCP) acceptLoop(l lane, ln net.Listener) {
	defer t.wg.Done()
	bo := backoff{min: 5 * time.Millisecond, max: time.Second}
	for {
		nc, err := ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait, do not spin.
			t.log.Warn("transport: accept failed", "lane", l.String(), "err", err)
			if !t.sleep(bo.next()) {
				return
			}
			continue
		}
		bo.reset()
		select {
		case t.handshake <- struct{}{}:
		default:
			t.rejected.Add(1)
			t.log.Warn("transport: too many pending handshakes, connection closed", "lane", l.String(), "remote", nc.RemoteAddr().String())
			nc.Close()
			continue
		}
		t.wg.Add(1)
		go t.accepted(l, nc)
	}
}

// accepted runs the acceptor's side of the handshake, then serves the
// connection.
func (t *TCP) accepted(l lane, nc net.Conn) {
	defer t.wg.Done()
	if t.cfg.TLS != nil {
		t.tune(nc)
		nc = tls.Server(nc, t.cfg.TLS.Server)
	}
	c := t.track(nc, 0, l)
	if c == nil {
		<-t.handshake
		return
	}
	defer t.untrack(c)
	ll, err := t.acceptHandshake(l, c)
	<-t.handshake
	if err != nil {
		t.rejected.Add(1)
		level := slog.LevelWarn
		if _, quiet := err.(*quietError); quiet {
			level = slog.LevelDebug
		}
		t.log.Log(t.ctx, level, "transport: incoming connection refused", "lane", l.String(), "remote", nc.RemoteAddr().String(), "err", err)
		c.close(err)
		return
	}
	c.peer = ll.peer
	ll.serve(c)
}

func (t *TCP) acceptHandshake(l lane, c *conn) (*laneLink, error) {
	_ = c.nc.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout))
	if tc, ok := c.nc.(*tls.Conn); ok {
		if err := tc.HandshakeContext(t.ctx); err != nil {
			return nil, fmt.Errorf("%w: TLS: %v", ErrHandshake, err)
		}
	}
	h, status, err := readHello(c.nc)
	if err != nil {
		if status != statusOK {
			// Our protocol, another version: say so before closing.
			_, _ = c.nc.Write(marshalReply(status, t.cfg.ID))
		}
		return nil, err
	}
	p := t.peer(h.from)
	if p == nil && t.cfg.AcceptUnknown && h.lane == l && h.to == t.cfg.ID && h.from != t.cfg.ID {
		p = t.acceptPeer(h.from)
	}
	switch {
	case h.lane != l:
		status = statusBadLane
	case p == nil:
		status = statusUnknownID
	case h.to != t.cfg.ID:
		status = statusWrongTarget
	case h.from < t.cfg.ID && t.dials(p):
		// We dial it. A lower id we do not know the address of (a server
		// outside our configuration, AcceptUnknown) may dial us.
		status = statusWrongDirection
	}
	// Answer refusals too, so that the dialer can log why.
	if _, err := c.nc.Write(marshalReply(status, t.cfg.ID)); err != nil && status == statusOK {
		return nil, fmt.Errorf("%w: writing reply: %v", ErrHandshake, err)
	}
	if status != statusOK {
		err := fmt.Errorf("%w: hello from %d to %d on the %s port: %v", ErrHandshake, h.from, h.to, l, status)
		if status == statusWrongDirection && t.cfg.AcceptUnknown {
			// A peer's reverse dial (membership.go) before we connected.
			err = &quietError{err}
		}
		return nil, err
	}
	_ = c.nc.SetDeadline(time.Time{})
	return p.lanes[l], nil
}

// dialLoop keeps one connection to a lower-id peer on one lane: dial,
// serve until the connection breaks, wait with backoff, dial again.
func (t *TCP) dialLoop(p *peerLink, ll *laneLink) {
	defer t.wg.Done()
	bo := backoff{min: t.cfg.BackoffMin, max: t.cfg.BackoffMax}
	addr := p.addr.QuorumAddr
	if ll.lane == laneElection {
		addr = p.addr.ElectionAddr
	}
	failures := 0
	for t.ctx.Err() == nil && p.ctx.Err() == nil {
		c, err := t.dial(p.ctx, ll, addr)
		if err == nil {
			bo.reset()
			failures = 0
			ll.serve(c)
			t.untrack(c)
		} else if t.ctx.Err() == nil {
			failures++
			// The first failure is news; the rest, while the peer stays
			// down, would flood the log.
			level := slog.LevelDebug
			if failures == 1 || errors.Is(err, ErrHandshake) {
				level = slog.LevelInfo
			}
			ll.log.Log(t.ctx, level, "transport: cannot connect", "addr", addr, "err", err, "failures", failures)
		}
		if !t.sleepPeer(p, t.jitter(bo.next())) {
			return
		}
	}
}

// dial connects and runs the dialer's side of the handshake.
func (t *TCP) dial(ctx context.Context, ll *laneLink, addr string) (*conn, error) {
	d := net.Dialer{Timeout: t.cfg.DialTimeout, KeepAliveConfig: t.keepAlive()}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if t.cfg.TLS != nil {
		t.tune(nc)
		host, _, _ := net.SplitHostPort(addr)
		nc = tls.Client(nc, t.cfg.TLS.Client(host))
	}
	c := t.track(nc, ll.peer, ll.lane)
	if c == nil {
		return nil, ErrClosed
	}
	err = func() error {
		_ = nc.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout))
		if tc, ok := nc.(*tls.Conn); ok {
			if err := tc.HandshakeContext(t.ctx); err != nil {
				return fmt.Errorf("%w: TLS with %s: %v", ErrHandshake, addr, err)
			}
		}
		if _, err := nc.Write(hello{lane: ll.lane, from: t.cfg.ID, to: ll.peer}.marshal()); err != nil {
			return fmt.Errorf("%w: writing hello: %v", ErrHandshake, err)
		}
		status, id, err := readReply(nc)
		if err != nil {
			return err
		}
		if status != statusOK {
			return fmt.Errorf("%w: refused by %d: %v", ErrHandshake, id, status)
		}
		if id != ll.peer {
			return fmt.Errorf("%w: %s is server %d, not %d", ErrHandshake, addr, id, ll.peer)
		}
		return nc.SetDeadline(time.Time{})
	}()
	if err != nil {
		c.close(err)
		t.untrack(c)
		return nil, err
	}
	return c, nil
}
