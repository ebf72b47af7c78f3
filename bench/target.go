package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// Env records the conditions of the measurement.
type Env struct {
	GOOS, GOARCH           string
	CPUs                   int
	GOMAXPROCS             int
	GoVersion              string
	Conns                  int
	Inflight               int
	ValueSize              int
	Warmup, Duration       time.Duration
	SeqWarmup, SeqDuration time.Duration
	GlobalOutstandingLimit int
	WorkDir                string
	// Servers is the number of servers of each target (1: standalone); 0
	// when the servers were not started by the benchmark.
	Servers int
	// Timing is zoo.cfg's quorum timing, when the benchmark wrote it.
	Timing launch.Timing
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages at the start:
	// anything well above zero means the CPUs were not the benchmark's own.
	LoadAvg string
	// Repeat is how many times each target was measured (compare
	// --repeat); Rate the open-loop rate, 0 for closed loop.
	Repeat int
	Rate   float64
	// Durability is compare's --durability ("" for forceSync=yes).
	Durability string
	// Phases are compare's phase groups in the order they ran (see
	// CompareConfig.Phases); Keys the nodes preloaded for a set or get
	// phase without a create phase before it, if any was.
	Phases [][]string
	Keys   int64
}

// ServerInfo describes one server or ensemble under test.
type ServerInfo struct {
	Target string
	// Run is the repetition (compare --repeat) this start of the target
	// served, from 1; 0 when not repeated.
	Run int
	// Phases are the phases this start served, when compare started the
	// target afresh for each group of phases (see CompareConfig.Phases).
	Phases []string `json:",omitempty"`
	// Addr is the client address, or the comma-separated addresses of an
	// ensemble's members in id order.
	Addr     string
	Version  string
	Argv     []string
	JavaHeap string
	// Leader names the member that led when the phases began, and
	// LeaderAfter the one that led when they ended if that differs (an
	// election during the measurement disturbs it). Ensembles only.
	Leader      string
	LeaderAfter string
	// Members are an ensemble's servers.
	Members []MemberInfo
	Err     string
}

// MemberInfo describes one member of an ensemble under test.
type MemberInfo struct {
	ID   int
	Addr string
	PID  int
	Mode string
}

