package rlog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	corralrlog "github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/rlog/rlogclient"
)

// setup is one corral ensemble the run launches.
type setup struct {
	Name        string `json:"name"`
	Members     int    `json:"members"`
	Durability  string `json:"durability"`
	GroupCommit string `json:"group_commit"`
}

// Root is the rlog.root every member gets.
const Root = "/logs"

// purgeTimeMs is how often the members purge old snapshots.
const purgeTimeMs = 10000

// snapSizeLimitKB is the members' snapSizeLimitInKb (zooCfg).
const snapSizeLimitKB = 4 << 20

// zooCfg is member id's zoo.cfg: an ensemble on 127.0.0.1 with logs
// under Root and the log API on api[id-1]. client, quorum, election and
// api hold every member's ports.
func zooCfg(id int, dataDir string, s setup, snapCount int, client, quorum, election, api []int) string {
	var b strings.Builder
	p := func(k, v string) { b.WriteString(k + "=" + v + "\n") }
	p("tickTime", "2000")
	p("initLimit", "10")
	p("syncLimit", "5")
	p("dataDir", dataDir)
	p("clientPort", strconv.Itoa(client[id-1]))
	p("clientPortAddress", "127.0.0.1")
	p("standaloneEnabled", "false")
	p("admin.enableServer", "false")
	p("4lw.commands.whitelist", "*")
	p("maxClientCnxns", "0")
	p("snapCount", strconv.Itoa(snapCount))
	// A snapshot also starts every snapSizeLimitInKb/2 to
	// snapSizeLimitInKb of log records written. The members run at
	// ZooKeeper's default, 4 GiB, as the stored runs did: corral's 64
	// MiB counted appends' payloads whole until the server weighed an
	// append by its WAL record (a reference, replica.Weigher), and
	// snapshotted the whole tree every second or two at 64 KiB appends;
	// with the records weighed, both leave the cadence to snapCount here.
	p("snapSizeLimitInKb", strconv.Itoa(snapSizeLimitKB))
	// Every snapshot holds every entry, so the snapshots of a long run,
	// unpurged, grow with the square of its appends: keep the newest
	// three, as autopurge would, every few seconds (the keys are the
	// diskless thesis's purger's, config.Config.PurgeTimeMs).
	p("PurgeTime", strconv.Itoa(purgeTimeMs))
	p("NumberToRetain", "3")
	p("durability", s.Durability)
	p("rlog.root", Root)
	p("rlog.groupCommit", s.GroupCommit)
	p("apiPort", strconv.Itoa(api[id-1]))
	p("apiPortAddress", "127.0.0.1")
	for i := range quorum {
		p("server."+strconv.Itoa(i+1), fmt.Sprintf("127.0.0.1:%d:%d", quorum[i], election[i]))
	}
	return b.String()
}

// cluster is a running corral ensemble and a log client on its API.
type cluster struct {
	setup     setup
	dir       string
	members   []*launch.Server
	endpoints []string // API endpoints, the leader's first once known
	clients   []string // the members' client ports (srvr)
	client    *rlogclient.Client
	config    string // member 1's zoo.cfg
}

