package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/probe"
	"github.com/corral-db/corral/wire"
)

// Server is one corral server: standalone or an ensemble member.
type Server struct {
	opts Options
	log  *slog.Logger
	// quotaLog rate-limits quota warnings (quota.go).
	quotaLog quotaLog
	// audit is the audit log (audit.go), nil unless enabled.
	audit *auditLog

	// mu guards tree: applies take the write lock, reads the read lock.
	mu   sync.RWMutex
	tree *datatree.Tree

	watches  *watchManager
	sessions *sessionTracker
	pending  *pendingChanges
	store    *storage
	// rep is this server's member of its replica group: every write goes
	// through it, a standalone server's too (a group of one voter).
	rep *replica
	// standalone: no ensemble configured; the server answers as a
	// standalone ZooKeeper server does (srvr, mntr, AdminServer).
	standalone bool
	// applied is the tree's last zxid, published by apply.
	appliedZ atomic.Int64
	// waitMu guards appliedWaits: reconnecting sessions waiting for the
	// tree to apply a zxid (sessionmove.go).
	waitMu       sync.Mutex
	appliedWaits []appliedWait

	// slots bounds the requests inside the pipeline
	// (globalOutstandingLimit); a reader that cannot get one stops reading.
	slots chan struct{}
	// prepMu serialises prep (see submit).
	prepMu  sync.Mutex
	applyCh chan []*request
	// applyQueued counts the groups handed to the apply goroutine and not
	// yet applied (handToApply).
	applyQueued atomic.Int64
	// applyMu is held while a group is applied; fired, answering and
	// events are under it.
	applyMu   sync.Mutex
	fired     *fired
	answering []*conn
	// events is the array each applied write's watch events go in, fired
	// at once and then reused by the next (a new slice per write was an
	// allocation per create on every server).
	events []datatree.Event

	// ln is the first client port (Addr); listeners are all of them:
	// clientPort and secureClientPort (server/tls.go).
	ln        net.Listener
	listeners []clientListener

	connMu   sync.Mutex
	conns    map[*conn]struct{}
	perIP    map[string]int
	nextConn atomic.Uint64

	stats   serverStats
	met     *serverMetrics
	started time.Time
	// serving turns true once recovery is done and the port is open.
	serving atomic.Bool
	// releasesAsked counts releaseMemory calls (memory.go), whether or
	// not another release was already running.
	releasesAsked atomic.Int64

	// ctx is Serve's; it is set under connMu, which DialLocal reads it
	// under (the goroutines Serve starts read it freely).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// done is closed when the pipeline goroutines have stopped.
	done chan struct{}
}

// serverStats are the counters behind srvr, stat and mntr.
type serverStats struct {
	received atomic.Int64
	sent     atomic.Int64
	mu       sync.Mutex
	minLat   int64
	maxLat   int64
	totalLat int64
	count    int64
	authFail atomic.Int64
	// outstanding counts requests holding a pipeline slot.
	outstanding      atomic.Int64
	lastProposalSize atomic.Int64
	// inlineWrites counts writes applied on a goroutine that submitted a
	// write (a standalone server's idle path, replica.drive);
	// handedWrites those handed to the apply goroutine.
	inlineWrites, handedWrites atomic.Int64
}

