package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/corral-db/corral/bench/kvoutage"
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
	cfg := kvoutage.DefaultOutageConfig()
	kf := kvFlags{records: &cfg.Records, threads: &cfg.Threads, members: &cfg.Members, tickMs: &cfg.TickTimeMs,
		seed: &cfg.Seed, corralBin: &cfg.CorralBin, workDir: &cfg.WorkDir, keep: &cfg.Keep}
	kf.register(fs, env, "one read", "report.md, results.jsonl, series.csv and kv-outage.png")
	fs.IntVar(&cfg.Groups, "groups", cfg.Groups, "replica groups (the paper: 1); RG 1's leader is killed")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "load before each kill")
	fs.DurationVar(&cfg.After, "after", cfg.After, "load after each kill")
	fs.IntVar(&cfg.Kills, "kills", cfg.Kills, "kills, each followed by a restart of the killed node")
	fs.DurationVar(&cfg.Settle, "settle", cfg.Settle, "time the RGs' leaders must stay put before a trial")
	fs.Float64Var(&cfg.LowFrac, "low", cfg.LowFrac, "the low-throughput window's threshold, a fraction of the pre-kill mean")
	fs.StringVar(&cfg.Durability, "durability", cfg.Durability, "sync, async or diskless")
	fs.DurationVar(&cfg.OpTimeout, "op-timeout", cfg.OpTimeout, "bound of one read, retries included")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	if err := cfg.Fill(); err != nil {
		fmt.Fprintln(env.Stderr, "corral bench kv-outage:", err)
		return 2
	}
	cfg.OutDir = kf.out
	cfg.CommandLine = commandLine(append([]string{"corral", "bench", "kv-outage"}, args...))
	l := loadFlags{quiet: kf.quiet}
	cfg.Log = l.logger(env)
	return runExperiment(ctx, env, "kv-outage", kf.out, kvoutage.RunOutage, cfg, func(dir string, rep *kvoutage.OutageReport) error {
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
