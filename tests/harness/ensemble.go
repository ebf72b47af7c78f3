package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/proc"
	"github.com/corral-db/corral/internal/testutil"
)

// Ensemble defaults: ZooKeeper's sample zoo.cfg values. A follower must
// connect and sync within InitLimit ticks and stay in touch within
// SyncLimit ticks.
const (
	DefaultEnsembleTickTime = 2000 * time.Millisecond
	DefaultInitLimit        = 10
	DefaultSyncLimit        = 5
)

// quorumTimeout bounds WaitQuorum. An election normally takes a second or
// two, but JVMs starting together on a loaded 2-core machine, and
// ZooKeeper's notification back-off, can stretch it; nothing asserts on it.
const quorumTimeout = 120 * time.Second

// EnsembleConfig is the part of an ensemble's zoo.cfg a test may vary. The
// zero value has the limits of ZooKeeper's sample configuration
// (tickTime=2000, initLimit=10, syncLimit=5) and no observers.
type EnsembleConfig struct {
	// TickTime is ZooKeeper's basic time unit; 0 means 2 s. Session
	// timeouts are clamped to [2, 20] ticks.
	TickTime time.Duration
	// InitLimit and SyncLimit are in ticks; 0 means 10 and 5.
	InitLimit int
	SyncLimit int
	// Observers makes the last Observers servers non-voting observers.
	Observers int
	// Server holds what every member shares with a single test server:
	// the 4lw whitelist, the reaper period, connection limit, Extra lines.
	Server Config
	// MemberExtra, if set, gives member i (0-based) zoo.cfg lines of its
	// own, such as an AdminServer port.
	MemberExtra func(i int) []string
	// Partitionable puts relays between the members that the test can
	// cut (Ensemble.Cut, Isolate, Heal; relay.go).
	Partitionable bool
}

func (c EnsembleConfig) tickTime() time.Duration {
	if c.TickTime <= 0 {
		return DefaultEnsembleTickTime
	}
	return c.TickTime
}

func (c EnsembleConfig) initLimit() int {
	if c.InitLimit <= 0 {
		return DefaultInitLimit
	}
	return c.InitLimit
}

func (c EnsembleConfig) syncLimit() int {
	if c.SyncLimit <= 0 {
		return DefaultSyncLimit
	}
	return c.SyncLimit
}

// member is one ensemble server's identity and ports.
type member struct {
	id       int // myid, 1-based
	quorum   int // followers connect to the leader here
	election int // leader election
	observer bool
}

// Ensemble is a replicated group of server processes on loopback, one data
// directory each. Server i (0-based) has myid i+1. Every process is killed
// by PID when the test ends. Methods are for the test goroutine.
type Ensemble struct {
	t       testing.TB
	env     *Env
	cfg     EnsembleConfig
	servers []*Server
	members []member
	// static is how many members StartEnsemble started; the others
	// joined later (AddJoiner) and list those and themselves.
	static int
	// relays is set for a Partitionable ensemble; relayPorts[i][j] is the
	// quorum and election relay ports member i's zoo.cfg names for j.
	relays     *Relays
	relayPorts [][][2]int
}