func (st *serverStats) record(lat time.Duration) {
	ms := lat.Milliseconds()
	st.mu.Lock()
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

func (st *serverStats) latency() (min int64, avg float64, max int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.count == 0 {
		return 0, 0, 0
	}
	return st.minLat, float64(st.totalLat) / float64(st.count), st.maxLat
}

func (st *serverStats) reset() {
	st.mu.Lock()
	st.minLat, st.maxLat, st.totalLat, st.count = 0, 0, 0, 0
	st.mu.Unlock()
	st.received.Store(0)
	st.sent.Store(0)
}

// New recovers the server's state from its data directories. It does not
// listen yet; call Serve.
func New(opts Options) (*Server, error) {
	opts.setDefaults()
	if (opts.SecureListenAddr != "" || opts.PortUnification) && opts.TLS == nil {
		return nil, errors.New("a TLS client port (secureClientPort or client.portUnification) needs a TLS configuration")
	}
	if err := checkRlogRoot(&opts); err != nil {
		return nil, err
	}
	s := &Server{
		opts:       opts,
		log:        opts.Logger,
		watches:    newWatchManager(),
		sessions:   newSessionTracker(opts.ServerID, opts.Now()),
		pending:    newPendingChanges(),
		slots:      make(chan struct{}, opts.GlobalOutstandingLimit),
		applyCh:    make(chan []*request, 64),
		fired:      newFired(),
		conns:      map[*conn]struct{}{},
		perIP:      map[string]int{},
		started:    time.Now(),
		done:       make(chan struct{}),
		standalone: opts.Ensemble == nil,
	}
	st, tree, err := openStorage(&s.opts)
	if err != nil {
		return nil, err
	}
	s.store = st
	s.tree = tree
	s.met = newServerMetrics(s.opts.Metrics)
	st.snapTimes.s, st.fsyncTimes.s = s.met.snapshotTime, s.met.fsyncTime
	if opts.Ensemble != nil {
		s.met.startLooking() // a member starts in LOOKING, as ZooKeeper's does
	}
	s.setLocalConfig(tree)
	if st.replayed > 0 && opts.Ensemble == nil {
		// Like ZooKeeper's loadData: snapshot what recovery rebuilt, so the
		// next start replays less and old segments become purgeable.
		if err := st.snapshot(s); err != nil {
			st.close()
			return nil, fmt.Errorf("snapshot after recovery: %w", err)
		}
	}
	for id, to := range tree.Sessions() {
		s.sessions.add(id, to)
	}
	s.appliedZ.Store(tree.LastZxid())
	ens := opts.Ensemble
	if ens == nil {
		ens = standaloneEnsemble()
	}
	rep, err := newReplica(s, st, tree, ens)
	if err != nil {
		st.close()
		return nil, err
	}
	s.rep = rep
	if opts.AuditLog != "" {
		if s.audit, err = openAudit(opts.AuditLog, s.log); err != nil {
			st.close()
			return nil, err
		}
	}
	return s, nil
}

// Addr is the address the server listens on, once Serve has started:
// the plaintext client port, or the TLS one if that is the only one.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// SecureAddr is the TLS client port's address (secureClientPort), nil
// without one.
func (s *Server) SecureAddr() net.Addr {
	for _, l := range s.listeners {
		if l.mode == modeTLS {
			return l.ln.Addr()
		}
	}
	return nil
}

// Listen opens the client ports. Serve must follow.
func (s *Server) Listen() error {
	if s.opts.ListenAddr != "" {
		ln, err := net.Listen("tcp", s.opts.ListenAddr)
		if err != nil {
			return fmt.Errorf("listen on client port %s: %w", s.opts.ListenAddr, err)
		}
		mode := modePlain
		if s.opts.PortUnification {
			mode = modeUnified
		}
		s.listeners = append(s.listeners, clientListener{ln: ln, mode: mode})
	}
	if s.opts.SecureListenAddr != "" {
		ln, err := net.Listen("tcp", s.opts.SecureListenAddr)
		if err != nil {
			for _, l := range s.listeners {
				l.ln.Close()
			}
			s.listeners = nil
			return fmt.Errorf("listen on secure client port %s: %w", s.opts.SecureListenAddr, err)
		}
		s.listeners = append(s.listeners, clientListener{ln: ln, mode: modeTLS})
	}
	if len(s.listeners) == 0 {
		return errors.New("no client port to listen on")
	}
	s.ln = s.listeners[0].ln
	return nil
}

// Serve runs the server until ctx is cancelled, then shuts down in order:
// stop accepting, close connections, drain the pipeline, close the log.
func (s *Server) Serve(ctx context.Context) error {
	if s.ln == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	s.connMu.Lock() // DialLocal reads s.ctx under connMu
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.connMu.Unlock()
	defer s.cancel()

	var pipe, repWG sync.WaitGroup
	pipe.Add(1)
	go func() { defer pipe.Done(); s.applyLoop() }()
	if err := s.rep.start(s.ctx, &repWG); err != nil {
		close(s.applyCh)
		pipe.Wait()
		s.store.close()
		return err
	}
	go func() { pipe.Wait(); close(s.done) }()
	if s.standalone {
		// The group of one elects itself and applies what its log holds
		// at once; clients are accepted from then on, as a standalone
		// server accepts them once its data is loaded.
		s.rep.waitWritable(s.ctx)
	}

	s.wg.Add(4)
	go func() { defer s.wg.Done(); s.expireLoop(s.ctx) }()
	go func() { defer s.wg.Done(); s.reapLoop(s.ctx) }()
	go func() { defer s.wg.Done(); s.rep.sm.driveSnapshots(s.ctx) }()
	go func() { defer s.wg.Done(); s.store.purgeLoop(s.ctx) }()

	for _, l := range s.listeners {
		s.log.Info("listening for clients", "addr", l.ln.Addr().String(), "mode", l.mode.String(), "zxid", hex(s.appliedZxid()))
	}
	// The first port's accept loop runs here, the others beside it; the
	// first to fail stops the server.
	var others sync.WaitGroup
	otherErr := make(chan error, len(s.listeners))
	for _, l := range s.listeners[1:] {
		others.Add(1)
		go func() {
			defer others.Done()
			if err := s.acceptLoop(s.ctx, l); err != nil {
				otherErr <- err
				s.cancel()
			}
		}()
	}
	s.audit.start()
	defer s.audit.close()
	s.audit.serverEvent(auditStart, auditSuccess)
	acceptErr := s.acceptLoop(s.ctx, s.listeners[0])
	s.audit.serverEvent(auditStop, auditInvoked)

	// Shutdown: no new connections; close the open ones; let what is in
	// the pipeline finish, then stop it.
	s.serving.Store(false)
	s.cancel()
	others.Wait()
	select {
	case err := <-otherErr:
		if acceptErr == nil {
			acceptErr = err
		}
	default:
	}
	s.connMu.Lock()
	for c := range s.conns {
		c.close(errors.New("server shutting down"))
	}
	s.connMu.Unlock()
	s.wg.Wait()
	repWG.Wait()
	close(s.applyCh)
	<-s.done
	if s.opts.Durability == DurabilityDiskless {
		// Orderly shutdown is a checkpoint: nothing is lost. A standalone
		// server has no learner to catch up from its log: a snapshot of
		// the tree is its whole state.
		if !s.standalone {
			s.rep.checkpoint()
		} else if err := s.store.snapshot(s); err != nil {
			s.log.Error("final snapshot failed", "err", err)
		}
	}
	if err := probe.Dump(); err != nil {
		s.log.Error("probe dump failed", "err", err)
	}
	if err := s.store.close(); err != nil {
		return err
	}
	if acceptErr != nil && !errors.Is(acceptErr, net.ErrClosed) && ctx.Err() == nil {
		return acceptErr
	}
	return nil
}

func (s *Server) acceptLoop(ctx context.Context, l clientListener) error {
	stop := context.AfterFunc(ctx, func() { l.ln.Close() })
	defer stop()
	var tempDelay time.Duration
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if tempDelay == 0 {
					tempDelay = 5 * time.Millisecond
				} else {
					tempDelay = min(2*tempDelay, time.Second)
				}
				time.Sleep(tempDelay)
				continue
			}
			return err
		}
		tempDelay = 0
		if l.mode == modePlain {
			c := s.newConn(nc, nil)
			if c == nil {
				continue
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				c.serve(ctx)
			}()
			continue
		}
		// TLS: the handshake runs on the connection's goroutine, so that
		// a slow client does not hold up the accept loop.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			sc, ids, err := s.secure(ctx, nc, l.mode)
			if err != nil {
				s.log.Info("closing client connection", "remote", nc.RemoteAddr().String(), "port", l.mode.String(), "reason", err)
				nc.Close()
				return
			}
			if c := s.newConn(sc, ids); c != nil {
				c.serve(ctx)
			}
		}()
	}
}

