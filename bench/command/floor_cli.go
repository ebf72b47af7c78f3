package command

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

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
	fs.IntVar(&cfg.IdlePings, "idle-pings", d.IdlePings, "idle loopback round trips (to an echo in another process, each after a pause)")
	fs.DurationVar(&cfg.IdleGap, "idle-gap", d.IdleGap, "the pause before each idle round trip")
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
	if cfg.SyncRounds < 1 || cfg.Pings < 1 || cfg.RecordSize < 1 || cfg.PingSize < 1 || cfg.IdlePings < 1 {
		fmt.Fprintln(env.Stderr, "corral bench floor: --rounds, --pings, --idle-pings, --record and --ping-size must be positive")
		return 2
	}
	// Zero would be taken as the default pause (Config's zero values).
	if cfg.IdleGap <= 0 || cfg.IdleGap > floor.MaxIdleGap {
		fmt.Fprintf(env.Stderr, "corral bench floor: --idle-gap must be in (0, %v]\n", floor.MaxIdleGap)
		return 2
	}
	setIdlePeer(&cfg, env)
	cfg.Log = slog.New(slog.NewTextHandler(env.Stderr, nil))
	if *quiet {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return runExperiment(ctx, env, "floor", *out, floor.Run, cfg, nil)
}

// floorEchoCommand is the hidden subcommand the floor probe starts for its
// idle round trips: `corral-bench floor-echo SIZE` (floor.ServeEcho).
const floorEchoCommand = "floor-echo"

// setIdlePeer has the floor's idle round trips cross to another process
// when this binary can start itself.
func setIdlePeer(cfg *floor.Config, env CommandEnv) {
	if env.Self != "" {
		cfg.IdlePeer, cfg.IdlePeerName = floor.ProcessEcho(env.Self, floorEchoCommand), "another process"
	}
}

// floorEcho is `corral-bench floor-echo SIZE`.
func floorEcho(args []string, env CommandEnv) int {
	if len(args) != 1 {
		fmt.Fprintf(env.Stderr, "usage: corral bench %s SIZE\n", floorEchoCommand)
		return 2
	}
	size, err := strconv.Atoi(args[0])
	if err == nil && (size < 1 || size > 1<<20) {
		err = fmt.Errorf("%d out of range [1, %d]", size, 1<<20)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "corral bench %s: SIZE: %v\n", floorEchoCommand, err)
		return 2
	}
	if err := floor.ServeEcho(env.Stdout, size); err != nil {
		fmt.Fprintf(env.Stderr, "corral bench %s: %v\n", floorEchoCommand, err)
		return 1
	}
	return 0
}
