package command

import (
	"context"
	"fmt"
	"strings"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/paper"
)

// paperCommand is `corral bench paper`.
func paperCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("paper", env)
	var sf serverFlags
	sf.register(fs, env)
	d := paper.DefaultConfig()
	targets := fs.String("targets", strings.Join(d.Targets, ","), "servers to measure, in order")
	servers := fs.String("servers", launch.JoinInts(d.Servers), "Table 2: ensemble sizes")
	workers := fs.String("workers", launch.JoinInts(d.Workers), "Table 2: worker counts (empty: skip Table 2)")
	clients := fs.String("clients", launch.JoinInts(d.Clients), "Table 3: client counts (paper: 50,100,200; empty: skip Table 3)")
	barriers := fs.String("barriers", launch.JoinInts(d.Barriers), "Table 3: barriers in succession (paper: 200,400,800,1600)")
	cfg := d
	fs.IntVar(&cfg.BarrierServers, "barrier-servers", d.BarrierServers, "Table 3: ensemble size")
	fs.IntVar(&cfg.Creates, "creates", d.Creates, "Table 2: creates per worker (paper: 50000)")
	fs.IntVar(&cfg.ValueSize, "value", d.ValueSize, "Table 2: create data size in bytes")
	fs.DurationVar(&cfg.CellTimeout, "cell-timeout", d.CellTimeout, "bound on each cell's measurement")
	fs.DurationVar(&cfg.SessionTimeout, "session-timeout", d.SessionTimeout, "clients' session timeout")
	out := fs.String("out", "", "directory for report.md, results.jsonl and server logs (default: JSON lines go to stdout after the report)")
	quiet := fs.Bool("q", false, "no progress messages on stderr")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench paper:", err)
		return 2
	}
	if err := sf.validate(); err != nil {
		return bad(err)
	}
	var err error
	cfg.Targets = launch.SplitList(*targets)
	for _, p := range []struct {
		name string
		s    string
		to   *[]int
	}{{"servers", *servers, &cfg.Servers}, {"workers", *workers, &cfg.Workers}, {"clients", *clients, &cfg.Clients}, {"barriers", *barriers, &cfg.Barriers}} {
		if *p.to, err = launch.ParseInts(p.s); err != nil {
			return bad(fmt.Errorf("--%s: %w", p.name, err))
		}
	}
	if len(cfg.Targets) == 0 {
		return bad(fmt.Errorf("--targets is empty"))
	}
	if cfg.CellTimeout <= 0 || cfg.CellTimeout > launch.MaxPhase {
		return bad(fmt.Errorf("--cell-timeout must be in (0, %v]", launch.MaxPhase))
	}
	if err := cfg.Validate(); err != nil {
		return bad(err)
	}
	cfg.CorralBin, cfg.ZKLib, cfg.Java, cfg.JavaHeap = sf.CorralBin, sf.ZKLib, sf.Java, sf.JavaHeap
	cfg.WorkDir, cfg.Keep, cfg.Timing, cfg.OutDir = sf.WorkDir, sf.Keep, sf.Timing, *out
	cfg.Command = strings.Join(append([]string{"corral", "bench", "paper"}, args...), " ")
	l := loadFlags{quiet: *quiet}
	cfg.Log = l.logger(env)
	return runExperiment(ctx, env, "paper", *out, paper.Run, cfg, nil)
}
