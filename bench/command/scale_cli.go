package command

import (
	"context"
	"fmt"
	"os"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/plot"
	"github.com/corral-db/corral/bench/scale"
)

// scaleTargets turns a --launch value into the targets to start, in order.
func scaleTargets(s string) ([]string, error) {
	switch s {
	case launch.TargetCorral, launch.TargetZooKeeper:
		return []string{s}, nil
	case "both":
		return []string{launch.TargetCorral, launch.TargetZooKeeper}, nil
	}
	return nil, fmt.Errorf("--launch %q (want %s, %s or both)", s, launch.TargetCorral, launch.TargetZooKeeper)
}

// scaleCommand runs `corral bench scale`: the study's scaling experiment
// (../shared/papers/004_*) with a Universal Scalability Law fit:
//
//	corral bench scale [--launch corral|zookeeper|both] [--servers 1,2,3,4,6,8] [--max-servers 8]
//	                   [--clients-per-server 2] [--inflight 32] [--workload get|set|create]
//	                   [--value 1024] [--keys 1000] [--durability sync|async|diskless]
//	                   [--warmup 3s] [--duration 5s] [--reps 1]
//	                   [--out DIR] [server flags as for compare] [-q]
//
// For each target and each N, a fresh set of N servers on 127.0.0.1 (N = 1
// standalone) serves 2·N connections; the throughput of the measured
// phase is X(N). The report has a table per target (N, X(N), the fitted
// X(N), speedup and efficiency) and the fitted λ, σ, κ, R² and N*; with
// --out the figure usl.png. The defaults take about five minutes for both
// Targets on a 2-core machine, most of it starting ZooKeeper ensembles.
func scaleCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("scale", env)
	cfg := scale.DefaultConfig()
	var sf sideBySideFlags
	sf.register(fs, env, &cfg.Durability)
	servers := fs.String("servers", launch.JoinInts(cfg.Servers), "N: the server counts to measure (N = 1 is standalone)")
	fs.IntVar(&cfg.MaxServers, "max-servers", cfg.MaxServers, "skip the N above this (the machine's limit)")
	fs.IntVar(&cfg.ClientsPerServer, "clients-per-server", cfg.ClientsPerServer, "k: N servers get k·N client connections")
	fs.IntVar(&cfg.Inflight, "inflight", cfg.Inflight, "requests in flight per connection")
	workload := fs.String("workload", string(cfg.Workload), "get, set or create")
	fs.IntVar(&cfg.ValueSize, "value", cfg.ValueSize, "value size in bytes")
	fs.Int64Var(&cfg.Keys, "keys", cfg.Keys, "nodes created (unmeasured) before a get or set phase")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured warm-up per phase")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured duration per phase")
	fs.IntVar(&cfg.Reps, "reps", cfg.Reps, "measured phases per N (each a point of the fit)")
	out := fs.String("out", "", "directory for report.md, results.jsonl, usl.png and server logs "+
		"(default: the report and JSON lines go to stdout and no plot is drawn)")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench scale:", err)
		return 2
	}
	var err error
	if cfg.Targets, err = sf.targets(); err != nil {
		return bad(err)
	}
	if cfg.Servers, err = launch.ParseInts(*servers); err != nil {
		return bad(fmt.Errorf("--servers: %w", err))
	}
	cfg.Workload = load.Workload(*workload)
	if err := cfg.Validate(); err != nil {
		return bad(err)
	}
	cfg.Settings, cfg.OutDir = sf.Settings, *out
	cfg.Command = commandLine(os.Args)
	l := loadFlags{quiet: sf.quiet}
	cfg.Log = l.logger(env)
	return runExperiment(ctx, env, "scale", *out, scale.Run, cfg, plot.WriteScalePlot)
}
