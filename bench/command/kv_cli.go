package command

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/corral-db/corral/bench/kv"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/plot"
)

// stringsFlag collects a repeatable flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

var _ flag.Value = (*stringsFlag)(nil)

// kvCommand runs `corral bench kv`: corral's key-value store (a replica
// group of `corral server` processes with store=kv) against an etcd
// cluster, YCSB A, B, C, F and 100% writes over the ACaZoo paper's
// records (package bench/kv describes it):
//
//	corral bench kv [-workload A,B,C,F,W] [-records 10000] [-threads 16]
//	                [-warmup 2s] [-duration 10s] [-seed 1] [-systems corral,etcd]
//	                [-members 3] [-durability sync|async|diskless] [-tick-time 500]
//	                [-leader-policy fixed,random,roundrobin,coolest] [-server-opt k=v]...
//	                [-groups 1,2,4]
//	                [-cpu-budget=true] [-cpu-quota 1] [-corral-bin PATH] [-etcd-bin etcd]
//	                [-workdir DIR] [-keep] [-out DIR] [-q]
func kvCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("kv", env)
	cfg := kv.DefaultConfig()
	workloads := fs.String("workload", kv.DefaultWorkloads, "workloads in order, some of A,B,C,D,E,F (YCSB) and W (100% writes)")
	fs.Int64Var(&cfg.Records, "records", cfg.Records, "records loaded before the workloads")
	fs.IntVar(&cfg.Threads, "threads", cfg.Threads, "client threads, one operation in flight each")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured warm-up per workload")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured duration per workload")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the threads' random streams")
	systems := fs.String("systems", "corral,etcd", "systems to launch in turn, of corral and etcd")
	fs.IntVar(&cfg.Members, "members", cfg.Members, "members per replica group")
	fs.StringVar(&cfg.Durability, "durability", cfg.Durability, "corral's durability: sync, async or diskless")
	fs.IntVar(&cfg.TickTimeMs, "tick-time", cfg.TickTimeMs, "corral's tickTime in milliseconds")
	policies := fs.String("leader-policy", "", "comma-separated kv.leaderPolicy values, corral run once per value (fixed, random, roundrobin, coolest); empty: no such line, the server's default")
	groups := fs.String("groups", "1", "comma-separated replica-group counts, corral run once per count (and policy); more than 1 launches `corral kv cluster -spawn` with threads and records scaled by the count, and fits the USL over three or more counts")
	routing := fs.String("routing", kv.RoutingRouted, "comma-separated routing of sharded runs (groups > 1), each run once per entry: routed (the client sends each row to its RG's leader) or forwarded (to the endpoints, which forward it)")
	var opts stringsFlag
	fs.Var(&opts, "server-opt", "extra zoo.cfg line key=value for every corral member (repeatable)")
	fs.BoolVar(&cfg.CPUBudget, "cpu-budget", cfg.CPUBudget, "give each member its own CPU budget: GOMAXPROCS=1 and a cgroup v2 cpu.max, else taskset to one CPU")
	fs.Float64Var(&cfg.CPUQuota, "cpu-quota", cfg.CPUQuota, "cores per member under cgroup v2")
	fs.StringVar(&cfg.CorralBin, "corral-bin", env.CorralBinary, "corral binary to start (default: the corral beside corral-bench, or built from ./cmd/corral)")
	fs.StringVar(&cfg.EtcdBin, "etcd-bin", cfg.EtcdBin, "etcd binary (make etcd installs Debian's etcd-server)")
	fs.StringVar(&cfg.WorkDir, "workdir", "", "parent of the temporary directory for configuration and data (default: system temp dir)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the temporary directory")
	out := fs.String("out", "", "directory for report.md, results.jsonl, series.csv and kv-throughput-WORKLOAD.png (default: the report and JSON lines to stdout)")
	quiet := fs.Bool("q", false, "no progress messages on stderr")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench kv:", err)
		return 2
	}
	var err error
	if cfg.Workloads, err = kv.ParseWorkloads(*workloads); err != nil {
		return bad(err)
	}
	cfg.Systems = launch.SplitList(*systems)
	if len(cfg.Systems) == 0 {
		return bad(fmt.Errorf("-systems names no system"))
	}
	cfg.LeaderPolicies = launch.SplitList(*policies)
	if cfg.Groups, err = launch.ParseInts(*groups); err != nil {
		return bad(fmt.Errorf("-groups: %w", err))
	}
	cfg.Routing = launch.SplitList(*routing)
	cfg.ServerOpts = opts
	cfg.OutDir = *out
	cfg.CommandLine = commandLine(append([]string{"corral", "bench", "kv"}, args...))
	l := loadFlags{quiet: *quiet}
	cfg.Log = l.logger(env)
	if err := cfg.Fill(); err != nil {
		return bad(err)
	}
	return runExperiment(ctx, env, "kv", *out, kv.Run, cfg, func(dir string, rep *kv.Report) error {
		if len(rep.Results) == 0 {
			return nil
		}
		_, err := plot.WriteKVPlots(dir, rep)
		return err
	})
}
