package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/corral-db/corral/bench/kv"
	"github.com/corral-db/corral/bench/plot"
)

// kvOutageCommand runs `corral bench kv-outage` (the ACaZoo paper's
// Figs. 16-17; bench/kv/outage.go describes it):
//
//	corral bench kv-outage [-groups 1] [-members 3] [-records 10000] [-threads 64]
//	                       [-warmup 5s] [-after 5s] [-kills 3] [-settle 3s] [-low 0.1]
//	                       [-durability sync] [-tick-time 500] [-op-timeout 2s] [-seed 1]
//	                       [-corral-bin PATH] [-workdir DIR] [-keep] [-out DIR] [-q]
func kvOutageCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("kv-outage", env)
	cfg := kv.DefaultOutageConfig()
	fs.IntVar(&cfg.Groups, "groups", cfg.Groups, "replica groups (the paper: 1); RG 1's leader is killed")
	fs.IntVar(&cfg.Members, "members", cfg.Members, "members per RG (storage node processes)")
	fs.Int64Var(&cfg.Records, "records", cfg.Records, "records loaded before the trials")
	fs.IntVar(&cfg.Threads, "threads", cfg.Threads, "client threads, one read in flight each")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "load before each kill")
	fs.DurationVar(&cfg.After, "after", cfg.After, "load after each kill")
	fs.IntVar(&cfg.Kills, "kills", cfg.Kills, "kills, each followed by a restart of the killed node")
	fs.DurationVar(&cfg.Settle, "settle", cfg.Settle, "time the RGs' leaders must stay put before a trial")
	fs.Float64Var(&cfg.LowFrac, "low", cfg.LowFrac, "the low-throughput window's threshold, a fraction of the pre-kill mean")
	fs.StringVar(&cfg.Durability, "durability", cfg.Durability, "sync, async or diskless")
	fs.IntVar(&cfg.TickTimeMs, "tick-time", cfg.TickTimeMs, "the RGs' tickTime in milliseconds")
	fs.DurationVar(&cfg.OpTimeout, "op-timeout", cfg.OpTimeout, "bound of one read, retries included")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the threads' random streams")
	fs.StringVar(&cfg.CorralBin, "corral-bin", env.CorralBinary, "corral binary to start (default: the corral beside corral-bench, or built from ./cmd/corral)")
	fs.StringVar(&cfg.WorkDir, "workdir", "", "parent of the temporary directory (default: system temp dir)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the temporary directory")
	out := fs.String("out", "", "directory for report.md, results.jsonl, series.csv and kv-outage.png (default: the report and JSON lines to stdout)")
	quiet := fs.Bool("q", false, "no progress messages on stderr")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	if err := cfg.Fill(); err != nil {
		fmt.Fprintln(env.Stderr, "corral bench kv-outage:", err)
		return 2
	}
	cfg.OutDir = *out
	cfg.CommandLine = commandLine(append([]string{"corral", "bench", "kv-outage"}, args...))
	l := loadFlags{quiet: *quiet}
	cfg.Log = l.logger(env)
	return runExperiment(ctx, env, "kv-outage", *out, kv.RunOutage, cfg, func(dir string, rep *kv.OutageReport) error {
		f, err := os.Create(filepath.Join(dir, "series.csv"))
		if err != nil {
			return err
		}
		rep.SeriesCSV(f)
		if err := f.Close(); err != nil {
			return err
		}
		if len(rep.Trials) == 0 {
			return nil
		}
		_, err = plot.WriteKVOutagePlot(dir, rep)
		return err
	})
}
