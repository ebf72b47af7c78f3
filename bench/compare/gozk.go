package compare

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

// The clients that can drive compare's phases.
const (
	// ClientLoad is the built-in load generator (package load): pipelined,
	// up to Inflight requests outstanding per connection.
	ClientLoad = "load"
	// ClientGozk is github.com/go-zookeeper/zk, an ordinary third-party
	// client: its calls are synchronous, so Inflight goroutines share each
	// connection, each with one request outstanding.
	ClientGozk = "gozk"
)

// gozkSessionWait bounds the wait for a go-zookeeper session.
const gozkSessionWait = 30 * time.Second

// runGozkPhase is load.RunPhase through go-zookeeper: pc.Conns sessions
// (connection i on pc.Addrs[i mod len]), pc.Inflight goroutines on each
// issuing pc.Workload in a closed loop for pc.Warmup and then pc.Duration.
// A request counts in the measured interval if its reply arrived in it,
// as with the load generator; the server's CPU, the whole machine's and
// this process's are measured over the same interval. Open loop (pc.Rate)
// and MaxOps are not supported.
func runGozkPhase(ctx context.Context, pc load.PhaseConfig) (load.PhaseResult, error) {
	if err := checkGozkPhase(&pc); err != nil {
		return load.PhaseResult{}, err
	}
	res := load.PhaseResult{
		Target: pc.Target, Run: pc.Run, Phase: pc.Phase, Workload: pc.Workload,
		Conns: pc.Conns, Inflight: pc.Inflight, ValueSize: pc.ValueSize,
	}
	fail := func(err error) (load.PhaseResult, error) {
		res.Err = err.Error()
		return res, err
	}
	conns, err := dialGozk(ctx, pc)
	if err != nil {
		return fail(err)
	}
	defer closeGozk(conns)
	// Closing the connections fails the calls in flight, so that a
	// cancelled phase ends promptly.
	stop := context.AfterFunc(ctx, func() { closeGozk(conns) })
	defer stop()
	data := load.Value(pc.ValueSize)
	workers := pc.Conns * pc.Inflight
	var ks *load.KeySpace
	if pc.Workload.Creates() {
		if _, err := conns[0].Create(pc.Root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fail(fmt.Errorf("bench: creating %s: %w", pc.Root, err))
		}
		ks = &load.KeySpace{Root: pc.Root, Prefix: pc.Prefix, Counts: make([]int64, workers)}
		res.Keys = ks
	}

	t0 := time.Now()
	start, end := t0.Add(pc.Warmup), t0.Add(pc.Warmup+pc.Duration)
	pc.Log.Log(ctx, gozkLogLevel(pc), "phase start", "client", ClientGozk, "target", pc.Target, "phase", pc.Phase,
		"conns", pc.Conns, "goroutines_per_conn", pc.Inflight, "warmup", pc.Warmup, "duration", pc.Duration)
	ops := make([]gozkCall, workers)
	for w := range ops {
		if ops[w], err = gozkOp(pc, conns[w%len(conns)], ks, w, data); err != nil {
			return fail(err)
		}
	}
	tallies := make([]gozkTally, workers)
	var wg sync.WaitGroup
	for w, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tallies[w] = gozkLoop(ctx, op, start, end)
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	meter := load.CpuMeter{}
	for _, p := range pc.ServerProcs {
		meter.Pids = append(meter.Pids, p.PID)
	}
	if len(pc.ServerProcs) == 0 && pc.ServerPID > 0 {
		meter.Pids = []int{pc.ServerPID}
	}
	finished := load.WaitUntil(ctx, start, allDone)
	meter.Begin()
	fsyncsBefore := mntrFsyncs(ctx, pc.FsyncAddrs)
	if !finished {
		load.WaitUntil(ctx, end, allDone)
	}
	meter.End()
	fsyncsAfter := mntrFsyncs(ctx, pc.FsyncAddrs)
	// A call outstanding at the end has DrainTimeout to return; then the
	// connections are closed under it.
	if !load.WaitUntil(ctx, time.Now().Add(pc.DrainTimeout), allDone) {
		closeGozk(conns)
		<-allDone
		if ctx.Err() == nil {
			err = fmt.Errorf("bench: %s %s: calls still outstanding %v after the measured interval", pc.Target, pc.Phase, pc.DrainTimeout)
		}
	}
	res.FsyncsEach = load.FsyncDeltas(pc.FsyncAddrs, fsyncsBefore, fsyncsAfter)
	if end.After(start) {
		res.Seconds = end.Sub(start).Seconds()
	}
	hist := stats.NewHist()
	for w := range tallies {
		t := &tallies[w]
		hist.Merge(t.hist)
		res.Ops += t.ops
		if t.errs > 0 && res.Errors == 0 {
			res.FirstError = t.firstErr
		}
		res.Errors += t.errs
		if ks != nil {
			ks.Counts[w] = t.created
		}
	}
	res.Latency, res.Hist = hist.Summary(), hist
	if res.Seconds > 0 {
		res.OpsPerSec = float64(res.Ops) / res.Seconds
	}
	res.CPUUse = meter.Use(pc.ServerProcs)
	pc.Log.Log(ctx, gozkLogLevel(pc), "phase end", "client", ClientGozk, "target", pc.Target, "phase", pc.Phase,
		"ops", res.Ops, "ops_per_sec", int64(res.OpsPerSec), "errors", res.Errors)
	if err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	return res, nil
}

