package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/corral-db/corral/bench/durability"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/plot"
)

// maxDurPhase bounds each phase of a durability run.
const maxDurPhase = 30 * time.Minute

// durabilityCommand runs `corral bench durability`: the diskless thesis's
// evaluation (../shared/papers/000_*, chapter 5) for corral's three
// durability modes and ZooKeeper with and without forceSync:
//
//	corral bench durability [--configs corral-sync,corral-async,corral-diskless,zk-forcesync,zk-noforcesync]
//	                        [--servers 3] [--clients 60] [--value 128] [--warmup 1s]
//	                        [--create-duration 20s] [--get-duration 10s]
//	                        [--cpu-rate 1000] [--cpu-duration 10s]
//	                        [--queue-duration 10s] [--queue-producers 1] [--queue-consumers 1]
//	                        [--queue-value 20] [--queue-max-backlog 100] [--session-timeout 30s]
//	                        [--figs 5.1,5.2,5.3,5.4,5.5,5.6]
//	                        [--snap-counts 100000,250000,500000] [--restore-counts 100000,250000,500000]
//	                        [--out DIR] [server flags as for compare] [-q]
//
// Each configuration in turn is a fresh ensemble on 127.0.0.1 whose
// zoo.cfg differs from compare's only in its durability lines (see
// DurabilityTargets); it serves four phases of synchronous clients (one
// request outstanding each, as the thesis's Algorithm 5.5 and Appendix
// A.10), and is stopped by PID:
//
//   - cpu (Fig. 5.5): --clients create nodes at --cpu-rate per second
//     together; the members' CPU from /proc, summed, in total and per
//     second. A create due while every client waits is dropped and
//     counted ("missed"): the rate the servers did not keep.
//   - queue (Fig. 5.6): ZooKeeper's queue recipe with --queue-producers
//     creating sequential nodes and --queue-consumers listing, sorting and
//     taking them (getData, delete); consumed messages per second and
//     end-to-end latency, which includes the time in the queue
//     (--queue-max-backlog bounds it).
//   - create (Fig. 5.1): --clients create nodes as fast as answered;
//     throughput per second.
//   - get (Fig. 5.2): --clients getData those nodes.
//
// Then, on a fresh ensemble of the configuration, the tree is grown with
// pipelined creates through the sizes of --snap-counts and
// --restore-counts (k and M suffixes allowed), ascending, and at each:
//
//   - snapshot (Fig. 5.3): existing nodes are overwritten until every
//     member has written a snapshot (its own snapCount rule), writing
//     paused while one runs; its duration is the change of mntr's
//     zk_sum_snapshottime over zk_cnt_snapshottime, as ZooKeeper and
//     corral both report them.
//   - restore (Fig. 5.4): --restore-trials `bench failover` trials (the
//     median reported): the leader is
//     SIGKILLed under a writer; the time from the kill to the first write
//     accepted, then the time for the restarted server to rejoin with the
//     whole tree.
//
// --figs selects figures: the phases of the others are skipped.
//
// The cpu and queue phases come first so that every configuration serves
// them from a nearly empty tree. The thesis ran 30 minutes per figure; the
// defaults take about five and a half minutes on a 2-core machine for the
// five configurations, and the durations scale up. The report gives the
// exact command line, the load average and the CPU used outside the
// benchmark in every phase, a table per phase with a column per
// configuration, the create-throughput targets (diskless ≥ 4x
// ZooKeeper with forceSync, ≥ 1.3x corral sync: reported, never asserted),
// the per-second series, and with --out the PNG plots of those series.
func durabilityCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("durability", env)
	var sf serverFlags
	sf.register(fs, env)
	cfg := durability.DefaultConfig()
	configs := fs.String("configs", durability.DurTargetNamesHelp, "configurations to measure, in order")
	fs.IntVar(&cfg.Servers, "servers", cfg.Servers, "servers per ensemble")
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "synchronous clients of the create, get and cpu phases")
	fs.IntVar(&cfg.ValueSize, "value", cfg.ValueSize, "data size in bytes of the create and cpu phases' nodes")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured warm-up before each phase")
	fs.DurationVar(&cfg.CreateDuration, "create-duration", cfg.CreateDuration, "measured create phase (Fig. 5.1); 0 skips it and the get phase")
	fs.DurationVar(&cfg.GetDuration, "get-duration", cfg.GetDuration, "measured getData phase (Fig. 5.2); 0 skips it")
	fs.Float64Var(&cfg.CPURate, "cpu-rate", cfg.CPURate, "creates per second of the cpu phase (Fig. 5.5)")
	fs.DurationVar(&cfg.CPUDuration, "cpu-duration", cfg.CPUDuration, "measured cpu phase; 0 skips it")
	fs.DurationVar(&cfg.QueueDuration, "queue-duration", cfg.QueueDuration, "measured message-queue phase (Fig. 5.6); 0 skips it")
	fs.IntVar(&cfg.QueueProducers, "queue-producers", cfg.QueueProducers, "queue producers (synchronous clients)")
	fs.IntVar(&cfg.QueueConsumers, "queue-consumers", cfg.QueueConsumers, "queue consumers (synchronous clients)")
	fs.IntVar(&cfg.QueueValueSize, "queue-value", cfg.QueueValueSize, "message size in bytes (at least 8: the send time)")
	fs.Int64Var(&cfg.QueueMaxBacklog, "queue-max-backlog", cfg.QueueMaxBacklog, "producers wait while this many messages are unconsumed")
	fs.DurationVar(&cfg.SessionTimeout, "session-timeout", cfg.SessionTimeout, "session timeout every client asks for")
	figs := fs.String("figs", durability.DurFigsAll, "figures to measure; the phases of the others are skipped")
	snapCounts := fs.String("snap-counts", durability.FormatDurCounts(cfg.SnapCounts),
		"tree sizes (znodes) for snapshot latency (Fig. 5.3), e.g. 100k,1M; empty skips it")
	restoreCounts := fs.String("restore-counts", durability.FormatDurCounts(cfg.RestoreCounts),
		"tree sizes (znodes) for restoration after a leader kill (Fig. 5.4); empty skips it")
	fs.IntVar(&cfg.RestoreTrials, "restore-trials", cfg.RestoreTrials,
		"leader kills timed at each --restore-counts size; the median is reported")
	out := fs.String("out", "", "directory for report.md, results.jsonl, the PNG plots and server logs "+
		"(default: the report and JSON lines go to stdout and no plots are drawn)")
	quiet := fs.Bool("q", false, "no progress messages on stderr")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench durability:", err)
		return 2
	}
	if err := sf.validate(); err != nil {
		return bad(err)
	}
	targets, err := durability.ParseDurabilityTargets(*configs)
	if err != nil {
		return bad(err)
	}
	if err := cfg.ParseTreeFlags(*figs, *snapCounts, *restoreCounts); err != nil {
		return bad(err)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"--warmup", cfg.Warmup}, {"--create-duration", cfg.CreateDuration}, {"--get-duration", cfg.GetDuration},
		{"--cpu-duration", cfg.CPUDuration}, {"--queue-duration", cfg.QueueDuration},
	} {
		if d.v < 0 || d.v > maxDurPhase {
			return bad(fmt.Errorf("%s must be in [0, %v]", d.name, maxDurPhase))
		}
	}
	switch {
	case cfg.Servers < 1 || cfg.Servers > launch.MaxServers:
		return bad(fmt.Errorf("--servers must be in [1, %d]", launch.MaxServers))
	case cfg.Clients < 1 || cfg.Clients > launch.MaxConns:
		return bad(fmt.Errorf("--clients must be in [1, %d]", launch.MaxConns))
	case cfg.ValueSize < 0 || cfg.ValueSize > 1<<20-1024 || cfg.QueueValueSize < 0 || cfg.QueueValueSize > 1<<20-1024:
		return bad(errors.New("--value and --queue-value must be in [0, 1047552] (jute.maxbuffer)"))
	case cfg.CPURate <= 0 || cfg.CPURate > 1e6:
		return bad(errors.New("--cpu-rate must be in (0, 1000000]"))
	case cfg.QueueProducers < 1 || cfg.QueueConsumers < 1 || cfg.QueueProducers+cfg.QueueConsumers > launch.MaxConns:
		return bad(fmt.Errorf("--queue-producers and --queue-consumers must be at least 1 and together at most %d", launch.MaxConns))
	case cfg.QueueMaxBacklog < 1 || cfg.QueueMaxBacklog > 50000:
		// A getChildren reply of more names would pass jute.maxbuffer.
		return bad(errors.New("--queue-max-backlog must be in [1, 50000]"))
	case cfg.SessionTimeout <= 0 || cfg.SessionTimeout > 10*time.Minute:
		return bad(errors.New("--session-timeout must be in (0, 10m]"))
	case cfg.CreateDuration == 0 && cfg.GetDuration > 0:
		return bad(errors.New("--get-duration needs the create phase (--create-duration > 0)"))
	case cfg.RestoreTrials < 1 || cfg.RestoreTrials > durability.MaxRestoreTrials:
		return bad(fmt.Errorf("--restore-trials %d: want 1 to %d", cfg.RestoreTrials, durability.MaxRestoreTrials))
	case len(cfg.RestoreCounts) > 0 && cfg.Servers < 3:
		return bad(errors.New("--restore-counts needs --servers 3 or more (or --restore-counts '')"))
	}
	cfg.Targets = targets
	cfg.CorralBin, cfg.ZKLib, cfg.Java, cfg.JavaHeap = sf.CorralBin, sf.ZKLib, sf.Java, sf.JavaHeap
	cfg.WorkDir, cfg.Keep, cfg.Timing, cfg.OutDir = sf.WorkDir, sf.Keep, sf.Timing, *out
	cfg.CommandLine = commandLine(os.Args)
	l := loadFlags{quiet: *quiet}
	cfg.Log = l.logger(env)
	return runExperiment(ctx, env, "durability", *out, durability.Run, cfg, plot.WriteDurabilityPlots)
}

// commandLine joins argv as a POSIX shell would read it back: words with
// anything but plain characters are single-quoted.
func commandLine(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		plain := a != ""
		for _, r := range a {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)) {
				plain = false
				break
			}
		}
		if plain {
			words[i] = a
		} else {
			words[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}