// newConn registers a connection, enforcing maxClientCnxns per IP:
// ZooKeeper accepts the TCP connection and closes it at once, sending
// nothing. Its auth ids are extra (a TLS client's x509 ids) and its ip.
func (s *Server) newConn(nc net.Conn, extra []wire.Id) *conn {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	remote := nc.RemoteAddr().String()
	ip := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		ip = h
	}
	s.connMu.Lock()
	if s.opts.MaxClientCnxns > 0 && s.perIP[ip] >= s.opts.MaxClientCnxns {
		s.connMu.Unlock()
		s.log.Warn("too many connections from client, closing", "ip", ip, "max", s.opts.MaxClientCnxns)
		nc.Close()
		return nil
	}
	c := &conn{s: s, nc: nc, id: s.nextConn.Add(1), remote: remote, ip: ip, out: newOutbuf(s.opts.MaxOutBuffer)}
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	// ZooKeeper lists a TLS client's x509 (and super) ids before its ip.
	ids := append(append(make([]wire.Id, 0, len(extra)+1), extra...), wire.Id{Scheme: "ip", ID: ip})
	c.auth.Store(&ids)
	s.perIP[ip]++
	s.conns[c] = struct{}{}
	s.connMu.Unlock()
	return c
}

// connClosed forgets a connection and its watches. The session stays: it
// expires on its own unless the client reconnects.
func (s *Server) connClosed(c *conn) {
	s.connMu.Lock()
	if _, ok := s.conns[c]; ok {
		delete(s.conns, c)
		if s.perIP[c.ip]--; s.perIP[c.ip] <= 0 {
			delete(s.perIP, c.ip)
		}
	}
	s.connMu.Unlock()
	s.watches.removeConn(c)
	if sess := c.sess.Load(); sess != nil {
		sess.owner.CompareAndSwap(c, nil)
	}
}

