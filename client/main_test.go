package client_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// env is resolved once per test binary (the corral build or the ZooKeeper
// jars); each top-level test starts its own server.
var env *harness.Env

func TestMain(m *testing.M) {
	var cleanup func()
	env, cleanup = harness.NewEnv()
	runSeed = rand.Uint64()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Generous bounds for what must happen eventually; nothing asserts on how
// long it took.
const (
	waitLimit      = 20 * time.Second
	sessionTimeout = 10 * time.Second
)

// envEnsemble, set to n (say 3), makes every top-level test that calls
// start run against an ensemble of n servers instead of one standalone
// server; its clients get the whole connect string.
const envEnsemble = "CORRAL_E2E_ENSEMBLE"

// ensembleSize is the ensemble's size from envEnsemble, 0 for a
// standalone server.
func ensembleSize(t testing.TB) int {
	t.Helper()
	v := os.Getenv(envEnsemble)
	if v == "" || v == "0" || v == "1" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a number of servers", envEnsemble, v)
	}
	return n
}

// testServer is what a test runs against: one standalone server, or the
// members of an ensemble (CORRAL_E2E_ENSEMBLE).
type testServer struct {
	t   *testing.T
	one *harness.Server
	ens *harness.Ensemble
}

// start launches a server, or an ensemble, for the test.
func start(t *testing.T) *testServer {
	t.Helper()
	if n := ensembleSize(t); n > 0 {
		// The standalone server's tick, so that session timeouts are
		// granted alike.
		ens := env.StartEnsemble(t, n, harness.EnsembleConfig{TickTime: harness.TickTime})
		t.Logf("ensemble of %d at %s, leader %s; clients' shuffle seed %#x", n, ens.ConnectString(),
			ens.Server(ens.WaitAll()).Addr(), testSeed(t))
		return &testServer{t: t, ens: ens}
	}
	return &testServer{t: t, one: env.Start(t)}
}

// Addr is the connect string: the server's address, or every member's.
func (s *testServer) Addr() string {
	if s.ens != nil {
		return s.ens.ConnectString()
	}
	return s.one.Addr()
}

// memberOf is the server process c is (or was last) connected to.
func (s *testServer) memberOf(c *client.Conn) *harness.Server {
	s.t.Helper()
	if s.ens == nil {
		return s.one
	}
	addr := c.Server()
	for _, m := range s.ens.Servers() {
		if m.Addr() == addr {
			return m
		}
	}
	s.t.Fatalf("client connected to %q, not a member of %s", addr, s.ens.ConnectString())
	return nil
}

// Restart stops and starts again the server c is connected to (for an
// ensemble, the member; the session moves to another one), and waits
// until it, and for an ensemble every member, serves.
func (s *testServer) Restart(c *client.Conn) {
	s.t.Helper()
	m := s.memberOf(c)
	if s.ens != nil {
		s.t.Logf("restart member %s (leader: %s)", m.Addr(), s.leaderAddr())
	}
	m.Restart()
	if s.ens != nil {
		s.ens.WaitAll()
	}
}

// followerAddrs is, for an ensemble, the connect string of the members
// that are not the leader now; for a standalone server, its address. A
// client given it can have its member restarted without an election: a
// leader's restart makes the followers drop their clients too, and one
// may reconnect to a follower that has not noticed yet and be dropped
// again, which ZooKeeper allows but a test counting session events
// cannot tell apart from a fault.
func (s *testServer) followerAddrs() string {
	s.t.Helper()
	if s.ens == nil {
		return s.one.Addr()
	}
	var addrs []string
	for _, i := range s.ens.Followers(s.ens.WaitAll()) {
		addrs = append(addrs, s.ens.Server(i).Addr())
	}
	return strings.Join(addrs, ",")
}

// settle waits, for an ensemble, until every member has applied the
// write that made p exist (exists) or not: a client that then moves to
// any member reads it. Sequential consistency is per member; a test
// whose client is about to change members needs this where a standalone
// server's single order gives it for free. Members apply in zxid order,
// so p's state stands for every earlier write too.
func (s *testServer) settle(ctx context.Context, p string, exists bool) {
	s.t.Helper()
	if s.ens == nil {
		return
	}
	for _, m := range s.ens.Servers() {
		c := connect(s.t, m.Addr())
		testutil.Eventually(s.t, waitLimit, fmt.Sprintf("%s on %s exists=%v", p, m.Addr(), exists), func() bool {
			st, err := c.Exists(ctx, p)
			return err == nil && (st != nil) == exists
		})
		c.Close()
	}
}

func (s *testServer) leaderAddr() string {
	if i := s.ens.Leader(); i >= 0 {
		return s.ens.Server(i).Addr()
	}
	return "none"
}

