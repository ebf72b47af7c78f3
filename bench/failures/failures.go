package failures

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// Config configures Failures: the ZooKeeper paper's Fig. 8,
// throughput over time of a fixed read/write mix while members of the
// ensemble are killed and restarted. Start from DefaultConfig.
type Config struct {
	// Targets are launched in this order, an ensemble of Servers each;
	// ignored when Connect is set.
	Targets []string
	Servers int
	// Connect, if set, are the client addresses of a running ensemble:
	// the timeline is recorded while someone else breaks it (Schedule
	// must be empty).
	Connect []string
	// ReadPct is the share of reads (the paper: 70, "a constant 30%
	// Writes").
	ReadPct   int
	Conns     int
	Inflight  int
	ValueSize int
	Keys      int64
	// Warmup precedes the measured interval of Duration; the schedule's
	// times count from its start. Bucket is the timeline's resolution.
	Warmup, Duration time.Duration
	Bucket           time.Duration
	Schedule         []FailureStep
	SessionTimeout   time.Duration
	Seed             uint64
	Command          string
	bench.LaunchSpec
}

// Failure experiment defaults. 70% reads is the paper's mix; 5 servers
// its ensemble (two followers down still leave a quorum). The measured
// interval runs 5 s past the default schedule's last step, to show the
// recovery.
const (
	DefaultFailuresReadPct  = 70
	DefaultFailuresServers  = 5
	DefaultFailuresBucket   = 100 * time.Millisecond
	DefaultFailuresDuration = 38 * time.Second
	maxFailuresBuckets      = 100_000
)

// DefaultConfig is what `corral bench failures` runs without
// flags.
func DefaultConfig() Config {
	// A constant that parses (tested).
	steps, _ := ParseSchedule(DefaultFailureSchedule)
	return Config{
		Targets: []string{launch.TargetCorral, launch.TargetZooKeeper}, Servers: DefaultFailuresServers,
		ReadPct: DefaultFailuresReadPct, Conns: bench.DefaultMixedConns, Inflight: bench.DefaultMixedInflight,
		ValueSize: bench.DefaultMixedValue, Keys: bench.DefaultMixedKeys, Warmup: bench.DefaultMixedWarmup,
		Duration: DefaultFailuresDuration, Bucket: DefaultFailuresBucket, Schedule: steps,
		SessionTimeout: bench.DefaultSessionTimeout, Seed: 1,
		LaunchSpec: bench.LaunchSpec{Timing: launch.DefaultTiming(), Java: "java", JavaHeap: launch.DefaultJavaHeap},
	}
}

func (c *Config) Validate() error {
	var errs []error
	if len(c.Connect) == 0 {
		if len(c.Targets) == 0 {
			errs = append(errs, errors.New("bench: nothing to launch"))
		}
		for _, t := range c.Targets {
			if t != launch.TargetCorral && t != launch.TargetZooKeeper {
				errs = append(errs, fmt.Errorf("bench: unknown target %q", t))
			}
		}
		if c.Servers < 1 || c.Servers > launch.MaxServers {
			errs = append(errs, fmt.Errorf("bench: ensemble size %d not in [1, %d]", c.Servers, launch.MaxServers))
		}
	} else if len(c.Schedule) > 0 {
		errs = append(errs, errors.New("bench: failures can only be injected into ensembles the benchmark launched (--schedule none with --connect)"))
	}
	for _, s := range c.Schedule {
		if s.Server > c.Servers && len(c.Connect) == 0 {
			errs = append(errs, fmt.Errorf("bench: schedule step %s names a server beyond the %d launched", s, c.Servers))
		}
		if s.At >= c.Duration {
			errs = append(errs, fmt.Errorf("bench: schedule step %s is not within the measured %v", s, c.Duration))
		}
	}
	switch {
	case c.ReadPct < 0 || c.ReadPct > 100:
		errs = append(errs, errors.New("bench: read percentage must be in [0, 100]"))
	case c.Conns < 1 || c.Conns > launch.MaxConns || c.Inflight < 1 || c.Inflight > launch.MaxInflight:
		errs = append(errs, fmt.Errorf("bench: conns and inflight must be in [1, %d]", launch.MaxConns))
	case c.Keys < 1 || c.Keys > bench.MaxMixedKeys:
		errs = append(errs, fmt.Errorf("bench: keys must be in [1, %d]", bench.MaxMixedKeys))
	case c.ValueSize < 0 || c.ValueSize > 1<<20-1024:
		errs = append(errs, errors.New("bench: value size must be in [0, 1047552]"))
	case c.Duration <= 0 || c.Duration > launch.MaxPhase || c.Warmup < 0 || c.Warmup > launch.MaxPhase:
		errs = append(errs, fmt.Errorf("bench: duration must be in (0, %v] and warm-up in [0, %v]", launch.MaxPhase, launch.MaxPhase))
	case c.Bucket < time.Millisecond || c.Bucket > c.Duration || c.Duration/c.Bucket > maxFailuresBuckets:
		errs = append(errs, fmt.Errorf("bench: bucket must be in [1ms, duration] and at most %d buckets", maxFailuresBuckets))
	case c.SessionTimeout <= 0 || c.SessionTimeout > 10*time.Minute:
		errs = append(errs, errors.New("bench: session timeout must be in (0, 10m]"))
	}
	return errors.Join(errs...)
}

