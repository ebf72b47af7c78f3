package client

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/wire"
)

// Conn is a ZooKeeper session. It is safe for concurrent use. Its methods
// send requests over one TCP connection at a time, pipelined: any number
// of calls may be in flight, and their replies and completions arrive in
// the order the calls were made.
type Conn struct {
	cfg    config
	log    *slog.Logger
	hosts  *hostList
	chroot string
	pool   sync.Pool

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	done   chan struct{} // closed when the session goroutine has finished

	// The send queue: requests not yet handed to a connection, in call
	// order. Callers append; the writer of the current connection takes
	// the whole queue at once. Requests survive a reconnect here (no
	// server has seen them), so they go out on the next connection.
	qmu      sync.Mutex
	queue    []*request
	qWoken   bool  // a wake-up is pending for the writer
	dead     error // set once the Conn can no longer be used
	failFast bool  // disconnected for a whole session timeout
	wake     chan struct{}
	slots    *slots // one per request in flight (MaxInFlight)

	// Session identity and negotiated timeout, written by the session
	// goroutine.
	mu        sync.Mutex
	sessionID int64
	passwd    []byte
	timeout   time.Duration
	creds     []credential // re-sent on every connection
	server    string

	state      atomic.Int32
	sid        atomic.Int64
	lastZxid   atomic.Int64 // highest zxid seen in a reply header
	authFailed atomic.Bool
	xid        int32 // next xid; owned by the current writer

	watches registry
	events  chan Event

	firstOnce sync.Once
	firstDone atomic.Bool
	first     chan error // the outcome of the first connection, for Connect
}

// Connect starts a session with one of servers and waits until a server
// has accepted it (and any AuthDigest/Auth credentials), or ctx ends.
//
// Each element of servers is "host:port" (port 2181 if omitted) or a
// comma-separated list of them; the last may end with a chroot, as in
// "h1:2181,h2:2181/app", or use the Chroot option. The list is shuffled
// and tried round robin; after a connection is lost the client moves to
// the next server.
func Connect(ctx context.Context, servers []string, opts ...Option) (*Conn, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	addrs, chroot, err := parseServers(servers)
	if err != nil {
		return nil, err
	}
	if cfg.chroot != "" {
		if chroot, err = cleanChroot(cfg.chroot); err != nil {
			return nil, err
		}
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.dial == nil {
		var d net.Dialer
		cfg.dial = d.DialContext
	}
	if cfg.rand == nil {
		now := uint64(time.Now().UnixNano())
		cfg.rand = rand.New(rand.NewPCG(now, now>>17|1))
	}
	c := &Conn{
		cfg:    cfg,
		log:    cfg.logger,
		hosts:  newHostList(addrs, cfg.rand),
		chroot: chroot,
		done:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
		slots:  newSlots(cfg.maxInFlight),
		events: make(chan Event, cfg.eventBuffer),
		first:  make(chan error, 1),
		creds:  cfg.creds,
		xid:    1,
	}
	c.pool.New = newPooledRequest
	c.timeout = cfg.sessionTimeout
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.watches.init()
	c.state.Store(int32(StateDisconnected))
	go c.run()

	select {
	case err := <-c.first:
		if err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	case <-ctx.Done():
		c.Close()
		return nil, ctx.Err()
	}
}

// reportFirst tells Connect how the first connection went (once).
func (c *Conn) reportFirst(err error) {
	c.firstOnce.Do(func() {
		c.firstDone.Store(true)
		c.first <- err
	})
}

// State is the current session state.
func (c *Conn) State() State { return State(c.state.Load()) }

// SessionID is the session's id (0 before the first connection).
func (c *Conn) SessionID() int64 { return c.sid.Load() }

// SessionPassword is the session's password, which together with
// SessionID lets another client take the session over (ZooKeeper's
// getSessionPasswd).
func (c *Conn) SessionPassword() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.passwd...)
}

// SessionTimeout is the timeout the server granted (the requested one
// before the first connection).
func (c *Conn) SessionTimeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeout
}

// Server is the address of the server the Conn is or was last connected
// to.
func (c *Conn) Server() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server
}

// LastZxid is the highest zxid the client has seen in a reply. It is sent
// on reconnect, and a server that has not caught up with it refuses the
// session, so the client never reads older state than it already saw.
func (c *Conn) LastZxid() int64 { return c.lastZxid.Load() }

// Events delivers session events (EventSession: Connected, Disconnected,
// Expired, AuthFailed, Closed) in order. It is bounded (EventBuffer); an
// event that finds it full is dropped and logged — State always has the
// current state, and EventCallback sees every event. It is closed when
// the Conn dies (closed or expired).
func (c *Conn) Events() <-chan Event { return c.events }

// Close ends the session: requests already made complete first (the
// server answers them before the closeSession), then the session is
// closed on the server, which deletes its ephemeral nodes before Close
// returns. Calls made after Close fail with ErrClosed; watch channels are
// closed. If the server does not answer, Close returns once the
// connection is declared lost (2/3 of the session timeout). Close is
// idempotent and always returns nil.
func (c *Conn) Close() error {
	c.cancel()
	<-c.done
	return nil
}

