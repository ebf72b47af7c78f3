package command

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/corral-db/corral/bench/floor"
	"github.com/corral-db/corral/bench/launch"
)

// floorCommand is `corral bench floor`.
func floorCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("floor", env)
	d := floor.DefaultConfig()
	cfg := d
	members := fs.String("members", launch.JoinInts(d.Members), "ensemble sizes: concurrent logs synced per round")
	fs.StringVar(&cfg.Dir, "dir", "", "directory on the data directories' disk (default: system temp dir)")
	fs.IntVar(&cfg.SyncRounds, "rounds", d.SyncRounds, "records each log appends and fdatasyncs, per ensemble size")
	fs.IntVar(&cfg.RecordSize, "record", d.RecordSize, "bytes per log record")
	fs.IntVar(&cfg.Pings, "pings", d.Pings, "loopback round trips")
	fs.IntVar(&cfg.PingSize, "ping-size", d.PingSize, "bytes each way per loopback round trip")
	out := fs.String("out", "", "directory for report.md and results.jsonl (default: JSON lines go to stdout after the report)")
	quiet := fs.Bool("q", false, "no progress messages on stderr")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	var err error
	if cfg.Members, err = launch.ParseInts(*members); err != nil || len(cfg.Members) == 0 {
		fmt.Fprintf(env.Stderr, "corral bench floor: --members: want a list of ensemble sizes (%v)\n", err)
		return 2
	}
	if cfg.SyncRounds < 1 || cfg.Pings < 1 || cfg.RecordSize < 1 || cfg.PingSize < 1 {
		fmt.Fprintln(env.Stderr, "corral bench floor: --rounds, --pings, --record and --ping-size must be positive")
		return 2
	}
	cfg.Log = slog.New(slog.NewTextHandler(env.Stderr, nil))
	if *quiet {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return runExperiment(ctx, env, "floor", *out, floor.Run, cfg, nil)
}
