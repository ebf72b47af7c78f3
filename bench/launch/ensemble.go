package launch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/internal/proc"
)

// EnsembleConfig says how to start an ensemble under test. The embedded
// LaunchConfig's Dir is the parent of one directory per member (s1, s2,
// ...); its Port is not used: every port is picked free.
type EnsembleConfig struct {
	LaunchConfig
	// Servers is the ensemble's size.
	Servers int
}

// Member is one server of an ensemble.
type Member struct {
	ID int
	// Addr is the client address.
	Addr string
	// Dir holds the member's zoo.cfg and output; DataDir its data and myid.
	Dir, ZooCfgPath, DataDir, LogPath string
	Argv                              []string

	srv *Server // nil before the first start
}

// PID is the member's current process id, or 0 when it is not running.
func (m *Member) PID() int {
	if m.srv == nil || m.srv.Exited() {
		return 0
	}
	return m.srv.PID()
}

// Ensemble is a running ensemble of one target on 127.0.0.1.
type Ensemble struct {
	Target  string
	Members []*Member
	Timing  Timing
	// Version is the first line of a member's srvr output once whole.
	Version string
	log     *slog.Logger
}

// Member modes as srvr reports them.
const (
	ModeLeader     = "leader"
	ModeFollower   = "follower"
	ModeStandalone = "standalone"
)

// LaunchEnsemble writes a zoo.cfg and a myid per member, starts every
// member and waits until the ensemble is whole (see WaitWhole).
func LaunchEnsemble(ctx context.Context, target string, cfg EnsembleConfig) (*Ensemble, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 120 * time.Second
	}
	if cfg.Servers < 1 || cfg.Servers > MaxServers {
		return nil, fmt.Errorf("bench: ensemble of %d servers (want 1 to %d)", cfg.Servers, MaxServers)
	}
	ports, err := FreePorts(3 * cfg.Servers)
	if err != nil {
		return nil, err
	}
	peers := make([]Peer, cfg.Servers)
	for i := range peers {
		peers[i] = Peer{ID: i + 1, QuorumPort: ports[3*i], ElectionPort: ports[3*i+1], ClientPort: ports[3*i+2]}
	}
	e := &Ensemble{Target: target, Timing: cfg.Timing.OrDefault(), log: cfg.Log}
	for _, p := range peers {
		dir := filepath.Join(cfg.Dir, "s"+strconv.Itoa(p.ID))
		m := &Member{
			ID: p.ID, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(p.ClientPort)),
			Dir: dir, ZooCfgPath: filepath.Join(dir, "zoo.cfg"), DataDir: filepath.Join(dir, "data"),
			LogPath: filepath.Join(dir, target+".log"),
		}
		if err := os.MkdirAll(m.DataDir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(m.DataDir, "myid"), []byte(strconv.Itoa(p.ID)+"\n"), 0o644); err != nil {
			return nil, err
		}
		ops, err := opsPorts(target)
		if err != nil {
			return nil, err
		}
		zc := ServerConfig{DataDir: m.DataDir, GlobalOutstandingLimit: cfg.GlobalOutstandingLimit, Timing: e.Timing, Peers: peers,
			Durability: cfg.Durability, Ops: ops}
		if err := os.WriteFile(m.ZooCfgPath, []byte(zc.ZooCfg()), 0o644); err != nil {
			return nil, err
		}
		if m.Argv, err = serverArgv(target, cfg.LaunchConfig, m.ZooCfgPath); err != nil {
			return nil, err
		}
		e.Members = append(e.Members, m)
	}
	for _, m := range e.Members {
		if err := e.start(m); err != nil {
			e.Stop()
			return nil, err
		}
	}
	if _, err := e.WaitWhole(ctx, cfg.ReadyTimeout); err != nil {
		e.Stop()
		return nil, err
	}
	if out, err := load.FourLetter(ctx, e.Members[0].Addr, "srvr"); err == nil {
		e.Version = FirstLine(out)
	}
	return e, nil
}

// MaxServers bounds an ensemble's size.
const MaxServers = 9

func (e *Ensemble) start(m *Member) error {
	srv, err := Spawn(fmt.Sprintf("%s server.%d", e.Target, m.ID), m.Argv, m.Dir, m.LogPath, e.log)
	if err != nil {
		return err
	}
	srv.Addr, srv.ZooCfgPath, srv.DataDir = m.Addr, m.ZooCfgPath, m.DataDir
	m.srv = srv
	e.log.Info("server started", "target", e.Target, "id", m.ID, "pid", srv.PID(), "addr", m.Addr)
	return nil
}

// Member returns the member with the given id, or nil.
func (e *Ensemble) Member(id int) *Member {
	if id < 1 || id > len(e.Members) {
		return nil
	}
	return e.Members[id-1]
}

// Addrs are the members' client addresses in id order.
func (e *Ensemble) Addrs() []string {
	var a []string
	for _, m := range e.Members {
		a = append(a, m.Addr)
	}
	return a
}

// MemberState is what one member's srvr said.
type MemberState struct {
	ID   int
	Addr string
	// Mode is srvr's Mode value; empty if it did not answer with one.
	Mode string
	Err  error
}