// submit queues r for the writer. ctx bounds the wait for an in-flight
// slot (nil: wait until the Conn dies).
func (c *Conn) submit(ctx context.Context, r *request) error {
	if r.slot {
		if err := c.slots.acquire(ctx, c.done); err != nil {
			r.slot = false
			if err == errDead {
				c.qmu.Lock()
				err = c.dead
				c.qmu.Unlock()
			}
			return err
		}
	}
	c.qmu.Lock()
	if c.dead != nil || c.failFast {
		err := c.dead
		if err == nil {
			err = ErrConnectionLoss
		}
		c.qmu.Unlock()
		c.releaseSlot(r)
		return err
	}
	c.queue = append(c.queue, r)
	wake := !c.qWoken
	c.qWoken = true
	c.qmu.Unlock()
	if wake {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

func (c *Conn) releaseSlot(r *request) {
	if r.slot {
		r.slot = false
		c.slots.release()
	}
}

// do submits r and waits for it. It returns an error only when r did not
// complete for the caller: submission failed (r is recycled) or ctx ended
// first (r is abandoned: it may still be sent and executed, and whoever
// completes it drops it). Otherwise the outcome is in r.err and the
// caller recycles r.
func (c *Conn) do(ctx context.Context, r *request) error {
	if err := ctx.Err(); err != nil {
		c.recycle(r)
		return err
	}
	if err := c.submit(ctx, r); err != nil {
		c.recycle(r)
		return err
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqWaiting, reqAbandoned) {
			return ctx.Err()
		}
		<-r.done // completed meanwhile
		return nil
	}
}

// finish completes r with err. It runs on the reader for replies and on
// the session goroutine for requests a broken or dead connection fails,
// always in the order the requests were sent.
func (c *Conn) finish(r *request, err error) {
	r.err = err
	if r.replied && r.after != nil {
		r.after(c, r)
	}
	c.releaseSlot(r)
	if r.fut != nil {
		r.fut.complete(c, r)
		c.recycle(r)
		return
	}
	if r.state.CompareAndSwap(reqWaiting, reqDone) {
		r.done <- struct{}{}
	}
	// Abandoned by its waiter: dropped, never recycled.
}

// observeZxid raises lastZxid; only the reader calls it, so the check and
// the store need no compare-and-swap.
func (c *Conn) observeZxid(z int64) {
	if z > c.lastZxid.Load() {
		c.lastZxid.Store(z)
	}
}

// emit delivers a session event to the callback and the Events channel.
// Only the session goroutine calls it.
func (c *Conn) emit(ev Event) {
	if c.cfg.eventCallback != nil {
		c.cfg.eventCallback(ev)
	}
	select {
	case c.events <- ev:
	default:
		c.log.Warn("zk: Events channel full; session event dropped", "state", ev.State)
	}
}

func (c *Conn) setState(s State) { c.state.Store(int32(s)) }

// takeQueue hands the writer everything queued, swapping in spare.
func (c *Conn) takeQueue(spare []*request) []*request {
	c.qmu.Lock()
	q := c.queue
	c.queue = spare[:0]
	c.qWoken = false
	c.qmu.Unlock()
	return q
}

// requeueFront puts requests back at the head of the queue, ahead of
// anything queued since (the connection's first frames, or requests the
// writer took but must not send).
func (c *Conn) requeueFront(rs []*request) {
	if len(rs) == 0 {
		return
	}
	c.qmu.Lock()
	q := make([]*request, 0, len(rs)+len(c.queue))
	q = append(append(q, rs...), c.queue...)
	c.queue = q
	wake := !c.qWoken
	c.qWoken = true
	c.qmu.Unlock()
	if wake {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// wakeWriter nudges the writer (for a ping).
func (c *Conn) wakeWriter() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// failQueue fails every queued request with err, in order, and makes
// later submissions fail with it too (dead) or with ErrConnectionLoss
// (fail-fast). Completing under qmu keeps the order: a later call cannot
// fail before an earlier queued one.
func (c *Conn) failQueue(err error, dead bool) {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if dead {
		c.dead = err
	} else {
		c.failFast = true
	}
	q := c.queue
	c.queue = nil
	for _, r := range q {
		c.finish(r, err)
	}
}

func (c *Conn) clearFailFast() {
	c.qmu.Lock()
	c.failFast = false
	c.qmu.Unlock()
}

// internalRequest is a request the client sends on its own behalf; it
// holds no in-flight slot and completes through fn.
func (c *Conn) internalRequest(op wire.Op, fn func(*Conn, *request)) *request {
	r := c.newRequest(op)
	r.slot = false
	r.fut = completeFunc(fn)
	return r
}

// completeFunc adapts a function to completer.
type completeFunc func(*Conn, *request)

func (f completeFunc) complete(c *Conn, r *request) {
	if f != nil {
		f(c, r)
	}
}
