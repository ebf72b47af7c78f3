package failover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// Config configures Failover. Zero fields take the defaults below.
type Config struct {
	Target string
	// Servers is the ensemble's size (DefaultFailoverServers).
	Servers int
	// Trials is the number of leader kills.
	Trials int
	Timing launch.Timing
	// SessionTimeout is what the writer's session asks for.
	SessionTimeout time.Duration
	// ValueSize is the data size of each setData.
	ValueSize int
	// Pre is the least time the writer writes before each kill.
	Pre time.Duration
	// RecoveryTimeout bounds the wait for the first write after a kill;
	// WholeTimeout the wait for the ensemble to be whole after a restart.
	RecoveryTimeout time.Duration
	WholeTimeout    time.Duration

	WorkDir   string
	Keep      bool
	OutDir    string
	CorralBin string
	ZKLib     string
	Java      string
	JavaHeap  string
	Log       *slog.Logger
}

// Run defaults.
const (
	DefaultFailoverServers   = 3
	DefaultFailoverTrials    = 20
	DefaultFailoverValueSize = 128
	DefaultPre               = time.Second
	DefaultRecoveryTimeout   = 60 * time.Second
	// minWritesBeforeKill is the least number of successful writes before
	// a kill, so the series shows the steady state the kill interrupts.
	minWritesBeforeKill = 10
	// maxTrialWrites bounds the writes of one trial.
	maxTrialWrites = 1 << 20
	// MaxTrials bounds the trials of one run.
	MaxTrials = 1000
)

// FailoverPath is the node the failover writer overwrites.
const FailoverPath = "/bench-failover"