// gozkLogLevel: the phase's start and end are its progress (the
// progress bar is the load generator's).
func gozkLogLevel(load.PhaseConfig) slog.Level { return slog.LevelInfo }

// closeGozk closes the connections at once: each Close waits up to a
// second for its CloseSession to be sent.
func closeGozk(conns []*zk.Conn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
}

// checkGozkPhase fills pc's defaults and refuses what go-zookeeper cannot
// drive here.
func checkGozkPhase(pc *load.PhaseConfig) error {
	switch {
	case len(pc.Addrs) == 0:
		return errors.New("bench: no server address")
	case pc.Conns < 1 || pc.Inflight < 1:
		return fmt.Errorf("bench: need at least one connection and one request in flight (got %d, %d)", pc.Conns, pc.Inflight)
	case pc.Duration <= 0:
		return errors.New("bench: duration must be positive")
	case pc.Rate > 0:
		return errors.New("bench: the gozk client runs closed loop only (no --rate)")
	case pc.MaxOps > 0:
		return errors.New("bench: the gozk client is bounded by time only")
	case pc.ValueSize < 0 || pc.ValueSize > 1<<20:
		return fmt.Errorf("bench: value size %d out of range", pc.ValueSize)
	}
	if _, err := load.ParseWorkload(string(pc.Workload)); err != nil {
		return err
	}
	if !pc.Workload.Creates() && (pc.Keys == nil || pc.Keys.Total() == 0) {
		return fmt.Errorf("bench: %s phase needs nodes from a create phase", pc.Workload)
	}
	if pc.Phase == "" {
		pc.Phase = string(pc.Workload)
	}
	if pc.Root == "" {
		pc.Root = load.DefaultRoot
	}
	if pc.Prefix == "" {
		pc.Prefix = pc.Phase + strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36)
	}
	pc.Prefix += "-gozk"
	if pc.Warmup < 0 {
		pc.Warmup = 0
	}
	if pc.DrainTimeout <= 0 {
		pc.DrainTimeout = load.DefaultDrainTimeout
	}
	if pc.SessionTimeout <= 0 {
		pc.SessionTimeout = 30 * time.Second
	}
	if pc.Log == nil {
		pc.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// gozkTally is one goroutine's count, owned by it until the phase ends.
type gozkTally struct {
	hist     *stats.Hist
	ops      int64
	errs     int64
	firstErr string
	// created is how many nodes Root/Prefix-w-0.. this goroutine created
	// (create phases; a failed create is retried at the same index, so
	// the nodes are exactly 0..created-1).
	created int64
}

// gozkCall is one synchronous request; it reports whether it created a
// node.
type gozkCall func() (created bool, err error)

// gozkOp returns goroutine w's request: create its next node, or setData
// or getData the next node of its key cursor.
func gozkOp(pc load.PhaseConfig, c *zk.Conn, ks *load.KeySpace, w int, data []byte) (gozkCall, error) {
	acl := zk.WorldACL(zk.PermAll)
	switch pc.Workload {
	case load.WorkloadCreate, load.WorkloadSeqCreate:
		var next int64
		return func() (bool, error) {
			if _, err := c.Create(ks.Path(w, next), data, 0, acl); err != nil {
				return false, err
			}
			next++
			return true, nil
		}, nil
	case load.WorkloadSet, load.WorkloadGet:
		kc, err := load.NewKeyCursor(pc.Keys, w)
		if err != nil {
			return nil, err
		}
		if pc.Workload == load.WorkloadSet {
			return func() (bool, error) { _, err := c.Set(string(kc.NextPath()), data, -1); return false, err }, nil
		}
		return func() (bool, error) { _, _, err := c.Get(string(kc.NextPath())); return false, err }, nil
	}
	return nil, fmt.Errorf("bench: the gozk client has no workload %q", pc.Workload)
}

// gozkLoop calls op until end (or ctx ends), recording the latency of each
// call whose reply arrived in [start, end] and counting the errors among
// those. A call that fails on a closed connection is not retried sooner
// than a millisecond later, so that a dead server does not spin it.
func gozkLoop(ctx context.Context, op gozkCall, start, end time.Time) gozkTally {
	t := gozkTally{hist: stats.NewHist()}
	for ctx.Err() == nil {
		sent := time.Now()
		if !sent.Before(end) {
			break
		}
		created, err := op()
		got := time.Now()
		if created {
			t.created++
		}
		if got.Before(start) || got.After(end) {
			if err != nil {
				time.Sleep(time.Millisecond)
			}
			continue
		}
		if err != nil {
			t.errs++
			if t.firstErr == "" {
				t.firstErr = err.Error()
			}
			time.Sleep(time.Millisecond)
			continue
		}
		t.ops++
		t.hist.Record(got.Sub(sent))
	}
	return t
}

// dialGozk opens pc.Conns go-zookeeper sessions, connection i to
// pc.Addrs[i mod len], and waits until each has its session.
func dialGozk(ctx context.Context, pc load.PhaseConfig) ([]*zk.Conn, error) {
	conns := make([]*zk.Conn, 0, pc.Conns)
	closeAll := func() { closeGozk(conns) }
	for i := range pc.Conns {
		addr := pc.Addrs[i%len(pc.Addrs)]
		c, events, err := zk.Connect([]string{addr}, pc.SessionTimeout, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("bench: gozk connecting to %s: %w", addr, err)
		}
		conns = append(conns, c)
		if err := waitSession(ctx, events); err != nil {
			closeAll()
			return nil, fmt.Errorf("bench: gozk session on %s: %w", addr, err)
		}
	}
	return conns, nil
}

func waitSession(ctx context.Context, events <-chan zk.Event) error {
	timer := time.NewTimer(gozkSessionWait)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return errors.New("connection closed")
			}
			if ev.State == zk.StateHasSession {
				return nil
			}
			if ev.State == zk.StateAuthFailed || ev.State == zk.StateExpired {
				return fmt.Errorf("%s", ev.State)
			}
		case <-timer.C:
			return fmt.Errorf("no session after %v", gozkSessionWait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// quietLogger drops go-zookeeper's log lines (connection chatter that
// would break the progress bar); failures reach the report as errors.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// mntrFsyncs is every server's zk_cnt_fsynctime from mntr; nil if any
// cannot say (as load's fsync count: no partial figures).
func mntrFsyncs(ctx context.Context, addrs []string) []int64 {
	if len(addrs) == 0 {
		return nil
	}
	out := make([]int64, len(addrs))
	for i, a := range addrs {
		s, err := load.FourLetter(ctx, a, "mntr")
		if err != nil {
			return nil
		}
		f, err := strconv.ParseFloat(load.MntrValues(s)["zk_cnt_fsynctime"], 64)
		if err != nil || f < 0 {
			return nil
		}
		out[i] = int64(f)
	}
	return out
}
