package rlog

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/proc"
	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/rlog/rlogclient"
	"github.com/corral-db/corral/tests/harness"
)

// installedSnap is what a member logs when it catches up by SNAP (the
// replication driver's line, in both shapes).
const installedSnap = "installed the leader's snapshot"

// cluster is three server processes serving the log API, in one of the
// two shapes the logs come in. Methods are for the test goroutine.
type cluster interface {
	// APIs are the members' API endpoints, by member index.
	APIs() []string
	// Name names member i in messages.
	Name(i int) string
	// WaitAll waits until every member runs and has caught up, and
	// returns the leader's index.
	WaitAll() int
	// Kill SIGKILLs member i; Wipe removes its data (it is down);
	// Start starts it again on the same ports and directory and waits
	// until its API serves.
	Kill(i int)
	Wipe(i int)
	Start(i int)
	// StartAll starts every member that is down at once (none serves
	// before a quorum runs) and waits until their APIs serve.
	StartAll()
	// Log is everything member i logged so far.
	Log(i int) string
	// Isolate cuts member i off from the others (the network between
	// them drops everything; harness.Relays) until Heal.
	Isolate(i int)
	Heal()
}

// ensembleCluster is a ZooKeeper-protocol ensemble with rlog.root and
// apiPort: the logs in the tree, payloads in each member's data log, the
// API on each member (corral ensemble's shape).
type ensembleCluster struct {
	t    *testing.T
	ens  *harness.Ensemble
	apis []string
}

func startEnsemble(t *testing.T, _ []string) cluster {
	apiPorts := make([]int, 3)
	apis := make([]string, 3)
	for i := range apiPorts {
		apiPorts[i] = testport.Free(t)
		apis[i] = fmt.Sprintf("127.0.0.1:%d", apiPorts[i])
	}
	cfg := harness.EnsembleConfig{TickTime: time.Second, InitLimit: 10, SyncLimit: 5}
	// Snapshots every few transactions, so the leader's log is cut and a
	// member from an empty disk needs a SNAP.
	cfg.Server.Extra = []string{"rlog.root=/logs", "snapCount=16"}
	cfg.MemberExtra = func(i int) []string { return []string{fmt.Sprintf("apiPort=%d", apiPorts[i])} }
	cfg.Partitionable = true
	ens := env.StartEnsemble(t, 3, cfg)
	t.Logf("ensemble %s, api endpoints %s", ens.ConnectString(), strings.Join(apis, ","))
	return &ensembleCluster{t: t, ens: ens, apis: apis}
}

func (c *ensembleCluster) APIs() []string    { return c.apis }
func (c *ensembleCluster) Name(i int) string { return c.ens.MemberString(i) }

// WaitAll: a member reports its mode only once it synced with the
// leader.
func (c *ensembleCluster) WaitAll() int { return c.ens.WaitAll() }
func (c *ensembleCluster) Kill(i int)   { c.ens.Server(i).Kill() }
func (c *ensembleCluster) Start(i int)  { c.ens.Server(i).StartAgain() }
func (c *ensembleCluster) Wipe(i int) {
	c.t.Helper()
	// myid stays: the member's identity is not its data.
	if err := os.RemoveAll(filepath.Join(c.ens.Server(i).DataDir, "version-2")); err != nil {
		c.t.Fatal(err)
	}
}
func (c *ensembleCluster) StartAll() {
	for i := range c.apis {
		if !c.ens.Server(i).Running() {
			c.ens.Launch(i)
		}
	}
	c.ens.WaitAll()
}
func (c *ensembleCluster) Log(i int) string { return readFile(c.ens.Server(i).LogPath) }
func (c *ensembleCluster) Isolate(i int)    { c.ens.Isolate(i) }
func (c *ensembleCluster) Heal()            { c.ens.Heal() }

// groupCluster is three `corral log serve-member` processes: a replica
// group holding only logs (rlog.State, payloads in each member's data
// log).
type groupCluster struct {
	t   *testing.T
	bin string
	// peers[i] is member i's -peers: the others through relays.
	peers  []string
	relays *harness.Relays
	dirs   []string
	logs   []string
	apis   []string
	procs  []*proc.Process
	// logNames are the logs WaitAll compares positions of.
	logNames []string
}