// StartEnsemble starts n servers that replicate with each other (the last
// cfg.Observers of them as observers) and waits until they have a quorum
// with a leader and every server serves.
func (e *Env) StartEnsemble(t testing.TB, n int, cfg EnsembleConfig) *Ensemble {
	t.Helper()
	_ = os.Getenv(EnvTarget) // see StartWith: keys go test's cache on the target
	_ = os.Getenv(EnvCorralBin)
	e.Require(t)
	if n < 1 || cfg.Observers < 0 || cfg.Observers >= n {
		t.Fatalf("harness: ensemble of %d servers with %d observers", n, cfg.Observers)
	}
	en := &Ensemble{t: t, env: e, cfg: cfg}
	base := t.TempDir()
	ports := freePorts(t, 3*n)
	for i := 0; i < n; i++ {
		dir := filepath.Join(base, fmt.Sprintf("server%d", i+1))
		s := &Server{
			t:       t,
			env:     e,
			cfg:     cfg.Server,
			Dir:     dir,
			DataDir: filepath.Join(dir, "data"),
			CfgPath: filepath.Join(dir, "zoo.cfg"),
			LogPath: filepath.Join(dir, "server.log"),
			Port:    ports[3*i],
		}
		en.servers = append(en.servers, s)
		en.members = append(en.members, member{
			id:       i + 1,
			quorum:   ports[3*i+1],
			election: ports[3*i+2],
			observer: i >= n-cfg.Observers,
		})
	}
	if cfg.Partitionable {
		if e.IsZooKeeper() {
			// A ZooKeeper leader stamps its configuration with a version
			// as it starts leading (Leader.lead, ZOOKEEPER-1783) and its
			// followers adopt it: every member then reaches member j at
			// the address the first leader's zoo.cfg names, a relay of
			// that leader's pairs, or j's own port for the leader itself.
			// Per-member relay ports cannot stand for pairs there.
			t.Skip("harness: relays name pairs by each member's own server lines; ZooKeeper takes its first leader's")
		}
		en.relays = NewRelays(t)
		en.relayPorts = make([][][2]int, n)
		for i := range n {
			en.relayPorts[i] = make([][2]int, n)
			for j, m := range en.members {
				if j != i {
					en.relayPorts[i][j] = [2]int{en.relays.Relay(i, j, m.quorum), en.relays.Relay(i, j, m.election)}
				}
			}
		}
	}
	for i, s := range en.servers {
		if err := os.MkdirAll(s.DataDir, 0o755); err != nil {
			t.Fatal(err)
		}
		myid := strconv.Itoa(en.members[i].id) + "\n"
		if err := os.WriteFile(filepath.Join(s.DataDir, "myid"), []byte(myid), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.CfgPath, []byte(en.zooCfg(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.cleanup)
	}
	// All at once: no member serves before a quorum of them runs.
	for _, s := range en.servers {
		s.launch()
	}
	en.static = n
	en.WaitAll()
	return en
}

// freePorts is k distinct free loopback ports (see freePort).
func freePorts(t testing.TB, k int) []int {
	t.Helper()
	ports := make([]int, 0, k)
	for i := 0; i < k; i++ {
		ports = append(ports, freePort(t))
	}
	return ports
}

// zooCfg renders server i's zoo.cfg: the single-server configuration
// with this ensemble's tick and limits and one server.N line per member,
// then the extra lines. Only an observer's own file says
// peerType=observer, as ZooKeeper wants.
func (en *Ensemble) zooCfg(i int) string {
	s := en.servers[i]
	z := en.cfg.Server.config(s.DataDir, s.Port, en.cfg.tickTime())
	z.InitLimit, z.SyncLimit = en.cfg.initLimit(), en.cfg.syncLimit()
	for j, m := range en.members {
		if j >= en.static && en.static > 0 && j != i {
			continue // another joiner: not in this one's configuration
		}
		quorum, election := m.quorum, m.election
		if en.relays != nil && j != i && i < len(en.relayPorts) && j < len(en.relayPorts[i]) {
			quorum, election = en.relayPorts[i][j][0], en.relayPorts[i][j][1]
		}
		z.Servers = append(z.Servers, config.Server{ID: int64(m.id), Host: "127.0.0.1",
			QuorumPort: quorum, ElectionPort: election, Observer: m.observer,
			ClientAddr: "127.0.0.1", ClientPort: en.servers[j].Port})
	}
	extra := append([]string(nil), en.cfg.Server.Extra...)
	if en.members[i].observer {
		extra = append(extra, "peerType=observer")
	}
	if en.cfg.MemberExtra != nil {
		extra = append(extra, en.cfg.MemberExtra(i)...)
	}
	return ZooCfg(z, extra...)
}

// Servers returns the members in myid order (index i has myid i+1).
func (en *Ensemble) Servers() []*Server { return append([]*Server(nil), en.servers...) }

// Server returns member i.
func (en *Ensemble) Server(i int) *Server { return en.servers[i] }

// Len is the number of members.
func (en *Ensemble) Len() int { return len(en.servers) }

// ID is member i's myid.
func (en *Ensemble) ID(i int) int { return en.members[i].id }

// IsObserver reports whether member i is an observer.
func (en *Ensemble) IsObserver(i int) bool { return en.members[i].observer }

// Voters is the number of voting members.
func (en *Ensemble) Voters() int { return len(en.members) - en.cfg.Observers }

// Addrs are the client addresses, host:port, in member order.
func (en *Ensemble) Addrs() []string {
	out := make([]string, len(en.servers))
	for i, s := range en.servers {
		out[i] = s.Addr()
	}
	return out
}

// ConnectString is the client connect string of the whole ensemble.
func (en *Ensemble) ConnectString() string { return strings.Join(en.Addrs(), ",") }

// probeTimeout bounds one srvr probe: a paused server would otherwise hold
// a poll for the full four-letter-word timeout.
const probeTimeout = 2 * time.Second

// Mode is member i's "Mode:" from srvr (leader, follower, observer,
// standalone, read-only), or "" when it is not running, paused, not
// serving (electing, syncing) or does not answer. A recovering corral
// member (diskless) is not serving but says "looking".
func (en *Ensemble) Mode(i int) string {
	s := en.servers[i]
	if p := s.current(); p == nil || p.Exited() || p.Paused() {
		return ""
	}
	out, err := proc.FourLetter(context.Background(), s.Addr(), []byte("srvr"), probeTimeout)
	if err != nil {
		return ""
	}
	return proc.SrvrMode(out)
}

// Leader is the index of a member whose srvr says "Mode: leader", or -1.
// It is a snapshot: during an election there may be none, and a leader
// that was paused may still claim the role until it notices.
func (en *Ensemble) Leader() int {
	for i := range en.servers {
		if en.Mode(i) == "leader" {
			return i
		}
	}
	return -1
}

// Followers are the indices of voting members other than leader.
func (en *Ensemble) Followers(leader int) []int {
	var out []int
	for i := range en.servers {
		if i != leader && !en.members[i].observer {
			out = append(out, i)
		}
	}
	return out
}

// Up are the indices of members whose process runs and is not frozen.
func (en *Ensemble) Up() []int {
	var out []int
	for i, s := range en.servers {
		if s.Running() && !s.Paused() {
			out = append(out, i)
		}
	}
	return out
}

// Paused reports whether the process is frozen by Pause (and not yet
// resumed).
func (s *Server) Paused() bool {
	p := s.current()
	return p != nil && p.Paused()
}

// Launch starts member i, which must not be running, without waiting for
// it to serve: to bring several members back at once, Launch each and then
// WaitQuorum. StartAgain on the member both starts and waits.
func (en *Ensemble) Launch(i int) {
	en.t.Helper()
	en.servers[i].launch()
}

// WaitQuorum polls until every running, unpaused member serves as leader,
// follower or observer and exactly one of them is the leader; it returns
// the leader's index. A follower reports its mode only once it has synced
// with the leader, so afterwards every running member holds every
// committed write the leader had when it synced. Members that are down or
// frozen are left out: use it while a test holds some down.
func (en *Ensemble) WaitQuorum() int {
	en.t.Helper()
	return en.wait(false)
}

// WaitAll is WaitQuorum for an ensemble that should be whole again: every
// member must run (one that exited, whether it crashed or a test stopped
// it, fails the test at once) and serve.
func (en *Ensemble) WaitAll() int {
	en.t.Helper()
	return en.wait(true)
}

func (en *Ensemble) wait(all bool) int {
	en.t.Helper()
	var modes []string
	leader := -1
	if testutil.Within(quorumTimeout, func() bool {
		ok := true
		leader = -1
		modes = modes[:0]
		for i, s := range en.servers {
			p := s.current()
			switch {
			case all && (p == nil || p.Exited() || p.Paused()):
				state := "never started"
				if p != nil && p.Paused() {
					state = "frozen"
				} else if p != nil {
					state = "exited: " + p.State()
				}
				en.t.Fatalf("harness: %s is not running (%s)\n%s", en.MemberString(i), state, s.logTail(80))
			case p == nil || p.Exited():
				modes = append(modes, "down")
				continue
			case p.Paused():
				modes = append(modes, "paused")
				continue
			}
			m := en.Mode(i)
			modes = append(modes, orDash(m))
			switch m {
			case "standalone":
				// It will never join: it ignored its server.N lines.
				en.t.Fatalf("harness: %s runs standalone, not as an ensemble member\n%s",
					en.MemberString(i), s.logTail(80))
			case "leader":
				if leader >= 0 {
					ok = false // a deposed leader has not noticed yet
				}
				leader = i
			case "follower", "observer":
			default:
				ok = false
			}
		}
		return ok && leader >= 0
	}) {
		return leader
	}
	for _, s := range en.servers {
		en.t.Logf("harness: %s (pid %d) log tail:\n%s", s.Addr(), s.PID(), s.logTail(80))
	}
	en.t.Fatalf("harness: ensemble has no quorum after %s (modes %v)", quorumTimeout, modes)
	return -1
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Mntr returns one value of member i's mntr output (e.g. "zk_znode_count").
func (en *Ensemble) Mntr(i int, key string) (string, error) {
	out, err := en.servers[i].FourLetter("mntr")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "\t")
		if ok && k == key {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("mntr of %s has no %s", en.servers[i].Addr(), key)
}

// ZnodeCount is member i's zk_znode_count (which, like ZooKeeper's, counts
// the root twice).
func (en *Ensemble) ZnodeCount(i int) (int64, error) {
	v, err := en.Mntr(i, "zk_znode_count")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// MemberString describes member i for logs: "server.2 127.0.0.1:1234".
func (en *Ensemble) MemberString(i int) string {
	return "server." + strconv.Itoa(en.members[i].id) + " " + net.JoinHostPort("127.0.0.1", strconv.Itoa(en.servers[i].Port))
}
