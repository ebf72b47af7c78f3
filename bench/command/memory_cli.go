package command

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/corral-db/corral/bench/memory"
)

// memoryCommand runs `corral bench memory`: each member's resident memory
// for N znodes of S bytes, corral and ZooKeeper in the same run.
//
//	corral bench memory [--launch corral|zookeeper|both] [--servers 3]
//	                    [--trees 1000000x100[:XMX],100000x1024[:XMX]] [--conns 8] [--inflight 32]
//	                    [--durability sync|async|diskless] [--settle 5s] [--load-limit 5m]
//	                    [--out DIR] [server flags as for compare] [-q]
func memoryCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("memory", env)
	cfg := memory.DefaultConfig()
	var sf sideBySideFlags
	sf.register(fs, env, &cfg.Durability)
	fs.IntVar(&cfg.Servers, "servers", cfg.Servers, "ensemble size (1: standalone)")
	trees := fs.String("trees", "1000000x100,100000x1024", "trees to build, COUNTxBYTES[:XMX], comma-separated; each on a fresh ensemble; "+
		"XMX is ZooKeeper's -Xmx for that tree (default --java-heap)")
	fs.IntVar(&cfg.Conns, "conns", cfg.Conns, "connections creating the znodes")
	fs.IntVar(&cfg.Inflight, "inflight", cfg.Inflight, "creates in flight per connection")
	fs.DurationVar(&cfg.Settle, "settle", cfg.Settle, "wait after the last create before reading resident sizes")
	fs.DurationVar(&cfg.LoadLimit, "load-limit", cfg.LoadLimit, "time allowed for each tree's creates; a target slower than that is reported incomplete")
	out := fs.String("out", "", "directory for report.md and results.jsonl (default: stdout)")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench memory:", err)
		return 2
	}
	var err error
	if cfg.Targets, err = sf.targets(); err != nil {
		return bad(err)
	}
	if cfg.Shapes, err = parseTrees(*trees); err != nil {
		return bad(fmt.Errorf("--trees: %w", err))
	}
	if err := cfg.Validate(); err != nil {
		return bad(err)
	}
	cfg.Settings = sf.Settings
	l := loadFlags{quiet: sf.quiet}
	cfg.Log = l.logger(env)
	return runExperiment(ctx, env, "memory", *out, memory.Run, cfg, nil)
}

// maxTreeValue is the largest value a create carries (jute.maxbuffer, as
// --value).
const maxTreeValue = 1047552

// parseTrees reads "1000000x100:512m,100000x1024" (the -Xmx is optional).
func parseTrees(s string) ([]memory.Shape, error) {
	var out []memory.Shape
	for _, f := range strings.Split(s, ",") {
		tree, heap, withHeap := strings.Cut(strings.TrimSpace(f), ":")
		c, b, ok := strings.Cut(tree, "x")
		n, err1 := strconv.ParseInt(c, 10, 64)
		size, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || n < 1 || size < 0 || size > maxTreeValue {
			return nil, fmt.Errorf("%q: want COUNTxBYTES[:XMX], a positive count and 0..%d bytes", f, maxTreeValue)
		}
		if withHeap && !validHeap(heap) {
			return nil, fmt.Errorf("%q: -Xmx %q: want digits and a k, m or g suffix", f, heap)
		}
		out = append(out, memory.Shape{Count: n, Size: size, JavaHeap: heap})
	}
	return out, nil
}

// validHeap reports whether s is a -Xmx size: digits and an optional
// k, m or g (either case).
func validHeap(s string) bool {
	digits := strings.TrimRight(s, "kKmMgG")
	if len(s)-len(digits) > 1 {
		return false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return err == nil && n > 0
}
