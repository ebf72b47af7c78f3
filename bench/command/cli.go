package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/compare"
	"github.com/corral-db/corral/bench/failover"
	"github.com/corral-db/corral/bench/floor"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/plot"
)

// CommandEnv is what the bench command takes from its process.
type CommandEnv struct {
	Stdout, Stderr io.Writer
	// CorralBinary, if set, is the default corral server under test. If
	// empty, the experiments build ./cmd/corral.
	CorralBinary string
	// Self, if set, is a binary that runs Command (corral-bench): the
	// floor probe starts it as `Self floor-echo SIZE` for its idle round
	// trips between processes. If empty the echo runs in this process.
	Self string
}

const commandUsage = `usage:
  corral bench compare [flags]   start corral and Apache ZooKeeper in turn and measure both
  corral bench run --connect HOST:PORT[,...] [flags]   measure one workload against running servers
  corral bench floor [flags]   the machine's floor for one replicated write: concurrent fdatasyncs and loopback round trips
  corral bench failover [flags]   kill an ensemble's leader under a writer and measure the gap
  corral bench durability [flags]   the diskless thesis's evaluation: corral sync/async/diskless and ZooKeeper with and without forceSync
  corral bench paper [flags]   the ZooKeeper paper's Tables 2 (create latency) and 3 (barriers), scaled down
  corral bench readratio [flags]   the ZooKeeper paper's Fig. 5/6 and Table 1: saturated throughput vs read ratio per ensemble size
  corral bench failures [flags]   the ZooKeeper paper's Fig. 8: throughput over time while members are killed and restarted
  corral bench ycsb [flags]   YCSB workloads A-F and the study's S over 1 KB records, one znode each
  corral bench kv [flags]   corral's key-value store against etcd: YCSB A, B, C, F and 100% writes over 1 KiB rows
  corral bench kv-outage [flags]   the ACaZoo paper's Figs. 16-17: SIGKILL an RG leader under a read-only Zipf load; the outage split
  corral bench rlog [flags]   replicated logs (ZKRL): the anchors, the thesis's Figs. 5.1-5.4 and §5.1.2 against a corral ensemble, and ZooKeeper
  corral bench scale [flags]   servers and clients scaled together (N = 1..8) with a Universal Scalability Law fit
  corral bench memory [flags]   each member's resident memory for N znodes of S bytes, beside the raw bytes of paths + data
  corral bench factorial [flags]   a 2^k r factorial experiment: each factor's effect and share of the variation
  corral bench report-md [--runs DIR] [--out FILE]   BENCHMARKS.md from the stored run reports
Run 'corral bench SUBCOMMAND -h' for flags.
`

// Command runs `corral bench ARGS` and returns the exit status.
func Command(ctx context.Context, args []string, env CommandEnv) int {
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, commandUsage)
		return 2
	}
	switch args[0] {
	case "compare":
		return compareCommand(ctx, args[1:], env)
	case "run":
		return runCommand(ctx, args[1:], env)
	case "floor":
		return floorCommand(ctx, args[1:], env)
	case "failover":
		return failoverCommand(ctx, args[1:], env)
	case "durability":
		return durabilityCommand(ctx, args[1:], env)
	case "paper":
		return paperCommand(ctx, args[1:], env)
	case "readratio":
		return readRatioCommand(ctx, args[1:], env)
	case "failures":
		return failuresCommand(ctx, args[1:], env)
	case "ycsb":
		return ycsbCommand(ctx, args[1:], env)
	case "memory":
		return memoryCommand(ctx, args[1:], env)
	case "scale":
		return scaleCommand(ctx, args[1:], env)
	case "kv":
		return kvCommand(ctx, args[1:], env)
	case "kv-outage":
		return kvOutageCommand(ctx, args[1:], env)
	case "rlog":
		return rlogCommand(ctx, args[1:], env)
	case "factorial":
		return factorialCommand(ctx, args[1:], env)
	case "report-md":
		return referenceCommand(args[1:], env)
	case floorEchoCommand:
		return floorEcho(args[1:], env)
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, commandUsage)
		return 0
	}
	fmt.Fprintf(env.Stderr, "corral bench: unknown subcommand %q\n%s", args[0], commandUsage)
	return 2
}

