package command

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/corral-db/corral/bench/factorial"
	"github.com/corral-db/corral/bench/launch"
)

// factorialCommand runs `corral bench factorial`: a 2^k r factorial
// experiment (Jain ch. 17–18, as in the study ../shared/papers/004_*)
// over chosen factors:
//
//	corral bench factorial [--factors servers,value,durability] [--reps 2] [--seed 1]
//	                       [--response ops|p50|p99]
//	                       [--servers 1,3] [--value 64,1024] [--durability sync,async]
//	                       [--target corral] [--workload set] [--clients 16]
//	                       [--inflight 16] [--keys 1000] [--warmup 3s] [--duration 5s]
//	                       [--out DIR] [server flags as for compare] [-q]
//
// Each factor flag takes LOW,HIGH; a factor not named in --factors runs at
// its first (or only) level. Every combination runs --reps times, each a
// fresh launch, in an order drawn from --seed. The report gives the
// responses, every effect q with its share of the variation and, with
// replications, the error's share and 90% confidence intervals; JSON lines
// give the runs, the effects and the whole analysis.
func factorialCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("factorial", env)
	var sf serverFlags
	sf.register(fs, env)
	cfg := factorial.DefaultConfig()
	factors := fs.String("factors", strings.Join(cfg.Factors, ","), "factors to vary (1 to 6 of "+strings.Join(factorial.FactorNames, ", ")+"), the first is A")
	levels := map[string]*string{}
	help := map[string]string{
		factorial.FactorServers:    "ensemble size levels (1 is standalone)",
		factorial.FactorValue:      "value size levels in bytes",
		factorial.FactorDurability: "durability levels: sync, async (ZooKeeper: forceSync=no), diskless (corral only)",
		factorial.FactorTarget:     "server levels: corral, zookeeper",
		factorial.FactorWorkload:   "workload levels: set, get, create",
		factorial.FactorClients:    "client connection levels",
	}
	for _, f := range factorial.FactorNames {
		levels[f] = fs.String(f, strings.Join(cfg.Levels[f], ","), help[f]+": LOW,HIGH, or one level when not a factor")
	}
	fs.IntVar(&cfg.Reps, "reps", cfg.Reps, "replications of every combination (2 or more for the error share and intervals)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the random run order")
	fs.StringVar(&cfg.Response, "response", cfg.Response, "response analysed: ops (throughput), p50 or p99 (latency, ms)")
	fs.IntVar(&cfg.Inflight, "inflight", cfg.Inflight, "requests in flight per connection")
	fs.Int64Var(&cfg.Keys, "keys", cfg.Keys, "nodes created (unmeasured) before a get or set phase")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured warm-up per run")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured duration per run")
	out := fs.String("out", "", "directory for report.md, results.jsonl and server logs (default: JSON lines go to stdout after the report)")
	quiet := fs.Bool("q", false, "no progress messages on stderr")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench factorial:", err)
		return 2
	}
	if err := sf.validate(); err != nil {
		return bad(err)
	}
	cfg.Factors = launch.SplitList(*factors)
	cfg.Levels = map[string][]string{}
	for _, f := range factorial.FactorNames {
		cfg.Levels[f] = launch.SplitList(*levels[f])
		if n := len(cfg.Levels[f]); n > 2 {
			return bad(fmt.Errorf("--%s: %d levels (want LOW,HIGH)", f, n))
		}
	}
	if err := cfg.Validate(); err != nil {
		return bad(err)
	}
	cfg.CorralBin, cfg.ZKLib, cfg.Java, cfg.JavaHeap = sf.CorralBin, sf.ZKLib, sf.Java, sf.JavaHeap
	cfg.WorkDir, cfg.Keep, cfg.Timing, cfg.OutDir = sf.WorkDir, sf.Keep, sf.Timing, *out
	cfg.Command = commandLine(os.Args)
	l := loadFlags{quiet: *quiet}
	cfg.Log = l.logger(env)
	return runExperiment(ctx, env, "factorial", *out, factorial.Run, cfg, nil)
}
