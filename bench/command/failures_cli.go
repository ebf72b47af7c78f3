package command

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/corral-db/corral/bench/failures"
	"github.com/corral-db/corral/bench/plot"
)

// failuresCommand runs `corral bench failures`: the ZooKeeper paper's Fig.
// 8, throughput over time while members fail:
//
//	corral bench failures [--launch corral|zookeeper|both] [-servers 5] | [--connect HOST:PORT,... --schedule none]
//	                      [--schedule 4s:kill-follower,7s:restart,...] [--reads 70]
//	                      [--duration 38s] [--bucket 100ms]
//	                      [--conns 30] [--inflight 32] [--value 1024] [--keys 10000]
//	                      [--warmup 2s] [--session-timeout 10s] [--seed 1]
//	                      [--out DIR] [server flags as for compare] [-q]
//
// Per target an ensemble is started on 127.0.0.1, --keys nodes are
// created, and the clients keep the mix going for the warm-up and the
// Measured interval while the schedule kills members with SIGKILL and
// restarts them; a client whose server dies moves to another and keeps
// going. Every reply, error and lost request is counted in --bucket
// Buckets. With --connect the timeline of a running ensemble is recorded
// while someone else breaks it.
func failuresCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("failures", env)
	var sf serverFlags
	sf.register(fs, env)
	var mf mixedFlags
	mf.register(fs)
	d := failures.DefaultConfig()
	cfg := d
	fs.IntVar(&cfg.Servers, "servers", d.Servers, "ensemble size to launch (paper: 5)")
	schedule := fs.String("schedule", failures.DefaultFailureSchedule,
		"failures: comma-separated TIME:ACTION from the start of the measured interval, ACTION one of "+
			"kill-leader, kill-follower, kill=N, restart (every member down), restart=N; none for no failures")
	fs.IntVar(&cfg.ReadPct, "reads", d.ReadPct, "percentage of requests that are reads (paper: 70, i.e. 30% writes)")
	fs.DurationVar(&cfg.Duration, "duration", d.Duration, "measured interval (the schedule must fit in it)")
	fs.DurationVar(&cfg.Bucket, "bucket", d.Bucket, "timeline resolution")
	fs.Uint64Var(&cfg.Seed, "seed", d.Seed, "seed of the requests' random choices")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench failures:", err)
		return 2
	}
	if err := sf.validate(); err != nil {
		return bad(err)
	}
	targets, addrs, err := mf.validate()
	if err != nil {
		return bad(err)
	}
	cfg.Targets, cfg.Connect = targets, addrs
	if cfg.Schedule, err = failures.ParseSchedule(*schedule); err != nil {
		return bad(err)
	}
	if len(addrs) > 0 && !flagSet(fs, "schedule") {
		// Nothing to kill: the servers are not ours.
		cfg.Schedule = nil
	}
	cfg.Conns, cfg.Inflight, cfg.ValueSize, cfg.Keys = mf.conns, mf.inflight, mf.value, mf.keys
	cfg.Warmup, cfg.SessionTimeout = mf.warmup, mf.sessionTimeout
	launchSpecFromFlags(&cfg.LaunchSpec, sf)
	cfg.OutDir, cfg.Log = mf.out, mf.logger(env)
	cfg.Command = commandLine(os.Args)
	if err := cfg.Validate(); err != nil {
		return bad(err)
	}
	return runExperiment(ctx, env, "failures", mf.out, failures.Run, cfg, func(dir string, rep *failures.Report) error {
		if len(rep.Runs) == 0 {
			return nil
		}
		return plot.WriteFailuresPlot(dir, rep)
	})
}

// flagSet reports whether the named flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