// loadFlags are shared by compare and run.
type loadFlags struct {
	conns, inflight, value int
	warmup, duration       time.Duration
	out                    string
	quiet                  bool
}

func (l *loadFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&l.conns, "conns", compare.DefaultConns, "client connections (sessions)")
	fs.IntVar(&l.inflight, "inflight", compare.DefaultInflight, "requests in flight per connection")
	fs.IntVar(&l.value, "value", compare.DefaultValueSize, "value size in bytes for create and setData")
	fs.DurationVar(&l.warmup, "warmup", compare.DefaultWarmup, "unmeasured warm-up per phase")
	fs.DurationVar(&l.duration, "duration", compare.DefaultDuration, "measured duration per phase")
	fs.StringVar(&l.out, "out", "", "directory for report.md, results.jsonl and server logs (default: JSON lines go to stdout after the table)")
	fs.BoolVar(&l.quiet, "q", false, "no progress messages on stderr")
}

func (l *loadFlags) validate() error {
	switch {
	case l.conns < 1 || l.conns > launch.MaxConns:
		return fmt.Errorf("--conns must be in [1, %d]", launch.MaxConns)
	case l.inflight < 1 || l.inflight > launch.MaxInflight:
		return fmt.Errorf("--inflight must be in [1, %d]", launch.MaxInflight)
	case l.value < 0 || l.value > 1<<20-1024:
		return errors.New("--value must be in [0, 1047552] (jute.maxbuffer)")
	case l.duration <= 0 || l.duration > launch.MaxPhase:
		return fmt.Errorf("--duration must be in (0, %v]", launch.MaxPhase)
	case l.warmup < 0 || l.warmup > launch.MaxPhase:
		return fmt.Errorf("--warmup must be in [0, %v]", launch.MaxPhase)
	}
	return nil
}

func (l *loadFlags) logger(env CommandEnv) *slog.Logger {
	if l.quiet {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(env.Stderr, nil))
}

// serverFlags say how compare and failover start servers.
type serverFlags struct {
	launch.Settings
}

func (f *serverFlags) register(fs *flag.FlagSet, env CommandEnv) {
	d := launch.DefaultTiming()
	fs.StringVar(&f.CorralBin, "corral-bin", env.CorralBinary, "corral binary to start (default: the corral beside corral-bench, or built from ./cmd/corral)")
	fs.StringVar(&f.ZKLib, "zk-lib", "", "directory of ZooKeeper 3.9.3 jars (default: output of scripts/zookeeper/fetch.sh)")
	fs.StringVar(&f.Java, "java", "java", "java command")
	fs.StringVar(&f.JavaHeap, "java-heap", launch.DefaultJavaHeap, "ZooKeeper's JVM -Xmx (per server)")
	fs.StringVar(&f.WorkDir, "workdir", "", "parent of the temporary directory for configuration and data (default: system temp dir)")
	fs.BoolVar(&f.Keep, "keep", false, "keep the temporary directory")
	fs.IntVar(&f.Timing.TickTimeMs, "tick-time", d.TickTimeMs, "zoo.cfg tickTime in milliseconds")
	fs.IntVar(&f.Timing.InitLimit, "init-limit", d.InitLimit, "zoo.cfg initLimit in ticks")
	fs.IntVar(&f.Timing.SyncLimit, "sync-limit", d.SyncLimit, "zoo.cfg syncLimit in ticks")
}

func (f *serverFlags) validate() error {
	t := f.Timing
	switch {
	case t.TickTimeMs < 1 || t.TickTimeMs > 60000:
		return errors.New("--tick-time must be in [1, 60000] ms")
	case t.InitLimit < 1 || t.InitLimit > 1000 || t.SyncLimit < 1 || t.SyncLimit > 1000:
		return errors.New("--init-limit and --sync-limit must be in [1, 1000]")
	}
	return nil
}