// Report is the outcome of Failures.
type Report struct {
	Start          time.Time
	Env            bench.Env
	Command        string
	Servers        int
	ReadPct        int
	Keys           int64
	Bucket         time.Duration
	SessionTimeout time.Duration
	Schedule       []FailureStep
	Runs           []FailuresRun
	Plots          []string
	Err            string
}

// FailuresRun is one target's timeline.
type FailuresRun struct {
	Target   string   `json:"target"`
	Servers  int      `json:"servers"`
	Addrs    []string `json:"addrs"`
	Version  string   `json:"version,omitempty"`
	Argv     []string `json:"argv,omitempty"`
	JavaHeap string   `json:"java_heap,omitempty"`
	// Leader led when the measurement began (0: unknown).
	Leader  int              `json:"leader,omitempty"`
	Events  []FailureEvent   `json:"-"`
	Buckets []TimelineBucket `json:"-"`
	// Totals over the measured interval.
	Ops        int64 `json:"ops"`
	Errors     int64 `json:"errors"`
	Lost       int64 `json:"lost"`
	Reconnects int64 `json:"reconnects"`
	// Sessions are those the clients opened, ConnectFails the attempts
	// that got none, warm-up included.
	Sessions      int    `json:"sessions"`
	ConnectFails  int    `json:"connect_failures"`
	LastClientErr string `json:"last_client_error,omitempty"`
	Err           string `json:"error,omitempty"`
}

// FailureEvent is what one schedule step did.
type FailureEvent struct {
	// Step is the step's index in the schedule, from 1.
	Step int `json:"step"`
	// Planned is the step's time and At when it happened (for a kill, when
	// kill(2) had returned), in seconds from the start of the measured
	// interval.
	Planned float64 `json:"planned_s"`
	At      float64 `json:"at_s"`
	Action  string  `json:"action"`
	// Server and PID are the member acted on (0 if none was found).
	Server int    `json:"server,omitempty"`
	PID    int    `json:"pid,omitempty"`
	Err    string `json:"error,omitempty"`
}

// Run runs the failure experiment on each target in turn (or on the
// ensemble at cfg.Connect). A target that fails is reported and the others
// still run; the returned error joins the failures.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	rep := &Report{
		Start: time.Now(), Env: bench.NewEnv(), Command: cfg.Command, Servers: cfg.Servers, ReadPct: cfg.ReadPct,
		Keys: cfg.Keys, Bucket: cfg.Bucket, SessionTimeout: cfg.SessionTimeout, Schedule: cfg.Schedule,
	}
	rep.Env.Conns, rep.Env.Inflight, rep.Env.ValueSize = cfg.Conns, cfg.Inflight, cfg.ValueSize
	rep.Env.Warmup, rep.Env.Duration = cfg.Warmup, cfg.Duration
	if len(cfg.Connect) > 0 {
		rep.Servers = len(cfg.Connect)
		run := FailuresRun{Target: "server", Servers: len(cfg.Connect), Addrs: cfg.Connect}
		if out, err := load.FourLetter(ctx, cfg.Connect[0], "srvr"); err == nil {
			run.Version = launch.FirstLine(out)
		}
		err := failuresLoad(ctx, cfg, &run, cfg.Connect, nil)
		if err != nil {
			run.Err = err.Error()
			rep.Err = err.Error()
		}
		rep.Runs = append(rep.Runs, run)
		return rep, err
	}
	rep.Env.Timing = cfg.Timing.OrDefault()
	rep.Env.GlobalOutstandingLimit = launch.DefaultGlobalOutstandingLimit
	rep.Env.Servers = cfg.Servers
	work, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-failures-", cfg.Keep, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep.Env.WorkDir = work
	if err := cfg.Prepare(ctx, cfg.Targets, work); err != nil {
		rep.Err = err.Error()
		return rep, err
	}
	var errs []error
	for _, t := range cfg.Targets {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		run := FailuresRun{Target: t, Servers: cfg.Servers}
		if t == launch.TargetZooKeeper {
			run.JavaHeap = cfg.JavaHeap
		}
		if err := failuresTarget(ctx, cfg, &run, work); err != nil {
			run.Err = err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", t, err))
		}
		rep.Runs = append(rep.Runs, run)
	}
	if err := errors.Join(errs...); err != nil {
		rep.Err = err.Error()
		return rep, err
	}
	return rep, nil
}

