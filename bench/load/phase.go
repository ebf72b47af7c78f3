package load

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/wire"
)

// PhaseConfig describes one measured phase: Conns sessions, each with up to
// Inflight requests outstanding, run for Warmup (not measured) and then
// Duration (measured), or until MaxOps requests have been issued.
type PhaseConfig struct {
	// Target and Phase label the result; Phase defaults to the workload.
	Target string
	Phase  string
	// Addrs are host:port client addresses; connections are spread over
	// them round-robin.
	Addrs    []string
	Workload Workload
	Conns    int
	Inflight int
	// ValueSize is the data size of create and setData requests.
	ValueSize int
	Warmup    time.Duration
	Duration  time.Duration
	// MaxOps bounds the requests issued by all connections together,
	// warm-up included; 0 means the phase is bounded by time only.
	MaxOps int64
	// Root is the parent of every node the phase creates ("/bench" if
	// empty); it is created if missing.
	Root string
	// Prefix names created nodes (Root/Prefix-conn-i); if empty a prefix
	// unique to this run is made, so runs against one server do not collide.
	Prefix string
	// Keys are the nodes set and get address (from a create phase).
	Keys *KeySpace
	// ServerPID, if not 0, is the server process whose CPU time is measured.
	ServerPID int
	// ServerProcs, if not empty, are the processes of an ensemble: each
	// one's CPU time is measured and ServerCPU is their sum. ServerPID is
	// then unused.
	ServerProcs []ServerProc
	// FsyncAddrs, if not empty, are the client addresses of every server
	// whose transaction-log fsyncs in the measured interval are counted
	// (mntr's zk_cnt_fsynctime before and after it).
	FsyncAddrs []string
	// DrainTimeout bounds the wait for outstanding replies after the
	// Measured interval (DefaultDrainTimeout if 0); a server that takes
	// longer fails the phase with ErrStalled.
	DrainTimeout time.Duration
	// SessionTimeout is requested for each session (30s if 0).
	SessionTimeout time.Duration
	// Rate, if positive, runs the phase open loop: Rate requests per
	// second in total on a fixed schedule, at most Inflight outstanding
	// per connection (see openloop.go). 0 is closed loop.
	Rate float64
	// Run numbers the repetition the phase belongs to (compare --repeat);
	// 0 when not repeated.
	Run int
	// Progress, if set, draws the phase's progress bar (see progress.go);
	// the phase's start and end are then logged at debug level only.
	Progress *Progress
	Log      *slog.Logger
}

// PhaseResult is one phase's measurement. Latencies are of successful
// requests whose replies arrived in the measured interval; throughput is
// their number over the interval's length.
type PhaseResult struct {
	Target string `json:"target"`
	// Run is the repetition (compare --repeat), from 1; 0 when not
	// repeated.
	Run        int      `json:"run,omitempty"`
	Phase      string   `json:"phase"`
	Workload   Workload `json:"workload"`
	Conns      int      `json:"conns"`
	Inflight   int      `json:"inflight"`
	ValueSize  int      `json:"value_bytes"`
	Seconds    float64  `json:"seconds"`
	Ops        int64    `json:"ops"`
	Errors     int64    `json:"errors"`
	FirstError string   `json:"first_error,omitempty"`
	OpsPerSec  float64  `json:"ops_per_sec"`
	stats.Latency
	// CPUUse is the servers', the load generator's and the machine's CPU
	// in the measured interval.
	CPUUse
	// FsyncsEach is each server's log fsyncs in the measured interval; nil
	// when not measured.
	FsyncsEach []ServerFsyncs `json:"fsyncs_each,omitempty"`
	Err        string         `json:"error,omitempty"`
	// OpenLoop is what an open-loop phase (PhaseConfig.Rate) adds.
	OpenLoop *OpenLoopResult `json:"open_loop,omitempty"`
	// Keys are the nodes a create phase made.
	Keys *KeySpace `json:"-"`
	// Hist holds the measured latencies (for the latency plot).
	Hist *stats.Hist `json:"-"`
}

// ServerProc names one server process whose CPU time a phase measures.
type ServerProc struct {
	// Name says which server it is, with its role ("server.3 leader").
	Name string
	PID  int
}

// ProcCPU is one server process's CPU seconds in a measured interval.
type ProcCPU struct {
	Server string  `json:"server"`
	PID    int     `json:"pid"`
	CPU    float64 `json:"cpu_s"`
}

// DefaultRoot is the parent node of everything the benchmark creates.
const DefaultRoot = "/bench"