func (c *Config) Fill() error {
	if c.Target == "" {
		c.Target = launch.TargetCorral
	}
	if c.Target != launch.TargetCorral && c.Target != launch.TargetZooKeeper {
		return fmt.Errorf("bench: unknown target %q (want %s or %s)", c.Target, launch.TargetCorral, launch.TargetZooKeeper)
	}
	if c.Servers == 0 {
		c.Servers = DefaultFailoverServers
	}
	if c.Servers < 3 || c.Servers > launch.MaxServers {
		return fmt.Errorf("bench: failover needs an ensemble of 3 to %d servers, not %d", launch.MaxServers, c.Servers)
	}
	if c.Trials == 0 {
		c.Trials = DefaultFailoverTrials
	}
	if c.Trials < 1 || c.Trials > MaxTrials {
		return fmt.Errorf("bench: trials must be in [1, %d]", MaxTrials)
	}
	c.Timing = c.Timing.OrDefault()
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = bench.DefaultSessionTimeout
	}
	if c.ValueSize < 0 || c.ValueSize > 1<<20-1024 {
		return fmt.Errorf("bench: value size %d out of range", c.ValueSize)
	}
	if c.Pre <= 0 {
		c.Pre = DefaultPre
	}
	if c.RecoveryTimeout <= 0 {
		c.RecoveryTimeout = DefaultRecoveryTimeout
	}
	if c.WholeTimeout <= 0 {
		c.WholeTimeout = bench.WholeTimeout
	}
	if c.Java == "" {
		c.Java = "java"
	}
	if c.JavaHeap == "" {
		c.JavaHeap = launch.DefaultJavaHeap
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Report is the outcome of Failover.
type Report struct {
	Start  time.Time
	Env    bench.Env
	Target string
	// Servers is the ensemble's size.
	Servers int
	Timing  launch.Timing
	// SessionTimeout is what the writer asked for; Negotiated what the
	// servers granted (the last value seen).
	SessionTimeout time.Duration
	Negotiated     time.Duration
	ValueSize      int
	Pre            time.Duration
	RecoveryTimeout,
	WholeTimeout time.Duration
	Version  string
	Argv     []string
	JavaHeap string
	Trials   []FailoverTrial
	// Err is the failure that ended the run early, if any.
	Err string
}

// FailoverTrial is one leader kill.
type FailoverTrial struct {
	Trial int `json:"trial"`
	// Killed is the id of the leader killed, KilledPID its process.
	Killed    int `json:"killed_leader"`
	KilledPID int `json:"killed_pid"`
	// NewLeader is the leader once the ensemble was whole again.
	NewLeader int `json:"new_leader,omitempty"`
	// WriterFrom is the server the writer started on (a follower) and
	// WriterTo the one its first write after the kill went to.
	WriterFrom int `json:"writer_server"`
	WriterTo   int `json:"writer_server_after,omitempty"`
	// GapMs is the client-side gap: from the completion of the last
	// successful write before the kill to the completion of the first
	// successful write issued after it. KillToWriteMs is that second
	// completion's distance from the kill, LastBeforeKillMs the first's.
	GapMs            float64 `json:"gap_ms"`
	KillToWriteMs    float64 `json:"kill_to_write_ms"`
	LastBeforeKillMs float64 `json:"last_write_before_kill_ms"`
	// WritesBefore are the successful writes before the kill; FailedWrites
	// the writes that failed within the gap.
	WritesBefore int `json:"writes_before"`
	FailedWrites int `json:"failed_writes"`
	// Reconnects counts the writer's new connections after the first,
	// NewSessions those where its session had expired.
	Reconnects  int `json:"reconnects"`
	NewSessions int `json:"new_sessions"`
	// RejoinMs is from restarting the killed server to the ensemble being
	// whole again.
	RejoinMs float64 `json:"rejoin_ms"`
	Err      string  `json:"error,omitempty"`

	gap     time.Duration
	measure bool
}

// Gaps are the gaps of the trials that measured one.
func (r *Report) Gaps() []time.Duration {
	var g []time.Duration
	for _, t := range r.Trials {
		if t.measure {
			g = append(g, t.gap)
		}
	}
	return g
}

// Summary is the gaps' percentiles.
func (r *Report) Summary() GapSummary { return summarizeGaps(r.Gaps()) }

// Run starts an ensemble of cfg.Target and kills its leader
// cfg.Trials times while a client writes, measuring the gap the client
// sees each time. A trial that fails ends the run; the report holds the
// trials so far.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Fill(); err != nil {
		return nil, err
	}
	work, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-failover-", cfg.Keep, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep := &Report{
		Start: time.Now(), Env: bench.NewEnv(), Target: cfg.Target, Servers: cfg.Servers, Timing: cfg.Timing,
		SessionTimeout: cfg.SessionTimeout, ValueSize: cfg.ValueSize, Pre: cfg.Pre,
		RecoveryTimeout: cfg.RecoveryTimeout, WholeTimeout: cfg.WholeTimeout,
	}
	rep.Env.WorkDir, rep.Env.Servers, rep.Env.Timing = work, cfg.Servers, cfg.Timing
	if cfg.Target == launch.TargetZooKeeper {
		rep.JavaHeap = cfg.JavaHeap
	}
	fail := func(err error) (*Report, error) {
		rep.Err = err.Error()
		return rep, err
	}
	lc := launch.LaunchConfig{
		Dir: filepath.Join(work, cfg.Target), Timing: cfg.Timing, ReadyTimeout: cfg.WholeTimeout,
		CorralBin: cfg.CorralBin, Java: cfg.Java, JavaHeap: cfg.JavaHeap, ZKLib: cfg.ZKLib, Log: cfg.Log,
	}
	if err := bench.PrepareLaunch(ctx, cfg.Target, &lc, work); err != nil {
		return fail(err)
	}
	ens, err := launch.LaunchEnsemble(ctx, cfg.Target, launch.EnsembleConfig{LaunchConfig: lc, Servers: cfg.Servers})
	if err != nil {
		return fail(err)
	}
	defer func() {
		ens.Stop()
		if cfg.OutDir != "" {
			for _, m := range ens.Members {
				base := fmt.Sprintf("%s.s%d", cfg.Target, m.ID)
				bench.CopyFile(m.LogPath, filepath.Join(cfg.OutDir, base+".log"))
				bench.CopyFile(m.ZooCfgPath, filepath.Join(cfg.OutDir, base+".zoo.cfg"))
			}
		}
	}()
	rep.Version, rep.Argv = ens.Version, ens.Members[0].Argv
	if err := SetupFailoverNode(ctx, ens.Addrs()[0]); err != nil {
		return fail(err)
	}
	data := load.Value(cfg.ValueSize)
	for i := 1; i <= cfg.Trials; i++ {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		tr, negotiated := RunTrial(ctx, cfg, ens, i, data)
		rep.Trials = append(rep.Trials, tr)
		if negotiated > 0 {
			rep.Negotiated = negotiated
		}
		if tr.Err != "" {
			return fail(fmt.Errorf("trial %d: %s", i, tr.Err))
		}
		cfg.Log.Info("trial done", "trial", i, "killed", tr.Killed, "gap_ms", fmt.Sprintf("%.1f", tr.GapMs),
			"kill_to_write_ms", fmt.Sprintf("%.1f", tr.KillToWriteMs), "new_leader", tr.NewLeader,
			"rejoin_ms", fmt.Sprintf("%.0f", tr.RejoinMs))
	}
	return rep, nil
}

func SetupFailoverNode(ctx context.Context, addr string) error {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := load.Dial(dctx, addr, 30*time.Second)
	if err != nil {
		return err
	}
	if err := c.EnsureNode(dctx, FailoverPath); err != nil {
		c.Close()
		return err
	}
	return c.CloseSession(dctx)
}

