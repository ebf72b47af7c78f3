package command

import (
	"context"
	"fmt"
	"os"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/plot"
	"github.com/corral-db/corral/bench/readratio"
)

// readRatioCommand runs `corral bench readratio`: the ZooKeeper paper's
// saturated throughput against the read ratio (§5.1, Fig. 5, Table 1; Fig.
// 6 with --leader-only):
//
//	corral bench readratio [--launch corral|zookeeper|both] [-servers 3,5] | [--connect HOST:PORT,...]
//	                       [--ratios 0,20,40,60,80,90,100] [--leader-only]
//	                       [--conns 30] [--inflight 32] [--value 1024] [--keys 10000]
//	                       [--warmup 2s] [--duration 5s] [--session-timeout 10s] [--seed 1]
//	                       [--out DIR] [server flags as for compare] [-q]
//
// Per target and ensemble size, an ensemble is started on 127.0.0.1 from
// the same zoo.cfg as compare's, --keys nodes of --value bytes are created
// (unmeasured), and at each read percentage the connections keep --inflight
// GetData/setData requests of random nodes outstanding for the warm-up and
// the measured interval; then the ensemble is stopped by PID. With
// --connect the running ensemble is measured instead (its nodes stay).
func readRatioCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("readratio", env)
	var sf serverFlags
	sf.register(fs, env)
	var mf mixedFlags
	mf.register(fs)
	d := readratio.DefaultConfig()
	servers := fs.String("servers", launch.JoinInts(d.Servers), "ensemble sizes to launch (paper: 3,5,7,9,13)")
	ratios := fs.String("ratios", launch.JoinInts(d.Ratios), "read percentages to measure, in order")
	leaderOnly := fs.Bool("leader-only", false, "connect every client to the leader (the paper's Fig. 6)")
	duration := fs.Duration("duration", d.Duration, "measured interval per read ratio")
	seed := fs.Uint64("seed", d.Seed, "seed of the requests' random choices")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench readratio:", err)
		return 2
	}
	if err := sf.validate(); err != nil {
		return bad(err)
	}
	targets, addrs, err := mf.validate()
	if err != nil {
		return bad(err)
	}
	cfg := d
	cfg.Targets, cfg.Connect = targets, addrs
	if cfg.Servers, err = launch.ParseInts(*servers); err != nil {
		return bad(fmt.Errorf("--servers: %w", err))
	}
	if cfg.Ratios, err = readratio.ParseReadRatios(*ratios); err != nil {
		return bad(err)
	}
	cfg.LeaderOnly, cfg.Duration, cfg.Seed = *leaderOnly, *duration, *seed
	cfg.Conns, cfg.Inflight, cfg.ValueSize, cfg.Keys = mf.conns, mf.inflight, mf.value, mf.keys
	cfg.Warmup, cfg.SessionTimeout = mf.warmup, mf.sessionTimeout
	launchSpecFromFlags(&cfg.LaunchSpec, sf)
	cfg.OutDir, cfg.Log = mf.out, mf.logger(env)
	cfg.Command = commandLine(os.Args)
	if err := cfg.Validate(); err != nil {
		return bad(err)
	}
	return runExperiment(ctx, env, "readratio", mf.out, readratio.Run, cfg, func(dir string, rep *readratio.Report) error {
		if len(rep.Cells) == 0 {
			return nil
		}
		return plot.WriteReadRatioPlot(dir, rep)
	})
}
