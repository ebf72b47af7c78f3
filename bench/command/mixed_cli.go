package command

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
)

// The flags of a mixed read/write load, shared by readratio and failures.

// mixedFlags are the flags of a mixed read/write load.
type mixedFlags struct {
	launch, connect string
	conns, inflight int
	value           int
	keys            int64
	warmup          time.Duration
	sessionTimeout  time.Duration
	out             string
	quiet           bool
}

func (m *mixedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.launch, "launch", bench.LaunchBoth, "servers to start on 127.0.0.1 and measure in turn: corral, zookeeper or both (same zoo.cfg)")
	fs.StringVar(&m.connect, "connect", "", "comma-separated host:port list of a running ensemble to measure instead of launching one")
	fs.IntVar(&m.conns, "conns", bench.DefaultMixedConns, "client connections (sessions)")
	fs.IntVar(&m.inflight, "inflight", bench.DefaultMixedInflight, "requests in flight per connection")
	fs.IntVar(&m.value, "value", bench.DefaultMixedValue, "setData value size and preloaded node size in bytes (paper: 1 KiB)")
	fs.Int64Var(&m.keys, "keys", bench.DefaultMixedKeys, "nodes preloaded before measuring; requests pick one uniformly at random")
	fs.DurationVar(&m.warmup, "warmup", bench.DefaultMixedWarmup, "unmeasured warm-up before each measurement")
	fs.DurationVar(&m.sessionTimeout, "session-timeout", bench.DefaultSessionTimeout, "session timeout every client asks for")
	fs.StringVar(&m.out, "out", "", "directory for report.md, results.jsonl, the PNG plot and server logs "+
		"(default: the report and JSON lines go to stdout and no plot is drawn)")
	fs.BoolVar(&m.quiet, "q", false, "no progress messages on stderr")
}

// Validate checks the flags and returns the targets to launch, or the
// addresses to connect to.
func (m *mixedFlags) validate() (targets, addrs []string, err error) {
	switch {
	case m.conns < 1 || m.conns > launch.MaxConns:
		return nil, nil, fmt.Errorf("--conns must be in [1, %d]", launch.MaxConns)
	case m.inflight < 1 || m.inflight > launch.MaxInflight:
		return nil, nil, fmt.Errorf("--inflight must be in [1, %d]", launch.MaxInflight)
	case m.value < 0 || m.value > 1<<20-1024:
		return nil, nil, errors.New("--value must be in [0, 1047552] (jute.maxbuffer)")
	case m.keys < 1 || m.keys > bench.MaxMixedKeys:
		return nil, nil, fmt.Errorf("--keys must be in [1, %d]", bench.MaxMixedKeys)
	case m.warmup < 0 || m.warmup > launch.MaxPhase:
		return nil, nil, fmt.Errorf("--warmup must be in [0, %v]", launch.MaxPhase)
	case m.sessionTimeout <= 0 || m.sessionTimeout > 10*time.Minute:
		return nil, nil, errors.New("--session-timeout must be in (0, 10m]")
	}
	if addrs = launch.SplitList(m.connect); len(addrs) > 0 {
		return nil, addrs, nil
	}
	targets, err = bench.ParseLaunch(m.launch)
	return targets, nil, err
}

func (m *mixedFlags) logger(env CommandEnv) *slog.Logger {
	l := loadFlags{quiet: m.quiet}
	return l.logger(env)
}

// launchSpecFromFlags sets s from the server flags.
func launchSpecFromFlags(s *bench.LaunchSpec, sf serverFlags) {
	s.CorralBin, s.ZKLib, s.Java, s.JavaHeap = sf.CorralBin, sf.ZKLib, sf.Java, sf.JavaHeap
	s.WorkDir, s.Keep, s.Timing = sf.WorkDir, sf.Keep, sf.Timing
}