func (cfg *PhaseConfig) fill() error {
	if len(cfg.Addrs) == 0 {
		return errors.New("bench: no server address")
	}
	if cfg.Conns < 1 || cfg.Inflight < 1 {
		return fmt.Errorf("bench: need at least one connection and one request in flight (got %d, %d)", cfg.Conns, cfg.Inflight)
	}
	if cfg.ValueSize < 0 || cfg.ValueSize > 1<<20 {
		return fmt.Errorf("bench: value size %d out of range", cfg.ValueSize)
	}
	if cfg.Duration <= 0 {
		return errors.New("bench: duration must be positive")
	}
	if cfg.Warmup < 0 {
		cfg.Warmup = 0
	}
	if _, err := ParseWorkload(string(cfg.Workload)); err != nil {
		return err
	}
	if cfg.Phase == "" {
		cfg.Phase = string(cfg.Workload)
	}
	if cfg.Root == "" {
		cfg.Root = DefaultRoot
	}
	if cfg.Prefix == "" {
		cfg.Prefix = cfg.Phase + strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36)
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if !cfg.Workload.Creates() && (cfg.Keys == nil || cfg.Keys.Total() == 0) {
		return fmt.Errorf("bench: %s phase needs nodes from a create phase", cfg.Workload)
	}
	return nil
}

// RunPhase runs one phase and returns its measurement. A phase that fails
// part way still returns what it measured, with Err set.
func RunPhase(ctx context.Context, cfg PhaseConfig) (PhaseResult, error) {
	if err := cfg.fill(); err != nil {
		return PhaseResult{}, err
	}
	res := PhaseResult{
		Target: cfg.Target, Run: cfg.Run, Phase: cfg.Phase, Workload: cfg.Workload,
		Conns: cfg.Conns, Inflight: cfg.Inflight, ValueSize: cfg.ValueSize,
	}
	fail := func(err error) (PhaseResult, error) {
		res.Err = err.Error()
		return res, err
	}

	conns, err := DialAll(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	data := Value(cfg.ValueSize)
	sources := make([]source, len(conns))
	var creators []*createSource
	if cfg.Workload.Creates() {
		if err := conns[0].EnsureNode(ctx, cfg.Root); err != nil {
			CloseAll(conns)
			return fail(err)
		}
		ks := &KeySpace{Root: cfg.Root, Prefix: cfg.Prefix, Counts: make([]int64, len(conns))}
		res.Keys = ks
		for i := range conns {
			s := &createSource{ks: ks, creator: i, data: data}
			creators = append(creators, s)
			sources[i] = s
		}
	} else {
		for i := range conns {
			kc, err := NewKeyCursor(cfg.Keys, i)
			if err != nil {
				CloseAll(conns)
				return fail(err)
			}
			if cfg.Workload == WorkloadSet {
				sources[i] = &setSource{keys: kc, data: data}
			} else {
				sources[i] = &getSource{keys: kc}
			}
		}
	}

	t0 := time.Now()
	w := &Window{Start: t0.Add(cfg.Warmup), End: t0.Add(cfg.Warmup + cfg.Duration), Drain: cfg.DrainTimeout}
	if cfg.MaxOps > 0 {
		w.Budget = new(atomic.Int64)
		w.Budget.Store(cfg.MaxOps)
	}
	cfg.Log.Log(ctx, cfg.logLevel(), "phase start", "target", cfg.Target, "phase", cfg.Phase, "conns", cfg.Conns,
		"inflight", cfg.Inflight, "warmup", cfg.Warmup, "duration", cfg.Duration, "rate", cfg.Rate)
	bar := cfg.Progress.start(ctx, cfg, w) // before openWindows copies w
	windows := openWindows(w, cfg.Rate, len(conns), t0)

	perConn := make([]ConnStats, len(conns))
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			perConn[i], errs[i] = c.Run(ctx, sources[i], cfg.Inflight, windows[i])
		}()
	}
	allDone := make(chan struct{})
	var doneAt time.Time
	go func() {
		wg.Wait()
		doneAt = time.Now()
		close(allDone)
	}()

	meter := CpuMeter{}
	switch {
	case len(cfg.ServerProcs) > 0:
		for _, p := range cfg.ServerProcs {
			meter.Pids = append(meter.Pids, p.PID)
		}
	case cfg.ServerPID > 0:
		meter.Pids = []int{cfg.ServerPID}
	}
	finished := WaitUntil(ctx, w.Start, allDone)
	meter.Begin()
	fsyncsBefore := fsyncCounts(ctx, cfg.FsyncAddrs)
	if !finished {
		WaitUntil(ctx, w.End, allDone)
	}
	meter.End()
	fsyncsAfter := fsyncCounts(ctx, cfg.FsyncAddrs)
	<-allDone
	res.FsyncsEach = FsyncDeltas(cfg.FsyncAddrs, fsyncsBefore, fsyncsAfter)

	end := w.End
	if doneAt.Before(end) {
		end = doneAt
	}
	if end.After(w.Start) {
		res.Seconds = end.Sub(w.Start).Seconds()
	}
	hist := stats.NewHist()
	var writes, requests int64
	for i := range perConn {
		writes += perConn[i].writes
		requests += perConn[i].requests
		if perConn[i].Hist != nil {
			hist.Merge(perConn[i].Hist)
		}
		res.Ops += perConn[i].Ops
		if perConn[i].Errs > 0 && res.Errors == 0 {
			res.FirstError = ErrorName(perConn[i].FirstErr)
		}
		res.Errors += perConn[i].Errs
	}
	res.Latency = hist.Summary()
	res.Hist = hist
	if res.Seconds > 0 {
		res.OpsPerSec = float64(res.Ops) / res.Seconds
	}
	res.OpenLoop = openResult(cfg.Rate, windows, perConn)
	bar.finish(&res)
	res.CPUUse = meter.Use(cfg.ServerProcs)
	for i, s := range creators {
		res.Keys.Counts[i] = s.issued
	}
	cfg.Log.Log(ctx, cfg.logLevel(), "phase end", "target", cfg.Target, "phase", cfg.Phase, "ops", res.Ops,
		"ops_per_sec", int64(res.OpsPerSec), "errors", res.Errors,
		"requests_per_write", fmt.Sprintf("%.1f", float64(requests)/float64(max(writes, 1))))
	if err := summarizeErrs(errs); err != nil {
		return fail(fmt.Errorf("bench: %s %s: %w", cfg.Target, cfg.Phase, err))
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	return res, nil
}