func startGroup(t *testing.T, logNames []string) cluster {
	bin := env.CorralBin()
	if bin == "" {
		t.Skip("no corral binary")
	}
	base := t.TempDir()
	c := &groupCluster{t: t, bin: bin, logNames: logNames, relays: harness.NewRelays(t)}
	var ports [][2]int
	for i := range 3 {
		ports = append(ports, [2]int{testport.Free(t), testport.Free(t)})
		c.apis = append(c.apis, fmt.Sprintf("127.0.0.1:%d", testport.Free(t)))
		c.dirs = append(c.dirs, filepath.Join(base, fmt.Sprintf("member%d", i+1), "data"))
		c.logs = append(c.logs, filepath.Join(base, fmt.Sprintf("member%d", i+1), "member.log"))
		if err := os.MkdirAll(c.dirs[i], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		var peers []string
		for j, p := range ports {
			if j != i {
				p = [2]int{c.relays.Relay(i, j, p[0]), c.relays.Relay(i, j, p[1])}
			}
			peers = append(peers, fmt.Sprintf("%d=127.0.0.1:%d:%d", j+1, p[0], p[1]))
		}
		c.peers = append(c.peers, strings.Join(peers, ","))
	}
	c.procs = make([]*proc.Process, 3)
	t.Cleanup(func() {
		for i, p := range c.procs {
			if p != nil {
				p.Kill(20 * time.Second)
			}
			if t.Failed() {
				t.Logf("%s log (last lines):\n%s", c.Name(i), tail(c.Log(i), 60))
			}
		}
	})
	for i := range 3 {
		c.launch(i)
	}
	for i := range 3 {
		c.waitServing(i)
	}
	t.Logf("logs-only group %s, api endpoints %s", c.peers[0], strings.Join(c.apis, ","))
	return c
}

func (c *groupCluster) launch(i int) {
	c.t.Helper()
	argv := []string{c.bin, "log", "serve-member", "-id", fmt.Sprint(i + 1), "-peers", c.peers[i],
		"-dir", c.dirs[i], "-listen", c.apis[i], "-snapcount", "40", "-loglevel", "info"}
	p, err := proc.Start(c.Name(i), argv, filepath.Dir(c.dirs[i]), c.logs[i])
	if err != nil {
		c.t.Fatal(err)
	}
	c.procs[i] = p
}

// waitServing waits until member i's API port accepts connections.
func (c *groupCluster) waitServing(i int) {
	c.t.Helper()
	if !testutil.Within(60*time.Second, func() bool {
		if c.procs[i].Exited() {
			c.t.Fatalf("%s exited: %s\n%s", c.Name(i), c.procs[i].State(), tail(c.Log(i), 60))
		}
		conn, err := net.DialTimeout("tcp", c.apis[i], time.Second)
		if err != nil {
			return false
		}
		conn.Close()
		return true
	}) {
		c.t.Fatalf("%s: the API does not accept connections after 60 s", c.Name(i))
	}
}

func (c *groupCluster) APIs() []string    { return c.apis }
func (c *groupCluster) Name(i int) string { return fmt.Sprintf("member %d (%s)", i+1, c.apis[i]) }
func (c *groupCluster) Log(i int) string  { return readFile(c.logs[i]) }
func (c *groupCluster) Heal()             { c.relays.Heal() }
func (c *groupCluster) Isolate(i int) {
	for j := range c.apis {
		if j != i {
			c.relays.SetCut(i, j, true)
		}
	}
}

func (c *groupCluster) Kill(i int) {
	c.t.Helper()
	if _, err := c.procs[i].Kill(20 * time.Second); err != nil {
		c.t.Fatal(err)
	}
}

func (c *groupCluster) Wipe(i int) {
	c.t.Helper()
	if err := os.RemoveAll(c.dirs[i]); err != nil {
		c.t.Fatal(err)
	}
	if err := os.MkdirAll(c.dirs[i], 0o755); err != nil {
		c.t.Fatal(err)
	}
}

func (c *groupCluster) Start(i int) {
	c.t.Helper()
	c.launch(i)
	c.waitServing(i)
}

func (c *groupCluster) StartAll() {
	c.t.Helper()
	for i, p := range c.procs {
		if p.Exited() {
			c.launch(i)
		}
	}
	for i := range c.procs {
		c.waitServing(i)
	}
}

// WaitAll finds the leader (the one member that takes a write: a trim
// to 0, which changes nothing) and waits until every member has
// committed each log up to the leader's end.
func (c *groupCluster) WaitAll() int {
	c.t.Helper()
	leader := -1
	var ends []int64
	if !testutil.Within(60*time.Second, func() bool {
		for i, a := range c.apis {
			if c.procs[i].Exited() {
				c.t.Fatalf("%s exited: %s\n%s", c.Name(i), c.procs[i].State(), tail(c.Log(i), 60))
			}
			mc, err := rlogclient.Dial([]string{a})
			if err != nil {
				c.t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err = mc.Trim(ctx, c.logNames[0], 0)
			ends = ends[:0]
			for _, n := range c.logNames {
				st, serr := mc.Stat(ctx, n)
				if serr != nil {
					err = serr
				}
				ends = append(ends, st.End)
			}
			cancel()
			mc.Close()
			if err == nil {
				leader = i
				return true
			}
		}
		return false
	}) {
		c.t.Fatal("logs-only group: no leader takes writes after 60 s")
	}
	for i, a := range c.apis {
		mc, err := rlogclient.Dial([]string{a})
		if err != nil {
			c.t.Fatal(err)
		}
		for k, n := range c.logNames {
			var st rlogclient.Stat
			if !testutil.Within(60*time.Second, func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				st, err = mc.Stat(ctx, n)
				return err == nil && st.Committed >= ends[k]
			}) {
				c.t.Fatalf("%s: %s committed %+v (%v) after 60 s, want %d", c.Name(i), n, st, err, ends[k])
			}
		}
		mc.Close()
	}
	return leader
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(b)
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
