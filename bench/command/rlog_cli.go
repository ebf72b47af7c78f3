package command

import (
	"context"
	"fmt"
	"strings"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/plot"
	"github.com/corral-db/corral/bench/rlog"
)

// rlogCommand runs `corral bench rlog`: replicated logs (ZKRL) against
// a corral ensemble through the gRPC API, with the disk and loopback
// anchors and ZooKeeper in the same run (package bench/rlog describes
// it):
//
//	corral bench rlog [-sizes 1024,...,524288] [-size 65536] [-outstanding 16]
//	                  [-latency 1,2,4,8,16,32,64] [-members 3] [-quorums 1,2,3,5]
//	                  [-durability sync|async] [-memory-durability diskless|async|""]
//	                  [-group-commit=true] [-warmup 1s] [-duration 4s]
//	                  [-phase-bytes 268435456] [-grow-bytes 268435456] [-grow-samples 8]
//	                  [-zookeeper=true] [-anchors=true] [-anchor-duration 2s]
//	                  [-snap-count 100000] [-corral-bin PATH] [-zk-lib DIR] [-java java]
//	                  [-java-heap 2g] [-workdir DIR] [-keep] [-out DIR] [-q]
func rlogCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("rlog", env)
	cfg := rlog.DefaultConfig()
	sizes := fs.String("sizes", launch.JoinInts(cfg.Sizes), "append sizes of the throughput sweep (Fig. 5.1), bytes, comma-separated")
	fs.IntVar(&cfg.Size, "size", cfg.Size, "append size of the other phases, the disk anchor and ZooKeeper's znodes, bytes")
	fs.IntVar(&cfg.Outstanding, "outstanding", cfg.Outstanding, "appends in flight (one writer each) in the sweep and the Fig. 5.4 points")
	latency := fs.String("latency", launch.JoinInts(cfg.Latency), "appends in flight of the latency sweep (Figs. 5.2/5.3), comma-separated")
	fs.IntVar(&cfg.Members, "members", cfg.Members, "members of the main ensemble")
	quorums := fs.String("quorums", launch.JoinInts(cfg.Quorums), "ensemble sizes of Fig. 5.4, comma-separated")
	fs.StringVar(&cfg.Durability, "durability", cfg.Durability, "the disk configuration's durability: sync or async")
	fs.StringVar(&cfg.MemoryDurability, "memory-durability", cfg.MemoryDurability, "the memory configuration's durability: diskless or async; empty skips it")
	fs.BoolVar(&cfg.GroupCommit, "group-commit", cfg.GroupCommit, "also run a coupled-group-commit ensemble (rlog.groupCommit=coupled)")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured warm-up per phase")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured duration per phase")
	fs.Int64Var(&cfg.PhaseBytes, "phase-bytes", cfg.PhaseBytes, "end a phase's measured interval once this many bytes were appended (bounds the disk a run fills; 0: no bound)")
	fs.Int64Var(&cfg.GrowBytes, "grow-bytes", cfg.GrowBytes, "grow one log to this many bytes sampling each member's RSS (the issue: 8 GiB, a long run); 0 skips it")
	fs.IntVar(&cfg.GrowSamples, "grow-samples", cfg.GrowSamples, "RSS samples on the way to -grow-bytes")
	fs.BoolVar(&cfg.ZooKeeper, "zookeeper", cfg.ZooKeeper, "also write the same payloads as sequential znodes to a ZooKeeper 3.9.3 ensemble of -members")
	fs.BoolVar(&cfg.Anchors, "anchors", cfg.Anchors, "measure the disk and loopback anchors")
	fs.DurationVar(&cfg.AnchorDuration, "anchor-duration", cfg.AnchorDuration, "duration of each anchor")
	fs.IntVar(&cfg.SnapCount, "snap-count", cfg.SnapCount, "the members' snapCount (the in-memory log is cut after each snapshot)")
	fs.StringVar(&cfg.CorralBin, "corral-bin", env.CorralBinary, "corral binary to start (default: the corral beside corral-bench, or built from ./cmd/corral)")
	fs.StringVar(&cfg.ZKLib, "zk-lib", "", "directory of ZooKeeper 3.9.3's jars (default: .cache/zookeeper/lib, fetched by make zookeeper)")
	fs.StringVar(&cfg.Java, "java", cfg.Java, "java command")
	fs.StringVar(&cfg.JavaHeap, "java-heap", launch.DefaultJavaHeap, "ZooKeeper's -Xmx")
	fs.StringVar(&cfg.WorkDir, "workdir", "", "parent of the temporary directory: the disk anchor and the data directories (default: system temp dir)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the temporary directory")
	out := fs.String("out", "", "directory for report.md, results.jsonl and the PNGs (default: the report and JSON lines to stdout)")
	quiet := fs.Bool("q", false, "no progress messages on stderr")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench rlog:", err)
		return 2
	}
	var err error
	if cfg.Sizes, err = launch.ParseInts(*sizes); err != nil {
		return bad(fmt.Errorf("-sizes: %w", err))
	}
	if cfg.Latency, err = launch.ParseInts(*latency); err != nil {
		return bad(fmt.Errorf("-latency: %w", err))
	}
	if cfg.Quorums, err = launch.ParseInts(*quorums); err != nil {
		return bad(fmt.Errorf("-quorums: %w", err))
	}
	cfg.MemoryDurability = strings.TrimSpace(cfg.MemoryDurability)
	cfg.CommandLine = commandLine(append([]string{"corral", "bench", "rlog"}, args...))
	l := loadFlags{quiet: *quiet}
	cfg.Log = l.logger(env)
	if err := cfg.Fill(); err != nil {
		return bad(err)
	}
	return runExperiment(ctx, env, "rlog", *out, rlog.Run, cfg, func(dir string, rep *rlog.Report) error {
		return plot.WriteRlogPlots(dir, rep)
	})
}