// testCtx is a context bounded by waitLimit*3, canceled when the test
// ends.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a client to addr (which may carry a chroot) and closes it
// when the test ends.
func connect(t *testing.T, addr string, opts ...client.Option) *client.Conn {
	t.Helper()
	lw := harness.NewLogWriter(t, "")
	opts = append([]client.Option{
		client.SessionTimeout(sessionTimeout),
		client.Logger(slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelInfo}))),
	}, opts...)
	if ensembleSize(t) > 0 {
		// Every client of a test shuffles the ensemble's list alike: they
		// share a member, whose single order the suite's cross-client
		// assertions rely on as they do on a standalone server's, and
		// fail over through the same sequence of members.
		seed := testSeed(t)
		opts = append([]client.Option{client.Rand(rand.New(rand.NewPCG(seed, seed)))}, opts...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, err := client.Connect(ctx, []string{addr}, opts...)
	if err != nil {
		t.Fatalf("Connect(%s): %v", addr, err)
	}
	t.Cleanup(func() {
		c.Close()
		lw.Stop()
	})
	return c
}

// runSeed varies the member the clients of each test share from run to
// run; set once by TestMain.
var runSeed uint64

// testSeed is the shuffling seed of t's top-level test.
func testSeed(t *testing.T) uint64 {
	h := fnv.New64a()
	top, _, _ := strings.Cut(t.Name(), "/")
	h.Write([]byte(top))
	return h.Sum64() ^ runSeed
}

// mkroot creates a persistent node named after the test so parallel
// subtests sharing a server never see each other's nodes.
func mkroot(t *testing.T, c *client.Conn) string {
	t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_", "#", "_").Replace(t.Name())
	p := "/" + name
	if _, err := c.Create(testCtx(t), p, nil, client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
		t.Fatalf("create test root %s: %v", p, err)
	}
	return p
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantErr checks errors.Is(got, want).
func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Fatalf("%s: err = %v, want %v", what, got, want)
	}
}

// nextEvent waits for one event on ch.
func nextEvent(t *testing.T, ch <-chan client.Event) client.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("event channel closed while waiting for an event")
		}
		return ev
	case <-time.After(waitLimit):
		t.Fatalf("no event within %s", waitLimit)
	}
	return client.Event{}
}

// expectEvent waits for an event and checks its type and path.
func expectEvent(t *testing.T, ch <-chan client.Event, typ client.EventType, path string) client.Event {
	t.Helper()
	ev := nextEvent(t, ch)
	if ev.Type != typ || ev.Path != path {
		t.Fatalf("event = %v %q (state %v, err %v), want %v %q", ev.Type, ev.Path, ev.State, ev.Err, typ, path)
	}
	return ev
}

// readyEvent checks that an event is already in ch, without waiting. It
// is meaningful after a call whose reply the server sent after the
// notification: the client delivers events before completing later
// replies, so no timing is involved.
func readyEvent(t *testing.T, ch <-chan client.Event, typ client.EventType, path string) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok || ev.Type != typ || ev.Path != path {
			t.Fatalf("ready event = %v %q (open %v), want %v %q", ev.Type, ev.Path, ok, typ, path)
		}
	default:
		t.Fatalf("no %v %q event delivered before the later reply", typ, path)
	}
}

// noEvent checks that nothing is queued on ch (same reasoning as
// readyEvent).
func noEvent(t *testing.T, ch <-chan client.Event) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		t.Fatalf("unexpected event %v %q (open %v)", ev.Type, ev.Path, ok)
	default:
	}
}

// closed waits for ch to be closed, discarding at most max events.
func closed(t *testing.T, ch <-chan client.Event, max int) {
	t.Helper()
	for i := 0; ; i++ {
		select {
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if i >= max {
				t.Fatalf("channel not closed; got %v %q", ev.Type, ev.Path)
			}
		case <-time.After(waitLimit):
			t.Fatal("channel not closed")
		}
	}
}

// waitState reads session events until one with state s arrives.
func waitState(t *testing.T, events <-chan client.Event, s client.State) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("Events closed while waiting for %v", s)
			}
			if ev.Type == client.EventSession && ev.State == s {
				return
			}
		case <-deadline:
			t.Fatalf("no %v event within %s", s, waitLimit)
		}
	}
}

// gate is a client.DialFunc the test can cut: Cut closes the live
// connections and makes dials fail until Heal.
type gate struct {
	mu    sync.Mutex
	open  bool
	conns []net.Conn
	dials int
	// sent holds, per dialed connection in dial order, the first bytes
	// the client wrote on it (up to sentLimit).
	sent []*recordingConn
}

// sentLimit bounds what a gate records of each connection.
const sentLimit = 64 << 10

// recordingConn keeps the first sentLimit bytes written to it.
type recordingConn struct {
	net.Conn
	mu  sync.Mutex
	buf []byte
}

func (c *recordingConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if room := sentLimit - len(c.buf); room > 0 {
		c.buf = append(c.buf, b[:min(len(b), room)]...)
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

// frames splits what was written into length-prefixed frames; a partial
// last frame is left out.
func (c *recordingConn) frames() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]byte
	for b := c.buf; len(b) >= 4; {
		n := int(binary.BigEndian.Uint32(b))
		if len(b) < 4+n {
			break
		}
		out = append(out, b[4:4+n])
		b = b[4+n:]
	}
	return out
}

func newGate() *gate { return &gate{open: true} }

func (g *gate) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	if !open {
		return nil, fmt.Errorf("gate: cut")
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	rc := &recordingConn{Conn: c}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dials++
	g.conns = append(g.conns, rc)
	g.sent = append(g.sent, rc)
	return rc, nil
}

// Sent returns the frames the client wrote on each dialed connection, in
// dial order: the ConnectRequest first, then requests (header first).
func (g *gate) Sent() [][][]byte {
	g.mu.Lock()
	conns := slices.Clone(g.sent)
	g.mu.Unlock()
	out := make([][][]byte, len(conns))
	for i, c := range conns {
		out[i] = c.frames()
	}
	return out
}

func (g *gate) Dials() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dials
}

// Cut blocks dials and closes the live connections.
func (g *gate) Cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = false
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

// Drop closes the live connections; the client may dial again.
func (g *gate) Drop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

func (g *gate) Heal() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = true
}