// sideBySideFlags are the flags of the experiments that measure corral
// and ZooKeeper side by side, each on servers of its own (memory, scale):
// the server settings, which targets to launch, their durability and
// quietness.
type sideBySideFlags struct {
	serverFlags
	launch string
	quiet  bool
}

// register adds the flags to fs; --durability sets *durability, whose
// value is its default.
func (f *sideBySideFlags) register(fs *flag.FlagSet, env CommandEnv, durability *string) {
	f.serverFlags.register(fs, env)
	fs.StringVar(&f.launch, "launch", "both", "servers to measure: corral, zookeeper or both")
	fs.StringVar(durability, "durability", *durability, "sync, async (ZooKeeper: forceSync=no) or diskless (corral only)")
	fs.BoolVar(&f.quiet, "q", false, "no progress messages on stderr")
}

// targets checks the server settings and returns the targets --launch
// names, in order.
func (f *sideBySideFlags) targets() ([]string, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	return scaleTargets(f.launch)
}

func newFlagSet(name string, env CommandEnv) *flag.FlagSet {
	fs := flag.NewFlagSet("corral bench "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}

func parse(fs *flag.FlagSet, args []string, env CommandEnv) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	return 0, true
}

func compareCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("compare", env)
	var l loadFlags
	l.register(fs)
	cfg := compare.DefaultConfig()
	var sf serverFlags
	sf.register(fs, env)
	targets := fs.String("targets", launch.TargetCorral+","+launch.TargetZooKeeper, "servers to measure, in order, of corral, zookeeper and corral+ops (corral with the AdminServer, web console and Prometheus endpoint on, nobody polling them)")
	fs.IntVar(&cfg.Servers, "servers", 1, "servers per target: 1 is standalone, more an ensemble on 127.0.0.1")
	fs.DurationVar(&cfg.SeqWarmup, "seq-warmup", compare.DefaultSeqWarmup, "unmeasured warm-up of the sequential create phase")
	fs.DurationVar(&cfg.SeqDuration, "seq-duration", compare.DefaultSeqDuration, "measured duration of the sequential create phase")
	fs.StringVar(&cfg.Durability, "durability", "", "sync, async (ZooKeeper: forceSync=no) or diskless (corral only); default forceSync=yes for both")
	fs.IntVar(&cfg.Repeat, "repeat", 1, "run the whole target sequence this many times, interleaved; the report gives medians and spread")
	phases := fs.String("phases", compare.FormatPhases(compare.DefaultPhases), "phases each target runs, in order, of create, set, get, seqcreate; \"/\" starts the target afresh (e.g. seqcreate/create/set,get)")
	fs.Int64Var(&cfg.Keys, "keys", compare.DefaultKeys, "nodes created unmeasured for set and get when no create phase comes before them")
	fs.StringVar(&cfg.Client, "client", compare.ClientLoad, "client driving the phases: load (the built-in load generator) or gozk "+
		"(github.com/go-zookeeper/zk, synchronous: --inflight goroutines per connection)")
	probeFloor := fs.Bool("floor", true, "measure the floor for one replicated write first (concurrent fdatasyncs in --workdir and loopback round trips) "+
		"and report each seqcreate p50 as a multiple of it")
	floorRounds := fs.Int("floor-rounds", cfg.Floor.SyncRounds, "the floor probe's records synced per ensemble size")
	rate := load.RegisterRate(fs)
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	if err := l.validate(); err != nil {
		fmt.Fprintln(env.Stderr, "corral bench compare:", err)
		return 2
	}
	if cfg.Client != compare.ClientLoad && cfg.Client != compare.ClientGozk {
		fmt.Fprintf(env.Stderr, "corral bench compare: --client must be %s or %s\n", compare.ClientLoad, compare.ClientGozk)
		return 2
	}
	if cfg.Client == compare.ClientGozk && *rate > 0 {
		fmt.Fprintln(env.Stderr, "corral bench compare: --client gozk runs closed loop only (no --rate)")
		return 2
	}
	if *floorRounds < 1 || *floorRounds > floor.MaxRounds {
		fmt.Fprintf(env.Stderr, "corral bench compare: --floor-rounds must be in [1, %d]\n", floor.MaxRounds)
		return 2
	}
	cfg.Floor.SyncRounds = *floorRounds
	setIdlePeer(cfg.Floor, env)
	if !*probeFloor {
		cfg.Floor = nil
	}
	if err := load.ValidateRate(*rate); err != nil {
		fmt.Fprintln(env.Stderr, "corral bench compare:", err)
		return 2
	}
	if cfg.Repeat < 1 || cfg.Repeat > compare.MaxRepeat {
		fmt.Fprintf(env.Stderr, "corral bench compare: --repeat must be in [1, %d]\n", compare.MaxRepeat)
		return 2
	}
	cfg.Rate = *rate
	ps, err := compare.ParsePhases(*phases)
	if err != nil {
		fmt.Fprintln(env.Stderr, "corral bench compare:", err)
		return 2
	}
	cfg.Phases = ps
	if cfg.Keys < 1 || cfg.Keys > 10_000_000 {
		fmt.Fprintln(env.Stderr, "corral bench compare: --keys must be in [1, 10000000]")
		return 2
	}
	if cfg.SeqDuration <= 0 || cfg.SeqDuration > launch.MaxPhase || cfg.SeqWarmup < 0 || cfg.SeqWarmup > launch.MaxPhase {
		fmt.Fprintf(env.Stderr, "corral bench compare: --seq-duration must be in (0, %v] and --seq-warmup in [0, %v]\n", launch.MaxPhase, launch.MaxPhase)
		return 2
	}
	if err := sf.validate(); err != nil {
		fmt.Fprintln(env.Stderr, "corral bench compare:", err)
		return 2
	}
	if cfg.Servers < 1 || cfg.Servers > launch.MaxServers {
		fmt.Fprintf(env.Stderr, "corral bench compare: --servers must be in [1, %d]\n", launch.MaxServers)
		return 2
	}
	cfg.CorralBin, cfg.ZKLib, cfg.Java, cfg.JavaHeap = sf.CorralBin, sf.ZKLib, sf.Java, sf.JavaHeap
	cfg.WorkDir, cfg.Keep, cfg.Timing = sf.WorkDir, sf.Keep, sf.Timing
	cfg.Targets = nil
	for _, t := range strings.Split(*targets, ",") {
		if t = strings.TrimSpace(t); t != "" {
			cfg.Targets = append(cfg.Targets, t)
			if _, err := bench.DurabilityOf(cfg.Durability, t); err != nil {
				fmt.Fprintln(env.Stderr, "corral bench compare:", err)
				return 2
			}
		}
	}
	cfg.Conns, cfg.Inflight, cfg.ValueSize = l.conns, l.inflight, l.value
	cfg.Warmup, cfg.Duration = l.warmup, l.duration
	cfg.Log, cfg.Progress = l.progressLogger(env)
	cfg.OutDir = l.out
	return runExperiment(ctx, env, "compare", l.out, compare.Compare, cfg, plot.WriteLatencyPlots)
}

func runCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("run", env)
	var l loadFlags
	l.register(fs)
	connect := fs.String("connect", "", "comma-separated host:port list of running servers (required)")
	workload := fs.String("workload", string(load.WorkloadCreate), "create, set, get or seqcreate")
	keys := fs.Int64("keys", compare.DefaultKeys, "nodes created before a set or get phase")
	pid := fs.Int("pid", 0, "process id of a local server whose CPU time to measure")
	client := fs.String("client", compare.ClientLoad, "client driving the measured phase: load or gozk (github.com/go-zookeeper/zk)")
	rate := load.RegisterRate(fs)
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	if err := l.validate(); err != nil {
		fmt.Fprintln(env.Stderr, "corral bench run:", err)
		return 2
	}
	if err := load.ValidateRate(*rate); err != nil {
		fmt.Fprintln(env.Stderr, "corral bench run:", err)
		return 2
	}
	var addrs []string
	for _, a := range strings.Split(*connect, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		fmt.Fprintln(env.Stderr, "corral bench run: --connect is required")
		return 2
	}
	w, err := load.ParseWorkload(*workload)
	if err != nil {
		fmt.Fprintln(env.Stderr, "corral bench run:", err)
		return 2
	}
	if *keys < 1 || *keys > 10_000_000 {
		fmt.Fprintln(env.Stderr, "corral bench run: --keys must be in [1, 10000000]")
		return 2
	}
	if *rate > 0 && w == load.WorkloadSeqCreate {
		fmt.Fprintln(env.Stderr, "corral bench run:", load.ErrRateSeq)
		return 2
	}
	if *client != compare.ClientLoad && *client != compare.ClientGozk || *client == compare.ClientGozk && *rate > 0 {
		fmt.Fprintf(env.Stderr, "corral bench run: --client must be %s or %s (gozk without --rate)\n", compare.ClientLoad, compare.ClientGozk)
		return 2
	}
	log, progress := l.progressLogger(env)
	cfg := compare.RunConfig{
		Addrs: addrs, Workload: w, Conns: l.conns, Inflight: l.inflight, ValueSize: l.value,
		Warmup: l.warmup, Duration: l.duration, Keys: *keys, ServerPID: *pid, Log: log,
		Rate: *rate, Progress: progress, Client: *client,
	}
	run := func(ctx context.Context, cfg compare.RunConfig) (*compare.Report, error) {
		rep, err := compare.Run(ctx, cfg)
		if rep != nil && len(rep.Results) == 0 {
			rep = nil // nothing measured: no report
		}
		return rep, err
	}
	return runExperiment(ctx, env, "run", l.out, run, cfg, plot.WriteLatencyPlots)
}