// RunTrial kills the leader once under the writer. It returns the trial
// and the session timeout the writer was granted.
func RunTrial(ctx context.Context, cfg Config, ens *launch.Ensemble, n int, data []byte) (FailoverTrial, time.Duration) {
	tr := FailoverTrial{Trial: n}
	failed := func(err error) (FailoverTrial, time.Duration) {
		tr.Err = err.Error()
		return tr, 0
	}
	leader, err := ens.WaitWhole(ctx, cfg.WholeTimeout)
	if err != nil {
		return failed(err)
	}
	tr.Killed, tr.KilledPID = leader, ens.Member(leader).PID()
	tr.WriterFrom = writerServer(n, leader, len(ens.Members))

	// The writer's time limit covers the steady phase and the recovery;
	// the harness stops it sooner when the first write after the kill is in.
	maxTime := cfg.Pre + preSlack + cfg.RecoveryTimeout + 10*time.Second
	logf := func(msg string, args ...any) { cfg.Log.Info(msg, append([]any{"trial", n}, args...)...) }
	w := newFailWriter(ens.Addrs(), tr.WriterFrom-1, []byte(FailoverPath), data, cfg.SessionTimeout, maxTrialWrites, maxTime, logf)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx)
	}()
	stop := func() time.Duration {
		w.finish()
		<-done
		return w.negotiated
	}

	// Steady writes first.
	if err := PollUntil(ctx, done, cfg.Pre+preSlack, func() bool {
		return w.since() >= cfg.Pre && w.okCount.Load() >= minWritesBeforeKill
	}); err != nil {
		neg := stop()
		tr.Err = fmt.Sprintf("writer made %d writes in %v before the kill: %v%s", w.okCount.Load(), cfg.Pre+preSlack, err, stopReason(w))
		return tr, neg
	}
	// The kill's instant is taken when kill(2) has returned: a write sent
	// after it cannot be answered by the old leader.
	killed, err := ens.Kill(leader)
	if err != nil {
		neg := stop()
		tr.Err = err.Error()
		return tr, neg
	}
	kill := killed.Sub(w.t0)
	recoverErr := PollUntil(ctx, done, cfg.RecoveryTimeout, func() bool {
		return time.Duration(w.lastOKSent.Load()) >= kill
	})
	negotiated := stop()
	tr.Reconnects, tr.NewSessions = w.reconnects, w.newSessions

	// Make the ensemble whole again before judging, so that a failed trial
	// does not leave a member down for the next run of the tool.
	restart := time.Now()
	if err := ens.Restart(leader); err != nil {
		tr.Err = err.Error()
		return tr, negotiated
	}
	newLeader, wholeErr := ens.WaitWhole(ctx, cfg.WholeTimeout)
	tr.RejoinMs = MsOf(time.Since(restart))
	tr.NewLeader = newLeader

	if recoverErr != nil {
		tr.Err = fmt.Sprintf("no write issued after the kill succeeded within %v: %v%s", cfg.RecoveryTimeout, recoverErr, stopReason(w))
		return tr, negotiated
	}
	g, err := computeGap(w.recs, kill)
	if err != nil {
		tr.Err = err.Error()
		return tr, negotiated
	}
	tr.gap, tr.measure = g.gap, true
	tr.GapMs, tr.KillToWriteMs, tr.LastBeforeKillMs = MsOf(g.gap), MsOf(g.fromKill), MsOf(kill-g.lastBefore)
	tr.WritesBefore, tr.FailedWrites = g.okBefore, g.failed
	tr.WriterTo = g.server + 1
	if wholeErr != nil {
		tr.Err = wholeErr.Error()
	}
	return tr, negotiated
}

// writerServer picks the member trial n's writer starts on: the members
// in turn, skipping the leader, so that over the trials the writer sits on
// every member that is a follower at the time.
func writerServer(n, leader, servers int) int {
	id := (n-1)%servers + 1
	if id == leader {
		id = id%servers + 1
	}
	return id
}

// preSlack is how much longer than Pre the writer may take to make its
// first writes (the session handshake, a slow first fsync).
const preSlack = 30 * time.Second

func stopReason(w *failWriter) string {
	if w.stopErr != nil {
		return " (" + w.stopErr.Error() + ")"
	}
	return ""
}

// errWriterStopped is returned by pollUntil when the writer ended first.
var errWriterStopped = errors.New("writer stopped")

// PollUntil checks cond every 2ms until it holds (nil), timeout passes,
// ctx ends or done is closed.
func PollUntil(ctx context.Context, done <-chan struct{}, timeout time.Duration, cond func() bool) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			if cond() {
				return nil
			}
			return errWriterStopped
		case <-t.C:
			return fmt.Errorf("timed out after %v", timeout)
		case <-tick.C:
		}
	}
}