// failuresTarget launches target's ensemble and runs the load and the
// schedule against it.
func failuresTarget(ctx context.Context, cfg Config, run *FailuresRun, work string) error {
	cfg.Log.Info("starting ensemble", "target", run.Target, "servers", cfg.Servers)
	ens, leader, stop, err := cfg.Start(ctx, work, run.Target, cfg.Servers, fmt.Sprintf("%s-%d", run.Target, cfg.Servers))
	if err != nil {
		return err
	}
	defer stop()
	run.Addrs, run.Version, run.Argv, run.Leader = ens.Addrs(), ens.Version, ens.Members[0].Argv, leader
	return failuresLoad(ctx, cfg, run, ens.ClientOrder(leader), ens)
}

// failuresLoad preloads the nodes, runs the clients over addrs for the
// warm-up and the measured interval and, if ens is not nil, the schedule
// against ens; it fills run's events, timeline and totals.
func failuresLoad(ctx context.Context, cfg Config, run *FailuresRun, addrs []string, ens *launch.Ensemble) error {
	ks, err := bench.Preload(ctx, run.Target, addrs, cfg.Keys, cfg.Conns, cfg.Inflight, cfg.ValueSize, cfg.SessionTimeout, cfg.Log)
	if err != nil {
		return err
	}
	picker, err := load.NewKeyPicker(ks)
	if err != nil {
		return err
	}
	data := load.Value(cfg.ValueSize)
	t0 := time.Now().Add(cfg.Warmup)
	tl := NewTimeline(t0, cfg.Duration, cfg.Bucket)
	end := t0.Add(cfg.Duration)
	logf := func(msg string, args ...any) { cfg.Log.Debug(msg, append([]any{"target", run.Target}, args...)...) }
	clients := make([]*tlClient, cfg.Conns)
	var wg sync.WaitGroup
	for i := range clients {
		clients[i] = &tlClient{
			addrs: addrs, cur: i % len(addrs), inflight: cfg.Inflight, timeout: cfg.SessionTimeout,
			src: load.NewMixedSource(picker, cfg.ReadPct, data, cfg.Seed+uint64(i)), tl: tl, end: end, log: logf,
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			clients[i].run(ctx)
		}()
	}
	cfg.Log.Info("load running", "target", run.Target, "conns", cfg.Conns, "read_pct", cfg.ReadPct,
		"warmup", cfg.Warmup, "duration", cfg.Duration, "schedule", FormatSchedule(cfg.Schedule))
	if ens != nil && len(cfg.Schedule) > 0 {
		in := &injector{ens: ens, t0: t0, kills: map[int]int{}, log: cfg.Log}
		run.Events = in.run(ctx, cfg.Schedule)
	}
	wg.Wait()
	run.Buckets = tl.Buckets()
	for _, b := range run.Buckets {
		run.Ops += b.Reads + b.Writes
		run.Errors += b.Errors
		run.Lost += b.Lost
		run.Reconnects += b.Reconnects
	}
	for _, c := range clients {
		run.Sessions += c.sessions
		run.ConnectFails += c.connectFails
		if c.lastErr != nil {
			run.LastClientErr = c.lastErr.Error()
		}
	}
	cfg.Log.Info("load done", "target", run.Target, "ops", run.Ops, "errors", run.Errors, "lost", run.Lost,
		"reconnects", run.Reconnects)
	if run.Sessions == 0 {
		return fmt.Errorf("bench: no client got a session (last error: %s)", run.LastClientErr)
	}
	return ctx.Err()
}