func failoverCommand(ctx context.Context, args []string, env CommandEnv) int {
	fs := newFlagSet("failover", env)
	var sf serverFlags
	sf.register(fs, env)
	var cfg failover.Config
	fs.StringVar(&cfg.Target, "target", launch.TargetCorral, "server to test: corral or zookeeper")
	fs.IntVar(&cfg.Servers, "servers", failover.DefaultFailoverServers, "ensemble size")
	fs.IntVar(&cfg.Trials, "trials", failover.DefaultFailoverTrials, "leader kills")
	fs.DurationVar(&cfg.SessionTimeout, "session-timeout", bench.DefaultSessionTimeout, "session timeout the writer asks for")
	fs.IntVar(&cfg.ValueSize, "value", failover.DefaultFailoverValueSize, "setData value size in bytes")
	fs.DurationVar(&cfg.Pre, "pre", failover.DefaultPre, "writes before each kill (at least)")
	fs.DurationVar(&cfg.RecoveryTimeout, "recovery-timeout", failover.DefaultRecoveryTimeout, "longest wait for a write after a kill")
	fs.DurationVar(&cfg.WholeTimeout, "whole-timeout", bench.WholeTimeout, "longest wait for the ensemble to be whole after a restart")
	out := fs.String("out", "", "directory for report.md, results.jsonl and server logs (default: JSON lines go to stdout after the report)")
	quiet := fs.Bool("q", false, "no progress messages on stderr")
	if code, ok := parse(fs, args, env); !ok {
		return code
	}
	bad := func(err error) int {
		fmt.Fprintln(env.Stderr, "corral bench failover:", err)
		return 2
	}
	if err := sf.validate(); err != nil {
		return bad(err)
	}
	switch {
	case cfg.Target != launch.TargetCorral && cfg.Target != launch.TargetZooKeeper:
		return bad(fmt.Errorf("--target must be %s or %s", launch.TargetCorral, launch.TargetZooKeeper))
	case cfg.Servers < 3 || cfg.Servers > launch.MaxServers:
		return bad(fmt.Errorf("--servers must be in [3, %d]", launch.MaxServers))
	case cfg.Trials < 1 || cfg.Trials > failover.MaxTrials:
		return bad(fmt.Errorf("--trials must be in [1, %d]", failover.MaxTrials))
	case cfg.SessionTimeout <= 0 || cfg.SessionTimeout > 10*time.Minute:
		return bad(errors.New("--session-timeout must be in (0, 10m]"))
	case cfg.ValueSize < 0 || cfg.ValueSize > 1<<20-1024:
		return bad(errors.New("--value must be in [0, 1047552] (jute.maxbuffer)"))
	case cfg.Pre <= 0 || cfg.Pre > launch.MaxPhase:
		return bad(fmt.Errorf("--pre must be in (0, %v]", launch.MaxPhase))
	case cfg.RecoveryTimeout <= 0 || cfg.RecoveryTimeout > launch.MaxPhase || cfg.WholeTimeout <= 0 || cfg.WholeTimeout > launch.MaxPhase:
		return bad(fmt.Errorf("--recovery-timeout and --whole-timeout must be in (0, %v]", launch.MaxPhase))
	}
	cfg.CorralBin, cfg.ZKLib, cfg.Java, cfg.JavaHeap = sf.CorralBin, sf.ZKLib, sf.Java, sf.JavaHeap
	cfg.WorkDir, cfg.Keep, cfg.Timing, cfg.OutDir = sf.WorkDir, sf.Keep, sf.Timing, *out
	l := loadFlags{quiet: *quiet}
	cfg.Log = l.logger(env)
	return runExperiment(ctx, env, "failover", *out, failover.Run, cfg, nil)
}

