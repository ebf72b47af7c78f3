package e2e

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/tests/harness"
)

// env is resolved once per test binary: the corral build (or the ZooKeeper
// jars) is shared by every test; each test starts its own server process.
var env *harness.Env

func TestMain(m *testing.M) {
	flag.Parse()
	// Most of the suite waits on the server (session expiry, reapers,
	// restarts), not on the CPU, so run more subtests at once than the two
	// cores would suggest — unless the caller chose -parallel explicitly.
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "8")
	}
	var cleanup func()
	env, cleanup = harness.NewEnv()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Generous bounds for things that must happen eventually. Tests poll up to
// these limits and never assert on how long something took.
const (
	eventTimeout = 20 * time.Second
	reapTimeout  = 60 * time.Second
)

// sessionTimeout is what go-zk clients request unless a test needs less.
const sessionTimeout = 10 * time.Second

// testLogger routes go-zk's log lines to the test log until the test ends;
// go-zk logs from its own goroutines, possibly after the test returned.
type testLogger struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (l *testLogger) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Logf("go-zk: "+format, args...)
	}
}

func (l *testLogger) stop() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}

// connect opens a go-zk session to srv and waits until it has a session.
// The client is closed when the test ends.
func connect(t testing.TB, srv *harness.Server) (*zk.Conn, *sessionLog) {
	t.Helper()
	return connectWith(t, srv, sessionTimeout, nil)
}

// connectWith is connect with a session timeout and, if dialer is non-nil,
// a custom dialer.
func connectWith(t testing.TB, srv *harness.Server, timeout time.Duration, dialer zk.Dialer) (*zk.Conn, *sessionLog) {
	t.Helper()
	log := &testLogger{t: t}
	sl := newSessionLog()
	var (
		conn *zk.Conn
		err  error
	)
	// go-zk's option type is unexported, so the option lists are spelled
	// out. Session events are taken from the callback, which sees every
	// event; go-zk's event channel drops events when its 6 slots are full.
	addrs := []string{srv.Addr()}
	if dialer != nil {
		conn, _, err = zk.Connect(addrs, timeout, zk.WithLogger(log), zk.WithLogInfo(false),
			zk.WithEventCallback(sl.record), zk.WithDialer(dialer))
	} else {
		conn, _, err = zk.Connect(addrs, timeout, zk.WithLogger(log), zk.WithLogInfo(false),
			zk.WithEventCallback(sl.record))
	}
	if err != nil {
		t.Fatalf("zk.Connect: %v", err)
	}
	t.Cleanup(func() {
		conn.Close()
		log.stop()
	})
	waitState(t, sl, zk.StateHasSession)
	return conn, sl
}

// sessionLog records a go-zk client's session state changes in order.
// waitState consumes them like a channel that never drops.
type sessionLog struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every record
	states  []zk.State
	next    int // first state not yet consumed by waitState
}

// maxSessionEvents bounds the log; no test produces nearly as many.
const maxSessionEvents = 100000

func newSessionLog() *sessionLog { return &sessionLog{changed: make(chan struct{})} }

func (l *sessionLog) record(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.states) < maxSessionEvents {
		l.states = append(l.states, ev.State)
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// unconsumed returns the states recorded since the last waitState match.
func (l *sessionLog) unconsumed() []zk.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]zk.State(nil), l.states[l.next:]...)
}

// waitState waits for the next occurrence of state and consumes the log up
// to it.
func waitState(t testing.TB, l *sessionLog, state zk.State) {
	t.Helper()
	deadline := time.After(eventTimeout)
	for {
		l.mu.Lock()
		for i := l.next; i < len(l.states); i++ {
			if l.states[i] == state {
				l.next = i + 1
				l.mu.Unlock()
				return
			}
		}
		l.next = len(l.states)
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no %v within %s", state, eventTimeout)
		}
	}
}

// waitEvent waits for one watch event.
func waitEvent(t testing.TB, ch <-chan zk.Event) zk.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed without an event")
		}
		return ev
	case <-time.After(eventTimeout):
		t.Fatalf("no watch event within %s", eventTimeout)
	}
	return zk.Event{}
}

// expectEvent waits for a watch event and checks its type and path.
func expectEvent(t testing.TB, ch <-chan zk.Event, typ zk.EventType, path string) {
	t.Helper()
	ev := waitEvent(t, ch)
	if ev.Type != typ || ev.Path != path {
		t.Fatalf("watch event = %v %q (err %v), want %v %q", ev.Type, ev.Path, ev.Err, typ, path)
	}
}

// noEventYet checks that nothing is queued on ch. It is only meaningful
// after a reply that the server sent after any notification it would have
// sent (watch events precede later replies on a connection, and go-zk
// delivers frames in order), so it does not depend on timing.
func noEventYet(t testing.TB, ch <-chan zk.Event) {
	t.Helper()
	select {
	case ev := <-ch:
		t.Fatalf("unexpected watch event %v %q", ev.Type, ev.Path)
	default:
	}
}

// root creates a fresh persistent node named after the test, so tests that
// share a server never see each other's nodes.
func root(t testing.TB, c *zk.Conn) string {
	t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_", "#", "_").Replace(t.Name())
	p := "/" + name
	if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create test root %s: %v", p, err)
	}
	return p
}

// res carries a (value, error) pair so calls read try(f()).must(t).
type res[T any] struct {
	v   T
	err error
}

func try[T any](v T, err error) res[T] { return res[T]{v, err} }

func (r res[T]) must(t testing.TB) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func mustOK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t testing.TB, what string, got, want error) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: err = %v, want %v", what, got, want)
	}
}

// gatedDialer lets a test cut a go-zk client off from the server: Cut
// closes the current TCP connection and makes new dials wait until Heal.
type gatedDialer struct {
	mu    sync.Mutex
	open  chan struct{} // closed while dialing is allowed
	conns []net.Conn
	dials int
}

func newGatedDialer() *gatedDialer {
	g := &gatedDialer{open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gatedDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
	case <-time.After(timeout):
		return nil, fmt.Errorf("gated dialer: cut")
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dials++
	g.conns = append(g.conns, c)
	return c, nil
}

// Dials is the number of successful dials so far.
func (g *gatedDialer) Dials() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dials
}

// Cut blocks new dials and closes the live connections.
func (g *gatedDialer) Cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

// Drop closes the live connections but lets the client dial again.
func (g *gatedDialer) Drop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

// Heal allows dials again.
func (g *gatedDialer) Heal() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}