func NewEnv() Env {
	e := Env{
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			e.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	return e
}

// PrepareLaunch completes lc for target: the corral binary, built into
// work when not given, or ZooKeeper's lib directory, fetched when not given.
func PrepareLaunch(ctx context.Context, target string, lc *launch.LaunchConfig, work string) error {
	switch {
	case launch.Base(target) == launch.TargetCorral && lc.CorralBin == "":
		lc.Log.Info("building corral")
		bin, err := launch.BuildCorral(ctx, work)
		if err != nil {
			return err
		}
		lc.CorralBin = bin
	case target == launch.TargetZooKeeper && lc.ZKLib == "":
		lib, err := launch.ZookeeperLib(ctx)
		if err != nil {
			return err
		}
		lc.ZKLib = lib
	}
	return nil
}

// StartSpec is what startStandalone and startEnsemble take of an
// experiment's configuration.
type StartSpec struct {
	// Servers is the ensemble's size (startEnsemble).
	Servers int
	// OutDir, if set, receives each server's log and zoo.cfg.
	OutDir string
	// Keep keeps the servers' data directories.
	Keep bool
}

// underTest is what the phases need of a started target.
type underTest struct {
	Addrs []string
	Pid   int               // standalone
	Procs []load.ServerProc // ensemble
	// Finish stops the target and saves its files; it fills in what the
	// report says about the end of the run.
	Finish func(info *ServerInfo)
}

// StartStandalone starts one server.
func StartStandalone(ctx context.Context, cfg StartSpec, lc launch.LaunchConfig, info *ServerInfo) (underTest, error) {
	srv, err := launch.Launch(ctx, info.Target, lc)
	if err != nil {
		return underTest{}, err
	}
	info.Version, info.Argv, info.Addr = srv.Version, srv.Argv, srv.Addr
	return underTest{
		Addrs: []string{srv.Addr}, Pid: srv.PID(),
		Finish: func(*ServerInfo) {
			srv.Stop()
			if cfg.OutDir != "" {
				CopyFile(srv.LogPath, filepath.Join(cfg.OutDir, info.FileBase()+".log"))
				CopyFile(srv.ZooCfgPath, filepath.Join(cfg.OutDir, info.FileBase()+".zoo.cfg"))
			}
			if !cfg.Keep {
				// Free the disk before the next target runs.
				os.RemoveAll(srv.DataDir)
			}
		},
	}, nil
}

// StartEnsemble starts cfg.Servers members and spreads the connections
// over all of them, followers first (see Ensemble.ClientOrder).
func StartEnsemble(ctx context.Context, cfg StartSpec, lc launch.LaunchConfig, info *ServerInfo) (underTest, error) {
	ens, err := launch.LaunchEnsemble(ctx, info.Target, launch.EnsembleConfig{LaunchConfig: lc, Servers: cfg.Servers})
	if err != nil {
		return underTest{}, err
	}
	leader, err := ens.WaitWhole(ctx, WholeTimeout)
	if err != nil {
		ens.Stop()
		return underTest{}, err
	}
	info.Version, info.Argv = ens.Version, ens.Members[0].Argv
	info.Addr = strings.Join(ens.Addrs(), ",")
	info.Leader = MemberName(ens, leader)
	ut := underTest{Addrs: ens.ClientOrder(leader)}
	for _, m := range ens.Members {
		mode := launch.ModeFollower
		if m.ID == leader {
			mode = launch.ModeLeader
		}
		info.Members = append(info.Members, MemberInfo{ID: m.ID, Addr: m.Addr, PID: m.PID(), Mode: mode})
		ut.Procs = append(ut.Procs, load.ServerProc{Name: fmt.Sprintf("server.%d %s", m.ID, mode), PID: m.PID()})
	}
	ut.Finish = func(info *ServerInfo) {
		if after := ens.Leader(ctx); after != leader {
			info.LeaderAfter = MemberName(ens, after)
		}
		ens.Stop()
		for _, m := range ens.Members {
			if cfg.OutDir != "" {
				base := fmt.Sprintf("%s.s%d", info.FileBase(), m.ID)
				CopyFile(m.LogPath, filepath.Join(cfg.OutDir, base+".log"))
				CopyFile(m.ZooCfgPath, filepath.Join(cfg.OutDir, base+".zoo.cfg"))
			}
			if !cfg.Keep {
				os.RemoveAll(m.DataDir)
			}
		}
	}
	return ut, nil
}

// WholeTimeout bounds a wait for an ensemble that was whole, or is
// rejoining after one member restarted, to be whole again.
const WholeTimeout = 2 * time.Minute

// MemberName names member id with its client address, or says there was
// no leader (id 0).
func MemberName(e *launch.Ensemble, id int) string {
	m := e.Member(id)
	if m == nil {
		return "none (ensemble not whole)"
	}
	return fmt.Sprintf("server.%d (%s)", id, m.Addr)
}

func CopyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// FileBase is the base name of the files kept of this start of the
// target: "corral", or "corral.r2" when repeated.
func (s *ServerInfo) FileBase() string {
	base := s.Target
	if s.Run > 0 {
		base = fmt.Sprintf("%s.r%d", s.Target, s.Run)
	}
	if len(s.Phases) > 0 {
		base += "." + strings.Join(s.Phases, "-")
	}
	return base
}

// Label names the target and, when repeated, the run.
func (s *ServerInfo) Label() string {
	if len(s.Phases) > 0 {
		return load.RunLabel(s.Target, s.Run) + " (" + strings.Join(s.Phases, ", ") + ")"
	}
	return load.RunLabel(s.Target, s.Run)
}

// WriteDetails writes what a report's list of systems says of this
// start after its name: the address, the command line, the JVM heap, the
// version srvr reported, the leader and each member's pid, and a warning
// or failure. It ends the line.
func (s *ServerInfo) WriteDetails(w io.Writer) {
	if s.Addr != "" {
		fmt.Fprintf(w, " %s", s.Addr)
	}
	if len(s.Argv) > 0 {
		fmt.Fprintf(w, " `%s`", ShownArgv(s.Argv))
	}
	if s.JavaHeap != "" {
		fmt.Fprintf(w, " (JVM heap -Xmx%s)", s.JavaHeap)
	}
	if s.Version != "" {
		fmt.Fprintf(w, "; srvr: %s", s.Version)
	}
	if s.Leader != "" {
		fmt.Fprintf(w, "; leader: %s", s.Leader)
	}
	if len(s.Members) > 0 {
		fmt.Fprintf(w, " (%s)", s.MemberPIDs())
	}
	if s.LeaderAfter != "" {
		fmt.Fprintf(w, "; WARNING: leader changed during the run, to %s", s.LeaderAfter)
	}
	if s.Err != "" {
		fmt.Fprintf(w, "; FAILED: %s", s.Err)
	}
	fmt.Fprintln(w)
}

// MemberPIDs lists an ensemble's members as "server.1 pid 4242, ...".
func (s *ServerInfo) MemberPIDs() string {
	var pids []string
	for _, m := range s.Members {
		pids = append(pids, fmt.Sprintf("server.%d pid %d", m.ID, m.PID))
	}
	return strings.Join(pids, ", ")
}

// OtherCPU is the machine's busy CPU time not charged to the server or the
// load generator: other processes that shared the CPUs with the
// measurement, and kernel threads (journal commits, block I/O completion)
// that may be working for the server. Clock-tick granularity makes small
// values noise.
func OtherCPU(r *load.PhaseResult) (float64, bool) {
	if r.MachineCPU == nil || r.ServerCPU == nil {
		return 0, false
	}
	return max(0, *r.MachineCPU-*r.ServerCPU-r.LoadgenCPU), true
}

// ShownArgv is a server's command line as a report shows it: paths under
// the working directory relative to it and the home directory as ~, so
// that a stored report names no directory of the machine it ran on.
func ShownArgv(argv []string) string {
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	out := make([]string, len(argv))
	for i, a := range argv {
		if wd != "" && wd != "/" {
			a = strings.ReplaceAll(a, wd+string(os.PathSeparator), "")
		}
		if home != "" && home != "/" {
			a = strings.ReplaceAll(a, home+string(os.PathSeparator), "~"+string(os.PathSeparator))
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// PopulateLimit bounds the unmeasured creation of keys.
const PopulateLimit = 5 * time.Minute

// MeanSD is the mean and sample standard deviation of xs (0, 0 for none;
// SD 0 for one).
func MeanSD(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	mean := s / float64(len(xs))
	if len(xs) == 1 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// DurabilityOf is the zoo.cfg durability of target for mode (compare's
// and ycsb's --durability): "" is forceSync=yes and nothing else, the same
// file for both;
// sync, async and diskless are the durability benchmark's configurations
// (DurabilityTargets). ZooKeeper has no diskless mode.
func DurabilityOf(mode, target string) (launch.Durability, error) {
	switch {
	case mode == "":
		return launch.Durability{}, nil
	case launch.Base(target) == launch.TargetCorral && (mode == "sync" || mode == "async" || mode == "diskless"):
		return launch.Durability{Mode: mode}, nil
	case target == launch.TargetZooKeeper && mode == "sync":
		return launch.Durability{}, nil
	case target == launch.TargetZooKeeper && mode == "async":
		return launch.Durability{NoForceSync: true}, nil
	case target == launch.TargetZooKeeper && mode == "diskless":
		return launch.Durability{}, errors.New("bench: ZooKeeper has no diskless mode (launch corral only)")
	}
	return launch.Durability{}, fmt.Errorf("bench: unknown durability %q (want sync, async or diskless)", mode)
}

type LogFunc func(msg string, args ...any)

// ReconnectPause is how long a client of the failures benchmark first
// waits after trying every server once without getting a session (it
// backs off from there, see tlClient.run). The Java client waits up to a
// second (and a random 0-1s before each reconnect); the benchmark measures
// the servers, so it retries soon, but not in a busy loop that would take
// CPU from an election on a small machine.
const ReconnectPause = 25 * time.Millisecond

const DefaultDurSessionTimeout = 30 * time.Second

const DefaultSessionTimeout = 10 * time.Second
