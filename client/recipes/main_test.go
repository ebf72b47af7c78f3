package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

// The suite runs against corral (default) or Apache ZooKeeper 3.9.3
// (CORRAL_E2E_TARGET=zookeeper), one standalone server per top-level test.

var env *harness.Env

func TestMain(m *testing.M) {
	var cleanup func()
	env, cleanup = harness.NewEnv()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

const (
	// sessionTimeout is the smallest a server with the harness's 2 s tick
	// grants, so that forcing an expiry is quick.
	sessionTimeout = 4 * time.Second
	// waitLimit bounds what must happen eventually; nothing asserts on
	// how long it took.
	waitLimit = 30 * time.Second
)

// start launches a server for the test.
func start(t *testing.T) *harness.Server {
	t.Helper()
	return env.Start(t)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// dial opens a client; the caller closes it. Errors are returned, not
// fatal, so worker goroutines can use it.
func dial(t *testing.T, addr, name string, opts ...client.Option) (*client.Conn, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	return dialCtx(ctx, t, addr, name, opts...)
}

func dialCtx(ctx context.Context, t *testing.T, addr, name string, opts ...client.Option) (*client.Conn, func(), error) {
	lw := harness.NewLogWriter(t, name+": ")
	opts = append([]client.Option{
		client.SessionTimeout(sessionTimeout),
		client.Logger(slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	}, opts...)
	c, err := client.Connect(ctx, []string{addr}, opts...)
	if err != nil {
		lw.Stop()
		return nil, nil, err
	}
	return c, func() { c.Close(); lw.Stop() }, nil
}

// connect opens a client closed when the test ends.
func connect(t *testing.T, addr string, opts ...client.Option) *client.Conn {
	t.Helper()
	c, closeFn, err := dial(t, addr, "client", opts...)
	if err != nil {
		t.Fatalf("Connect(%s): %v", addr, err)
	}
	t.Cleanup(closeFn)
	return c
}

// root is a path named after the test, so subtests sharing a server never
// see each other's nodes.
func root(t *testing.T) string {
	return "/" + strings.NewReplacer("/", "_", " ", "_", "#", "_").Replace(t.Name())
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
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

// closedWithin waits for ch to close.
func closedWithin(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitLimit):
		t.Fatalf("%s: not within %s", what, waitLimit)
	}
}

// notClosed checks that ch is open now.
func notClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: closed", what)
	default:
	}
}

// gate is a client.DialFunc the test can cut: Cut closes the live
// connections and makes dials fail until Heal.
type gate struct {
	mu    sync.Mutex
	open  bool
	conns []net.Conn
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
	g.mu.Lock()
	defer g.mu.Unlock()
	g.conns = append(g.conns, c)
	return c, nil
}

func (g *gate) Cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = false
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

func isNoNode(err error) bool { return errors.Is(err, wire.CodeNoNode) }

// atomic32 is a counter of holders inside a critical section.
type atomic32 struct{ v atomic.Int32 }

func (a *atomic32) add(d int32) int32 { return a.v.Add(d) }
func (a *atomic32) load() int32       { return a.v.Load() }

func isNodeExists(err error) bool { return errors.Is(err, wire.CodeNodeExists) }