// injector carries out a failure schedule against an ensemble.
type injector struct {
	ens *launch.Ensemble
	t0  time.Time
	// kills counts the kills of each member, so that follower kills
	// rotate over the followers.
	kills map[int]int
	log   *slog.Logger
}

// leaderWait bounds how long a step that needs the leader (or a
// follower) waits for one to answer srvr: an election may be under way.
const leaderWait = 10 * time.Second

// probeLead is how long before a kill-leader or kill-follower step the
// members are asked who leads: srvr goes through the same request path as
// the load, and a saturated server may take a second or more to answer it;
// asking ahead keeps the kill on its time.
const probeLead = 2 * time.Second

// Run carries out the steps at their times and returns what they did.
func (in *injector) run(ctx context.Context, steps []FailureStep) []FailureEvent {
	var events []FailureEvent
	for i, s := range steps {
		id := s.Server
		if s.Action == ActionKillLeader || s.Action == ActionKillFollower {
			if !sleepUntil(ctx, in.t0.Add(s.At-probeLead)) {
				return events
			}
			id = in.find(ctx, s.Action)
		}
		if !sleepUntil(ctx, in.t0.Add(s.At)) {
			return events
		}
		evs := in.do(i+1, s, id)
		for _, ev := range evs {
			in.log.Info("injected", "target", in.ens.Target, "step", ev.Step, "action", ev.Action,
				"server", ev.Server, "pid", ev.PID, "at_s", fmt.Sprintf("%.3f", ev.At), "err", ev.Err)
		}
		events = append(events, evs...)
	}
	return events
}

// sleepUntil waits until t and reports whether ctx is still live.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// do carries out one step; id is the member a kill acts on (found
// beforehand for kill-leader and kill-follower, 0 if none was).
func (in *injector) do(n int, s FailureStep, id int) []FailureEvent {
	ev := FailureEvent{Step: n, Planned: s.At.Seconds(), Action: s.action()}
	since := func(t time.Time) float64 { return t.Sub(in.t0).Seconds() }
	switch s.Action {
	case ActionRestart:
		var ids []int
		for _, m := range in.ens.Members {
			if (s.Server == 0 || s.Server == m.ID) && m.PID() == 0 {
				ids = append(ids, m.ID)
			}
		}
		if len(ids) == 0 {
			ev.At, ev.Err = since(time.Now()), "no server to restart: none is down"
			return []FailureEvent{ev}
		}
		var evs []FailureEvent
		for _, id := range ids {
			e := ev
			e.Server, e.At = id, since(time.Now())
			if err := in.ens.Restart(id); err != nil {
				e.Err = err.Error()
			} else {
				e.PID = in.ens.Member(id).PID()
			}
			evs = append(evs, e)
		}
		return evs
	}
	m := in.ens.Member(id)
	if m == nil || m.PID() == 0 {
		ev.At = since(time.Now())
		switch s.Action {
		case ActionKillLeader:
			ev.Err = fmt.Sprintf("no member said it leads within %v", leaderWait)
		case ActionKillFollower:
			ev.Err = fmt.Sprintf("no member said it follows within %v", leaderWait)
		default:
			ev.Server, ev.Err = id, fmt.Sprintf("server.%d is not running", id)
		}
		return []FailureEvent{ev}
	}
	ev.Server, ev.PID = id, m.PID()
	at, err := in.ens.Kill(id)
	if at.IsZero() {
		at = time.Now()
	}
	ev.At = since(at)
	if err != nil {
		ev.Err = err.Error()
	}
	in.kills[id]++
	return []FailureEvent{ev}
}

// find asks the members for srvr until one answers in the role the action
// wants, and returns its id (0 after leaderWait).
func (in *injector) find(ctx context.Context, action string) int {
	ctx, cancel := context.WithTimeout(ctx, leaderWait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		st := in.ens.Probe(ctx)
		id := pickLeader(st)
		if action == ActionKillFollower {
			id = pickFollower(st, in.kills)
		}
		if id != 0 {
			return id
		}
		select {
		case <-ctx.Done():
			return 0
		case <-tick.C:
		}
	}
}