// acquire takes a pipeline slot, blocking while the pipeline is full. It
// returns false when the server is stopping.
func (s *Server) acquire() bool {
	select {
	case s.slots <- struct{}{}:
		s.stats.outstanding.Add(1)
		return true
	case <-s.ctx.Done():
		return false
	}
}

// tryAcquire takes a pipeline slot if one is free.
func (s *Server) tryAcquire() bool {
	select {
	case s.slots <- struct{}{}:
		s.stats.outstanding.Add(1)
		return true
	default:
		return false
	}
}

func (s *Server) release() {
	<-s.slots
	s.stats.outstanding.Add(-1)
}

// closeClients drops every client connection (a learner that lost its
// leader, as ZooKeeper's does); the sessions live on.
func (s *Server) closeClients(reason error) {
	s.connMu.Lock()
	for c := range s.conns {
		c.close(reason)
	}
	s.connMu.Unlock()
}

// abandon fails a request that will not be answered by its transaction:
// its connection is closed (the client sees a connection loss and, for a
// write, does not know whether it happened, as with any lost reply).
func (s *Server) abandon(r *request, reason error) {
	r.res.Err = wire.CodeConnectionLoss
	if r.onDone != nil {
		r.onDone(r)
		return
	}
	if r.c == nil {
		return
	}
	r.c.close(reason)
	r.done.Store(true)
	r.c.drain(false)
}

// completeBarrier answers a sync whose zxid the tree has reached; the
// caller holds the tree's write lock.
func (s *Server) completeBarrier(r *request) {
	r.hdr.Zxid = s.tree.LastZxid()
	if r.onDone != nil {
		r.onDone(r) // an internal catch-up (replica.catchUp)
		return
	}
	r.done.Store(true)
	if r.c != nil {
		r.c.drain(true)
	}
}

// appliedZxid is the last zxid applied to the tree.
func (s *Server) appliedZxid() int64 { return s.appliedZ.Load() }

// canWrite tells the expirer and the reaper whether they may propose:
// always when standalone, on the writable leader in an ensemble.
func (s *Server) canWrite() bool {
	return s.rep.writable.Load()
}
