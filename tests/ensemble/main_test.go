package ensemble

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// env is resolved once per test binary; every test starts its own
// ensemble, on ports no other test of the binary was handed (testport)
// and in a temporary directory of its own, so the tests and their
// subtests run in parallel, -parallel (GOMAXPROCS by default) at a time.
// Most of an ensemble test's time is spent waiting for elections,
// timeouts and restarts, not on the CPU.
var env *harness.Env

// long turns on the five-server variants and longer fault schedules.
var long = flag.Bool("ensemble.long", false, "run the five-server variants and longer fault schedules")

func TestMain(m *testing.M) {
	flag.Parse()
	var cleanup func()
	env, cleanup = harness.NewEnv()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// ensembleConfig makes failover quick yet stable on a loaded 2-core
// machine: a follower that hears nothing from its leader gives up after
// syncLimit×tickTime = 5 s; JVMs get initLimit×tickTime = 10 s to sync.
func ensembleConfig() harness.EnsembleConfig {
	return harness.EnsembleConfig{TickTime: time.Second, InitLimit: 10, SyncLimit: 5}
}

// syncLimitTime is how long followers wait for a silent leader.
const syncLimitTime = 5 * time.Second

// sessionTimeout is what the clients ask for (the server allows 2 to 20
// ticks). A leader is frozen for longer than this and than syncLimitTime,
// so its sessions' clients must move and the others elect a new leader.
const sessionTimeout = 6 * time.Second

// Bounds on waits for things that must happen eventually. Nothing asserts
// on how long they took.
const (
	sessionWait  = 60 * time.Second // a client gets a session
	progressWait = 60 * time.Second // the load makes progress after a fault
	convergeWait = 60 * time.Second // every server reports the same count
	drainWait    = 60 * time.Second // workers finish their last operation
)

// timeline prefixes log lines with the time since the test began, so a
// log shows how long elections and recoveries took (nothing asserts on
// it).
type timeline struct {
	t     *testing.T
	start time.Time
}

func newTimeline(t *testing.T) *timeline { return &timeline{t: t, start: time.Now()} }

func (tl *timeline) logf(format string, args ...any) {
	tl.t.Helper()
	tl.t.Logf("[%6.1fs] %s", time.Since(tl.start).Seconds(), fmt.Sprintf(format, args...))
}

// start starts an n-server ensemble with the test configuration.
func start(t *testing.T, n int) *harness.Ensemble {
	t.Helper()
	return startDurability(t, n, "")
}

// durabilities are the durability modes a test runs in: corral's sync
// (the default) and diskless; ZooKeeper has only its own.
func durabilities() []string {
	if env.IsZooKeeper() {
		return []string{""}
	}
	return []string{"sync", "diskless"}
}

// startDurability starts an ensemble with durability=mode in zoo.cfg
// ("" leaves the key out).
func startDurability(t *testing.T, n int, mode string) *harness.Ensemble {
	t.Helper()
	ens := env.StartEnsemble(t, n, durabilityConfig(mode))
	t.Logf("ensemble of %d up at %s, leader %s", n, ens.ConnectString(), ens.MemberString(ens.WaitAll()))
	return ens
}

// durabilityConfig is ensembleConfig with durability=mode ("" leaves the
// key out).
func durabilityConfig(mode string) harness.EnsembleConfig {
	cfg := ensembleConfig()
	if mode != "" {
		cfg.Server.Extra = append(cfg.Server.Extra, "durability="+mode)
	}
	if mode == "diskless" {
		// Busy snapshots every 100-200 writes instead of every 50k-100k,
		// so the faults land on servers whose checkpoints are sidecars
		// beside a fuzzy snapshot (the usual case in production), not
		// only on ones that have never snapshotted.
		cfg.Server.Extra = append(cfg.Server.Extra, "snapCount=200")
	}
	return cfg
}

// sizes are the ensemble sizes a test runs with: three always, five with
// -ensemble.long unless the five-server run is cheap enough to be default.
func sizes(fiveByDefault bool) []int {
	if fiveByDefault || *long {
		return []int{3, 5}
	}
	return []int{3}
}

// newRand returns the test's random source, seeded from CORRAL_E2E_SEED or
// the clock, and logs the seed so a failing schedule can be replayed.
func newRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CORRAL_E2E_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CORRAL_E2E_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with CORRAL_E2E_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// testLogger routes go-zk's log lines to the test log until the test
// ends; go-zk logs from its own goroutines, possibly after the test.
type testLogger struct {
	lw *harness.LogWriter
}

func (l testLogger) Printf(format string, args ...any) {
	fmt.Fprintf(l.lw, format, args...)
}

// ringHosts is a go-zk HostProvider that tries the servers in order from
// a chosen first one, so clients can be spread over the members
// deterministically (go-zk's own provider shuffles).
type ringHosts struct {
	mu      sync.Mutex
	servers []string
	first   int
	curr    int // index of the server returned last
	last    int // index of the last successful connection, -1 before any
}

func newRingHosts(first int) *ringHosts { return &ringHosts{first: first, last: -1} }

func (h *ringHosts) Init(servers []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(servers) == 0 {
		return fmt.Errorf("ringHosts: no servers")
	}
	h.servers = append([]string(nil), servers...)
	h.first %= len(servers)
	h.curr = h.first - 1
	if h.curr < 0 {
		h.curr = len(servers) - 1
	}
	return nil
}

func (h *ringHosts) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

// Next returns the next server; retryStart is true once every server has
// been tried since the last successful connection (go-zk then waits a
// second before the next round).
func (h *ringHosts) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.curr = (h.curr + 1) % len(h.servers)
	retryStart := h.curr == h.last
	if h.last == -1 {
		h.last = h.curr
	}
	return h.servers[h.curr], retryStart
}

