package command

import (
	"context"
	"fmt"

	"github.com/corral-db/corral/bench/kv"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/plot"
)

// kvCommand runs `corral bench kv`: corral's key-value store (a replica
// group of `corral server` processes with store=kv) against an etcd
// cluster, YCSB A, B, C, F and 100% writes over the ACaZoo paper's
// records (package bench/kv describes it):
//
//	corral bench kv [-workload A,B,C,F,W] [-records 10000] [-threads 16]
//	                [-warmup 2s] [-duration 10s] [-seed 1] [-systems corral,etcd]
//	                [-members 3] [-durability sync,async,diskless] [-tick-time 500]
//	                [-leader-policy fixed,random,roundrobin,coolest] [-server-opt k=v]...
//	                [-groups 1,2,4] [-routing routed,forwarded] [-compaction-sample 100ms]
//	                [-no-coalesce]
//	                [-cpu-budget=true] [-cpu-quota 1] [-taskset=true] [-corral-bin PATH] [-etcd-bin etcd]
//	                [-workdir DIR] [-keep] [-out DIR] [-q]
func kvCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("kv", env)
	cfg := kv.DefaultConfig()
	kf := kvFlags{records: &cfg.Records, threads: &cfg.Threads, members: &cfg.Members, tickMs: &cfg.TickTimeMs,
		seed: &cfg.Seed, corralBin: &cfg.CorralBin, workDir: &cfg.WorkDir, keep: &cfg.Keep}
	kf.register(fs, env, "one operation", "report.md, results.jsonl, series.csv and kv-throughput-WORKLOAD.png")
	workloads := fs.String("workload", kv.DefaultWorkloads, "workloads in order, some of A,B,C,D,E,F (YCSB) and W (100% writes)")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured warm-up per workload")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured duration per workload")
	systems := fs.String("systems", "corral,etcd", "systems to launch in turn, of corral and etcd")
	durability := fs.String("durability", cfg.Durability, "corral's durability, comma-separated, corral run once per value: sync, async or diskless")
	policies := fs.String("leader-policy", "", "comma-separated kv.leaderPolicy values, corral run once per value (fixed, random, roundrobin, coolest); empty: no such line, the server's default")
	groups := fs.String("groups", "1", "comma-separated replica-group counts, corral run once per count (and policy); more than 1 launches `corral kv cluster -spawn` with threads and records scaled by the count, and fits the USL over three or more counts")
	routing := fs.String("routing", kv.RoutingRouted, "comma-separated routing of sharded runs (groups > 1), each run once per entry: routed (the client sends each row to its RG's leader) or forwarded (to the endpoints, which forward it)")
	fs.DurationVar(&cfg.CompactionSample, "compaction-sample", cfg.CompactionSample, "how often a one-RG corral run reads each member's compaction state (its Prometheus endpoint) while measuring; 0: never")
	fs.BoolVar(&cfg.NoCoalesce, "no-coalesce", false, "corral's client sends each Get alone instead of coalescing concurrent Gets into MultiGets")
	var opts stringsFlag
	fs.Var(&opts, "server-opt", "extra zoo.cfg line key=value for every corral member (repeatable)")
	fs.BoolVar(&cfg.CPUBudget, "cpu-budget", cfg.CPUBudget, "give each member its own CPU budget: GOMAXPROCS=1 and a cgroup v2 cpu.max, else taskset to one CPU")
	fs.Float64Var(&cfg.CPUQuota, "cpu-quota", cfg.CPUQuota, "cores per member under cgroup v2")
	fs.BoolVar(&cfg.Taskset, "taskset", cfg.Taskset, "without a cgroup v2 cpu controller, pin each member to one CPU (false: GOMAXPROCS=1 is the only cap, the kernel shares the CPUs)")
	fs.StringVar(&cfg.EtcdBin, "etcd-bin", cfg.EtcdBin, "etcd binary (make etcd installs Debian's etcd-server)")
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
	cfg.Durabilities = launch.SplitList(*durability)
	cfg.LeaderPolicies = launch.SplitList(*policies)
	if cfg.Groups, err = launch.ParseInts(*groups); err != nil {
		return bad(fmt.Errorf("-groups: %w", err))
	}
	cfg.Routing = launch.SplitList(*routing)
	cfg.ServerOpts = opts
	cfg.OutDir = kf.out
	cfg.CommandLine = commandLine(append([]string{"corral", "bench", "kv"}, args...))
	l := loadFlags{quiet: kf.quiet}
	cfg.Log = l.logger(env)
	if err := cfg.Fill(); err != nil {
		return bad(err)
	}
	return runExperiment(ctx, env, "kv", kf.out, kv.Run, cfg, func(dir string, rep *kv.Report) error {
		if len(rep.Results) == 0 {
			return nil
		}
		_, err := plot.WriteKVPlots(dir, rep)
		return err
	})
}