// summarizeErrs joins the connections' errors on one line, each distinct
// message once with its count, so that a server dying under 32
// connections reads as "EOF (30 connections); ..." in the report rather
// than as 32 lines. The first error stays wrapped for errors.Is.
func summarizeErrs(errs []error) error {
	var first error
	var order []string
	count := map[string]int{}
	for _, err := range errs {
		if err == nil {
			continue
		}
		if first == nil {
			first = err
		}
		m := err.Error()
		if count[m] == 0 {
			order = append(order, m)
		}
		count[m]++
	}
	if first == nil {
		return nil
	}
	const shown = 3
	parts := make([]string, 0, shown+1)
	for i, m := range order {
		if i == shown {
			parts = append(parts, fmt.Sprintf("%d more distinct errors", len(order)-shown))
			break
		}
		if c := count[m]; c > 1 {
			m = fmt.Sprintf("%s (%d connections)", m, c)
		}
		parts = append(parts, m)
	}
	if len(order) == 1 && count[order[0]] == 1 {
		return first
	}
	return fmt.Errorf("%w%s", first, strings.TrimPrefix(strings.Join(parts, "; "), first.Error()))
}

// WaitUntil waits until t, done being closed, or ctx ending, and reports
// whether done was closed.
func WaitUntil(ctx context.Context, t time.Time, done <-chan struct{}) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

func DialAll(ctx context.Context, cfg PhaseConfig) ([]*Conn, error) {
	conns := make([]*Conn, cfg.Conns)
	errs := make([]error, cfg.Conns)
	var wg sync.WaitGroup
	// Dial a few at a time: a handshake is a write (session creation), and
	// dozens at once only queue behind each other.
	sem := make(chan struct{}, 8)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			conns[i], errs[i] = Dial(ctx, cfg.Addrs[i%len(cfg.Addrs)], cfg.SessionTimeout)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		CloseAll(conns)
		return nil, err
	}
	return conns, nil
}

func CloseAll(conns []*Conn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

func ErrorName(code int32) string {
	return fmt.Sprintf("%d (%s)", code, wire.Code(code))
}

func Ms(us int64) float64 { return float64(us) / 1000 }

func RunLabel(target string, run int) string {
	if run > 0 {
		return fmt.Sprintf("%s run %d", target, run)
	}
	return target
}

// Label names the target and, when repeated, the run.
func (r *PhaseResult) Label() string { return RunLabel(r.Target, r.Run) }