func (h *ringHosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.curr
}

// connect opens a go-zk client to addrs, trying addrs[first] first, and
// waits until it has a session. It is closed when the test ends.
func connect(t *testing.T, addrs []string, first int, name string) *zk.Conn {
	t.Helper()
	lw := harness.NewLogWriter(t, "go-zk "+name+": ")
	var once sync.Once
	ready := make(chan struct{})
	cb := func(ev zk.Event) {
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			once.Do(func() { close(ready) })
		}
	}
	conn, _, err := zk.Connect(addrs, sessionTimeout,
		zk.WithLogger(testLogger{lw}), zk.WithLogInfo(false),
		zk.WithHostProvider(newRingHosts(first)), zk.WithEventCallback(cb),
		zk.WithDialer(cappedDial))
	if err != nil {
		t.Fatalf("zk.Connect %v: %v", addrs, err)
	}
	t.Cleanup(func() {
		conn.Close()
		lw.Stop()
	})
	select {
	case <-ready:
	case <-time.After(sessionWait):
		t.Fatalf("client %s: no session with %v within %s", name, addrs, sessionWait)
	}
	return conn
}

// maxIOWait caps every read and write deadline go-zk sets. go-zk waits
// ten times its read timeout (2/3 of the session timeout) for the answer
// to a connect request, so a client that dials a frozen (SIGSTOPped)
// server would hang there for 40 s; the Java client gives up after
// sessionTimeout/servers. The cap equals go-zk's own read timeout, so
// only the handshake wait changes.
const maxIOWait = sessionTimeout * 2 / 3

// cappedDial is go-zk's dialer with capped deadlines.
func cappedDial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return cappedConn{c}, nil
}

// cappedConn is a net.Conn whose deadlines are at most maxIOWait away.
type cappedConn struct{ net.Conn }

func capDeadline(t time.Time) time.Time {
	if limit := time.Now().Add(maxIOWait); !t.IsZero() && t.After(limit) {
		return limit
	}
	return t
}

func (c cappedConn) SetDeadline(t time.Time) error     { return c.Conn.SetDeadline(capDeadline(t)) }
func (c cappedConn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(capDeadline(t)) }
func (c cappedConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(capDeadline(t))
}

// connectAll is a client of the whole ensemble starting at member first.
func connectAll(t *testing.T, ens *harness.Ensemble, first int, name string) *zk.Conn {
	t.Helper()
	return connect(t, ens.Addrs(), first, name)
}

// connectOne is a client of member i alone.
func connectOne(t *testing.T, ens *harness.Ensemble, i int) *zk.Conn {
	t.Helper()
	return connect(t, []string{ens.Server(i).Addr()}, 0, ens.MemberString(i))
}

// definite reports whether err is a server's answer that the operation was
// rejected, so it did not happen. Every other error (connection closed,
// session expired, no server, closing, ...) leaves the operation
// ambiguous: it may have been applied before the reply was lost.
func definite(err error) bool {
	switch err {
	case zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNotEmpty,
		zk.ErrNoAuth, zk.ErrInvalidACL, zk.ErrBadArguments, zk.ErrNoChildrenForEphemerals:
		return true
	}
	return false
}

// sameZnodeCount waits until every member in idx (all members if none)
// reports the same zk_znode_count and returns it. Followers apply commits
// a little after the leader, so counts are compared only once the writes
// have stopped.
func sameZnodeCount(t *testing.T, ens *harness.Ensemble, idx ...int) int64 {
	t.Helper()
	if len(idx) == 0 {
		for i := 0; i < ens.Len(); i++ {
			idx = append(idx, i)
		}
	}
	var counts []int64
	var err error
	if !testutil.Within(convergeWait, func() bool {
		counts = counts[:0]
		for _, i := range idx {
			var c int64
			if c, err = ens.ZnodeCount(i); err != nil {
				break
			}
			counts = append(counts, c)
		}
		return err == nil && allEqual(counts)
	}) {
		t.Fatalf("members %v do not agree on zk_znode_count within %s: %v (last error %v)", idx, convergeWait, counts, err)
	}
	return counts[0]
}

func allEqual(xs []int64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return len(xs) > 0
}