// launchCluster starts s's members under dir and waits until a log can
// be created through the API.
func launchCluster(ctx context.Context, cfg *Config, s setup, dir string) (*cluster, error) {
	n := s.Members
	ports, err := launch.FreePorts(4 * n)
	if err != nil {
		return nil, err
	}
	client, quorum, election, api := ports[:n], ports[n:2*n], ports[2*n:3*n], ports[3*n:]
	c := &cluster{setup: s, dir: dir}
	for id := 1; id <= n; id++ {
		mdir := filepath.Join(dir, "m"+strconv.Itoa(id))
		if err := os.MkdirAll(mdir, 0o755); err != nil {
			c.stop()
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(mdir, "myid"), []byte(strconv.Itoa(id)+"\n"), 0o644); err != nil {
			c.stop()
			return nil, err
		}
		zc := zooCfg(id, mdir, s, cfg.SnapCount, client, quorum, election, api)
		if id == 1 {
			c.config = zc
		}
		path := filepath.Join(mdir, "zoo.cfg")
		if err := os.WriteFile(path, []byte(zc), 0o644); err != nil {
			c.stop()
			return nil, err
		}
		srv, err := launch.Spawn(fmt.Sprintf("corral %s m%d", s.Name, id), []string{cfg.CorralBin, "server", path}, mdir, filepath.Join(dir, "m"+strconv.Itoa(id)+".log"), cfg.Log)
		if err != nil {
			c.stop()
			return nil, err
		}
		c.members = append(c.members, srv)
		c.endpoints = append(c.endpoints, "127.0.0.1:"+strconv.Itoa(api[id-1]))
		c.clients = append(c.clients, "127.0.0.1:"+strconv.Itoa(client[id-1]))
	}
	cl, err := rlogclient.Dial(c.endpoints)
	if err != nil {
		c.stop()
		return nil, err
	}
	c.client = cl
	if err := c.waitReady(ctx, cfg.StartTimeout); err != nil {
		c.stop()
		return nil, err
	}
	if err := c.leaderFirst(ctx); err != nil {
		c.stop()
		return nil, err
	}
	cfg.Log.Info("ensemble ready", "setup", s.Name, "endpoints", strings.Join(c.endpoints, ","))
	return c, nil
}

// leaderFirst puts the leader's API endpoint first and dials the client
// again with that order. The client sends every call to the endpoint
// that last answered, from the first on; a follower takes an append too
// but forwards it to the leader, one more hop on every append than the
// leader's own API server needs. The leader is the member whose srvr
// says so; without one (an election under way) the order stays.
func (c *cluster) leaderFirst(ctx context.Context) error {
	i := bench.ProbeLeader(ctx, c.clients)
	if i <= 0 {
		return nil
	}
	eps := append(slices.Clone(c.endpoints[i:]), c.endpoints[:i]...)
	cl, err := rlogclient.Dial(eps)
	if err != nil {
		return err
	}
	c.client.Close()
	c.client, c.endpoints = cl, eps
	return nil
}

// waitReady creates and stats a log until both succeed.
func (c *cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		for i, m := range c.members {
			if m.Exited() {
				return fmt.Errorf("bench: %s m%d exited (%v); see %s", c.setup.Name, i+1, m.Err(), m.LogPath)
			}
		}
		actx, acancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.client.Create(actx, "ready")
		if errors.Is(err, corralrlog.ErrExists) {
			err = nil
		}
		if err == nil {
			_, err = c.client.Stat(actx, "ready")
		}
		acancel()
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: %s not ready after %v: %v", c.setup.Name, timeout, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// pids are the members' process ids.
func (c *cluster) pids() []int {
	var p []int
	for _, m := range c.members {
		p = append(p, m.PID())
	}
	return p
}

// serverCPU is the CPU time the members have used so far, together.
func (c *cluster) serverCPU() (time.Duration, error) {
	var t time.Duration
	for _, pid := range c.pids() {
		d, err := load.ReadProcCPU(pid)
		if err != nil {
			return 0, err
		}
		t += d
	}
	return t, nil
}

// stop closes the client and stops every member by its PID.
func (c *cluster) stop() {
	if c.client != nil {
		c.client.Close()
	}
	for _, m := range c.members {
		m.Stop()
	}
}

// ResidentBytes is a process's VmRSS from /proc, in bytes.
func ResidentBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseVmRSS(string(b))
}

// parseVmRSS reads the VmRSS line of a /proc/PID/status text.
func parseVmRSS(status string) (int64, error) {
	for line := range strings.Lines(status) {
		v, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("VmRSS line %q: want N kB", strings.TrimSpace(line))
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("VmRSS line %q: want N kB", strings.TrimSpace(line))
		}
		return n << 10, nil
	}
	return 0, errors.New("no VmRSS line")
}
