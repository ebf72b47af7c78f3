package command

import (
	"flag"
	"fmt"
	"strings"
)

// stringsFlag collects a repeatable flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

var _ flag.Value = (*stringsFlag)(nil)

// kvFlags are the flags `corral bench kv` and `corral bench kv-outage`
// share, bound to fields of their configurations (whose values are the
// defaults shown), so both commands spell and explain them alike.
type kvFlags struct {
	records                  *int64
	threads, members, tickMs *int
	seed                     *uint64
	corralBin, workDir       *string
	keep                     *bool
	// out and quiet are not a configuration's: read them after parsing.
	out   string
	quiet bool
}

// register adds the shared flags to fs; what is the load's unit ("one
// operation", "one read") and outputs lists what -out receives.
func (k *kvFlags) register(fs *flag.FlagSet, env CommandEnv, what, outputs string) {
	fs.Int64Var(k.records, "records", *k.records, "records loaded before the measurements")
	fs.IntVar(k.threads, "threads", *k.threads, "client threads, "+what+" in flight each")
	fs.IntVar(k.members, "members", *k.members, "members per replica group")
	fs.IntVar(k.tickMs, "tick-time", *k.tickMs, "corral's tickTime in milliseconds")
	fs.Uint64Var(k.seed, "seed", *k.seed, "seed of the threads' random streams")
	fs.StringVar(k.corralBin, "corral-bin", env.CorralBinary, "corral binary to start (default: the corral beside corral-bench, or built from ./cmd/corral)")
	fs.StringVar(k.workDir, "workdir", "", "parent of the temporary directory for configuration and data (default: system temp dir)")
	fs.BoolVar(k.keep, "keep", false, "keep the temporary directory")
	fs.StringVar(&k.out, "out", "", fmt.Sprintf("directory for %s (default: the report and JSON lines to stdout)", outputs))
	fs.BoolVar(&k.quiet, "q", false, "no progress messages on stderr")
}