// runExperiment runs one experiment of `corral bench NAME` and writes
// what it measured: out (if set) is made first; run's report, a partial
// one too when run also fails, gets its plots (with out; a plot that
// fails is reported, the report still written) and is emitted. A nil
// report means nothing was measured. It returns the exit status.
func runExperiment[C, T any, R interface {
	*T
	document
}](ctx context.Context, env CommandEnv, name, out string, run func(context.Context, C) (R, error), cfg C, plots func(dir string, rep R) error) int {
	fail := func(what string, err error) int {
		fmt.Fprintf(env.Stderr, "corral bench %s: %s%s\n", name, what, strings.TrimPrefix(err.Error(), "bench: "))
		return 1
	}
	if err := prepareOut(out); err != nil {
		return fail("", err)
	}
	rep, err := run(ctx, cfg)
	if rep != nil {
		if out != "" && plots != nil {
			if perr := plots(out, rep); perr != nil {
				fail("plots: ", perr)
			}
		}
		if werr := emit(rep, out, env); werr != nil {
			return fail("", werr)
		}
	}
	if err != nil {
		return fail("", err)
	}
	return 0
}

func prepareOut(dir string) error {
	if dir == "" {
		return nil
	}
	return os.MkdirAll(dir, 0o755)
}

// document is a report that emit can write.
type document interface {
	Markdown(w io.Writer)
	JSONLines(w io.Writer) error
}

// emit prints the Markdown report, and writes it with the JSON lines into
// dir; without dir the JSON lines follow the table on stdout in a fenced
// block, so stdout stays one Markdown document.
func emit(rep document, dir string, env CommandEnv) error {
	rep.Markdown(env.Stdout)
	if dir == "" {
		fmt.Fprintln(env.Stdout, "\n```jsonl")
		err := rep.JSONLines(env.Stdout)
		fmt.Fprintln(env.Stdout, "```")
		return err
	}
	md, err := os.Create(filepath.Join(dir, "report.md"))
	if err != nil {
		return err
	}
	rep.Markdown(md)
	if err := md.Close(); err != nil {
		return err
	}
	jl, err := os.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return err
	}
	if err := rep.JSONLines(jl); err != nil {
		jl.Close()
		return err
	}
	if err := jl.Close(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "wrote %s and %s\n", md.Name(), jl.Name())
	return nil
}

// progressLogger is loadFlags.logger with a progress bar: on a terminal
// (and without -q) the log goes through a Progress that also draws each
// phase's bar; otherwise there is no bar and the log is the progress.
func (l *loadFlags) progressLogger(env CommandEnv) (*slog.Logger, *load.Progress) {
	if l.quiet || !load.IsTerminal(env.Stderr) {
		return l.logger(env), nil
	}
	p := load.NewProgress(env.Stderr)
	return slog.New(slog.NewTextHandler(p, nil)), p
}
