package command

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/ycsb"
)

// ycsbCommand runs `corral bench ycsb`: YCSB's core workloads A-F and the
// ZooKeeper study's S (95% read, 5% update) over 1 KB records stored one
// per znode (the mapping is described in ycsb_workload.go):
//
//	corral bench ycsb [--workload A,B,C,D,E,F,S] [--distribution zipfian|uniform|latest]
//	                  [--recordcount 10000] [--threads 16] [--load-inflight 16]
//	                  [--warmup 2s] [--duration 10s] [--target OPS/S] [--maxscanlength 100]
//	                  [--seed 1] [--skip-load] [--table NAME]
//	                  [--launch corral|zookeeper|both] [-n 3] [--durability sync|async|diskless]
//	                  [--connect HOST:PORT,... [--pids PID,...]]
//	                  [--session-timeout 30s] [--out DIR] [server flags as for compare] [-q]
//
// For each system (a launched corral and ZooKeeper in turn, or the
// servers --connect names) it creates /ycsb/<table>, loads --recordcount
// Records with pipelined creates, and runs each workload in turn: --threads
// threads with a session each, in a closed loop unless --target paces them,
// an unmeasured --warmup and a measured --duration. Without --distribution
// each workload takes its own (D latest, S uniform, the others zipfian).
// The report has a table per system (throughput and p50/p99/p99.9/max
// latency per operation, errors, read-modify-write conflicts, server CPU
// per operation and the generator's own CPU), corral/ZooKeeper ratios when
// both ran, and JSON lines, to stdout or with --out DIR into
// DIR/report.md and DIR/results.jsonl beside the servers' logs.
func ycsbCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("ycsb", env)
	var sf serverFlags
	sf.register(fs, env)
	cfg := ycsb.DefaultConfig()
	workloads := fs.String("workload", ycsb.DefaultYCSBWorkloads, "YCSB workloads to run in order, some of A,B,C,D,E,F,S")
	distribution := fs.String("distribution", "", "request distribution for every workload: zipfian, uniform or latest (default: each workload's own)")
	maxScan := fs.Int("maxscanlength", ycsb.DefaultYCSBMaxScanLength, "longest scan of workload E (lengths uniform from 1)")
	fs.Int64Var(&cfg.RecordCount, "recordcount", cfg.RecordCount, "records loaded")
	fs.IntVar(&cfg.Threads, "threads", cfg.Threads, "client threads, a session each (the load uses as many sessions)")
	fs.IntVar(&cfg.LoadInflight, "load-inflight", cfg.LoadInflight, "creates in flight per load session")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured warm-up before each workload")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured duration of each workload")
	fs.Float64Var(&cfg.TargetOps, "target", 0, "pace the threads to this many operations a second together, latencies also from intended starts (0: closed loop)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the threads' random streams")
	fs.BoolVar(&cfg.SkipLoad, "skip-load", false, "do not load: the table already holds --recordcount records")
	fs.StringVar(&cfg.Table, "table", "", "table node under /ycsb (default: usertable when launched, a new name per run with --connect)")
	launchFlag := fs.String("launch", "both", "systems to start on 127.0.0.1 and measure in turn: corral, zookeeper or both (ignored with --connect)")
	fs.IntVar(&cfg.Servers, "n", cfg.Servers, "servers per launched system: 1 is standalone, more an ensemble")
	fs.StringVar(&cfg.Durability, "durability", "", "launched systems' durability: sync, async or diskless (corral only) (default: forceSync=yes, as compare)")
	connect := fs.String("connect", "", "comma-separated host:port list of running servers to measure instead of launching")
	pids := fs.String("pids", "", "with --connect: comma-separated process ids of local servers whose CPU to measure")
	fs.DurationVar(&cfg.SessionTimeout, "session-timeout", cfg.SessionTimeout, "session timeout every client asks for")
	out := fs.String("out", "", "directory for report.md, results.jsonl and server logs (default: JSON lines go to stdout after the report)")
	quiet := fs.Bool("q", false, "no progress messages on stderr")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench ycsb:", err)
		return 2
	}
	if err := sf.validate(); err != nil {
		return bad(err)
	}
	var err error
	if cfg.Workloads, err = ycsb.ParseYCSBWorkloads(*workloads, *distribution, *maxScan); err != nil {
		return bad(err)
	}
	if *maxScan < 1 {
		return bad(fmt.Errorf("--maxscanlength must be in [1, %d]", ycsb.MaxYCSBScanLength))
	}
	// Zero would mean "the default" to RunYCSB; on the command line it is
	// a mistake.
	switch {
	case cfg.RecordCount < 1 || cfg.RecordCount > ycsb.MaxYCSBRecordCount:
		return bad(fmt.Errorf("--recordcount must be in [1, %d]", ycsb.MaxYCSBRecordCount))
	case cfg.Threads < 1 || cfg.Threads > ycsb.MaxYCSBThreads:
		return bad(fmt.Errorf("--threads must be in [1, %d]", ycsb.MaxYCSBThreads))
	case cfg.LoadInflight < 1 || cfg.LoadInflight > launch.MaxInflight:
		return bad(fmt.Errorf("--load-inflight must be in [1, %d]", launch.MaxInflight))
	case cfg.Servers < 1 || cfg.Servers > launch.MaxServers:
		return bad(fmt.Errorf("-n must be in [1, %d]", launch.MaxServers))
	}
	if cfg.Duration <= 0 || cfg.Duration > launch.MaxPhase || cfg.Warmup < 0 || cfg.Warmup > launch.MaxPhase {
		return bad(fmt.Errorf("--duration must be in (0, %v] and --warmup in [0, %v]", launch.MaxPhase, launch.MaxPhase))
	}
	if cfg.SessionTimeout <= 0 || cfg.SessionTimeout > 10*time.Minute {
		return bad(errors.New("--session-timeout must be in (0, 10m]"))
	}
	cfg.Connect = launch.SplitList(*connect)
	if len(cfg.Connect) > 0 {
		cfg.Launch = nil
		for _, p := range launch.SplitList(*pids) {
			pid, err := strconv.Atoi(p)
			if err != nil || pid <= 0 {
				return bad(fmt.Errorf("--pids: bad process id %q", p))
			}
			cfg.PIDs = append(cfg.PIDs, pid)
		}
	} else {
		switch *launchFlag {
		case "both":
			cfg.Launch = []string{launch.TargetCorral, launch.TargetZooKeeper}
		case launch.TargetCorral, launch.TargetZooKeeper:
			cfg.Launch = []string{*launchFlag}
		default:
			return bad(fmt.Errorf("--launch must be corral, zookeeper or both, not %q", *launchFlag))
		}
		if *pids != "" {
			return bad(errors.New("--pids goes with --connect (launched servers are measured anyway)"))
		}
	}
	cfg.CorralBin, cfg.ZKLib, cfg.Java, cfg.JavaHeap = sf.CorralBin, sf.ZKLib, sf.Java, sf.JavaHeap
	cfg.WorkDir, cfg.Keep, cfg.Timing, cfg.OutDir = sf.WorkDir, sf.Keep, sf.Timing, *out
	cfg.CommandLine = commandLine(append([]string{"corral", "bench", "ycsb"}, args...))
	l := loadFlags{quiet: *quiet}
	cfg.Log = l.logger(env)
	// The rest of the checks are RunYCSB's; a bad value is still a usage
	// error.
	if err := cfg.Fill(); err != nil {
		return bad(err)
	}
	return runExperiment(ctx, env, "ycsb", *out, ycsb.Run, cfg, nil)
}