// Probe asks every member for srvr.
func (e *Ensemble) Probe(ctx context.Context) []MemberState {
	st := make([]MemberState, len(e.Members))
	var wg sync.WaitGroup
	for i, m := range e.Members {
		st[i] = MemberState{ID: m.ID, Addr: m.Addr}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := load.FourLetter(ctx, m.Addr, "srvr")
			if err != nil {
				st[i].Err = err
				return
			}
			st[i].Mode = SrvrMode(out)
			if st[i].Mode == "" {
				st[i].Err = fmt.Errorf("srvr without a mode: %q", FirstLine(out))
			}
		}()
	}
	wg.Wait()
	return st
}

// SrvrMode returns the value of the "Mode:" line of srvr (or stat) output.
func SrvrMode(out string) string { return proc.SrvrMode(out) }

// wholeLeader returns the id of the one leader when every member is a
// leader or follower and exactly one leads; 0 otherwise.
func wholeLeader(st []MemberState) int {
	leader := 0
	for _, s := range st {
		switch s.Mode {
		case ModeLeader:
			if leader != 0 {
				return 0
			}
			leader = s.ID
		case ModeFollower:
		default:
			return 0
		}
	}
	return leader
}

func describeStates(st []MemberState) string {
	var parts []string
	for _, s := range st {
		switch {
		case s.Err != nil:
			parts = append(parts, fmt.Sprintf("server.%d: %v", s.ID, s.Err))
		default:
			parts = append(parts, fmt.Sprintf("server.%d: %s", s.ID, s.Mode))
		}
	}
	return strings.Join(parts, "; ")
}

// WaitWhole waits until every member answers srvr with Mode leader or
// follower, exactly one of them leads, and each accepts a session (which
// commits a createSession, so the quorum works). It returns the leader's id.
// A member whose process exits ends the wait with an error.
func (e *Ensemble) WaitWhole(ctx context.Context, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		for _, m := range e.Members {
			if m.srv == nil || m.srv.Exited() {
				return 0, fmt.Errorf("bench: %s server.%d is not running (%v); see %s", e.Target, m.ID, e.exitErr(m), m.LogPath)
			}
		}
		st := e.Probe(ctx)
		if leader := wholeLeader(st); leader != 0 {
			err := e.sessionCheck(ctx)
			if err == nil {
				return leader, nil
			}
			last = err.Error()
		} else {
			last = describeStates(st)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("bench: %s ensemble not whole after %v: %s", e.Target, timeout, last)
		case <-tick.C:
		}
	}
}

func (e *Ensemble) exitErr(m *Member) error {
	if m.srv == nil {
		return errors.New("never started")
	}
	return m.srv.Err()
}

// sessionCheck opens and closes a session on every member.
func (e *Ensemble) sessionCheck(ctx context.Context) error {
	for _, m := range e.Members {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		c, err := load.Dial(dctx, m.Addr, 30*time.Second)
		if err == nil {
			err = c.CloseSession(dctx)
		}
		cancel()
		if err != nil {
			return fmt.Errorf("server.%d: %w", m.ID, err)
		}
	}
	return nil
}

// Leader probes the members once and returns the leader's id, or 0 if
// the ensemble is not whole.
func (e *Ensemble) Leader(ctx context.Context) int {
	return wholeLeader(e.Probe(ctx))
}

// ClientOrder is the client addresses with the followers first, in id
// order, and the leader last. Connections assigned round-robin over it put
// the same number of sessions on leader and followers whichever member
// leads, and a single connection on a follower, as most of a real client
// population is.
func (e *Ensemble) ClientOrder(leader int) []string {
	var a []string
	for _, m := range e.Members {
		if m.ID != leader {
			a = append(a, m.Addr)
		}
	}
	if m := e.Member(leader); m != nil {
		a = append(a, m.Addr)
	}
	return a
}

// Kill SIGKILLs member id by its PID and waits until it is reaped. It
// returns when the signal had been sent.
func (e *Ensemble) Kill(id int) (time.Time, error) {
	m := e.Member(id)
	if m == nil || m.srv == nil {
		return time.Time{}, fmt.Errorf("bench: no running server.%d", id)
	}
	// The resident size goes in the log line: a killed process's sockets
	// Close only once the kernel has freed its memory (about 0.1 s per GB
	// here), so it explains much of how long the others take to notice.
	e.log.Info("killing server", "target", e.Target, "id", id, "pid", m.srv.PID(), "rss", residentSize(m.srv.PID()))
	return m.srv.Kill()
}

// residentSize is a process's VmRSS line from /proc ("712345 kB"), or "?"
// where there is none.
func residentSize(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// Restart starts member id again from its zoo.cfg and data directory; it
// must have exited. It does not wait for it to rejoin (see WaitWhole).
func (e *Ensemble) Restart(id int) error {
	m := e.Member(id)
	if m == nil {
		return fmt.Errorf("bench: no server.%d", id)
	}
	if m.srv != nil && !m.srv.Exited() {
		return fmt.Errorf("bench: server.%d is still running (pid %d)", id, m.srv.PID())
	}
	return e.start(m)
}

// Stop stops every running member by its PID (SIGTERM, then SIGKILL after
// StopTimeout), all at once, and waits until they are reaped.
func (e *Ensemble) Stop() {
	var wg sync.WaitGroup
	for _, m := range e.Members {
		if m.srv == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.srv.Stop()
		}()
	}
	wg.Wait()
}

// FreePorts asks the kernel for n distinct unused loopback ports,
// holding each until all are picked so none is handed out twice. Another
// process could take one before the server binds it; on a single-user
// benchmark machine that race is accepted (the server then fails to bind
// and exits, which the readiness wait reports).
func FreePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
