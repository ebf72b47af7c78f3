package ycsb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/wire"
)

// ycsbTarget is what the phases against one system share.
type ycsbTarget struct {
	name string
	// Addrs are the servers' client addresses; threads are spread over
	// them round-robin (followers first for a launched ensemble).
	addrs []string
	procs []load.ServerProc
	table string
	// inserts is the insert key sequence, carried from one workload to the
	// next so that every workload reads what earlier ones inserted.
	inserts *ackCounter
	cfg     *Config
	log     *slog.Logger
}

// ycsbMeter reads CPU over a measured interval, as the other phases do.
func (tg *ycsbTarget) meter() *load.CpuMeter {
	m := &load.CpuMeter{}
	for _, p := range tg.procs {
		m.Pids = append(m.Pids, p.PID)
	}
	return m
}

// fillCPU copies the meter's readings into res.
func (tg *ycsbTarget) fillCPU(res *YCSBResult, m *load.CpuMeter) {
	res.CPUUse = m.Use(tg.procs)
}

// setup creates /ycsb and the table node.
func (tg *ycsbTarget) setup(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := load.Dial(dctx, tg.addrs[0], tg.cfg.SessionTimeout)
	if err != nil {
		return err
	}
	for _, p := range []string{ycsbRoot, tg.table} {
		if err := c.EnsureNode(dctx, p); err != nil {
			c.Close()
			return err
		}
	}
	return c.CloseSession(dctx)
}

// ycsbLoadSource creates records 0, 1, ... from a counter the load's
// connections share; the phase's budget makes it exactly recordcount.
type ycsbLoadSource struct {
	keys  *atomic.Int64
	table string
	bytes *ycsbBytes
	path  []byte
	rec   []byte
}

func (s *ycsbLoadSource) Next(e *wire.Encoder, xid int32) {
	k := s.keys.Add(1) - 1
	s.path = appendYCSBKey(s.path[:0], s.table, k)
	s.bytes.fill(s.rec)
	load.AppendCreate(e, xid, s.path, s.rec)
}

// ycsbLoadLimit bounds the load phase: a minute, plus a millisecond a
// record (a server that loads slower than that is not worth waiting for).
func ycsbLoadLimit(records int64) time.Duration {
	return time.Minute + time.Duration(records)*time.Millisecond
}

// load is YCSB's load phase: recordcount creates, pipelined on
// cfg.Threads sessions with cfg.LoadInflight outstanding each (the
// generator of compare's create phase). All of it is measured.
func (tg *ycsbTarget) load(ctx context.Context) YCSBResult {
	cfg := tg.cfg
	res := YCSBResult{Target: tg.name, Workload: ycsbLoadPhase, Mix: "insert 1", Threads: cfg.Threads,
		Inflight: cfg.LoadInflight, RecordCount: cfg.RecordCount, LoadAvg: bench.LoadAvg()}
	conns, err := load.DialAll(ctx, load.PhaseConfig{Addrs: tg.addrs, Conns: cfg.Threads, SessionTimeout: cfg.SessionTimeout})
	if err != nil {
		res.Err = err.Error()
		return res
	}
	keys := new(atomic.Int64)
	t0 := time.Now()
	w := &load.Window{Start: t0, End: t0.Add(ycsbLoadLimit(cfg.RecordCount)), Budget: new(atomic.Int64), Drain: cfg.DrainTimeout}
	w.Budget.Store(cfg.RecordCount)
	tg.log.Info("ycsb load", "target", tg.name, "records", cfg.RecordCount, "conns", len(conns), "inflight", cfg.LoadInflight)
	m := tg.meter()
	m.Begin()
	perConn := make([]load.ConnStats, len(conns))
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		src := &ycsbLoadSource{keys: keys, table: tg.table, bytes: newYCSBBytes(cfg.Seed + uint64(i)*0x9E3779B97F4A7C15),
			rec: make([]byte, ycsbRecordSize)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			perConn[i], errs[i] = c.Run(ctx, src, cfg.LoadInflight, w)
		}()
	}
	wg.Wait()
	m.End()
	res.Seconds = time.Since(t0).Seconds()
	op := YCSBOpResult{Op: opInsert.String()}
	h := stats.NewHist()
	for i := range perConn {
		st := &perConn[i]
		op.Ops += st.Ops
		if st.Errs > 0 && op.Errors == 0 {
			op.FirstError = load.ErrorName(st.FirstErr)
		}
		op.Errors += st.Errs
		if st.Hist != nil {
			h.Merge(st.Hist)
		}
	}
	op.Latency = h.Summary()
	res.PerOp = []YCSBOpResult{op}
	res.finish()
	tg.fillCPU(&res, m)
	var failed []error
	if err := errors.Join(errs...); err != nil {
		failed = append(failed, err)
	}
	if issued := min(keys.Load(), cfg.RecordCount); issued < cfg.RecordCount {
		failed = append(failed, fmt.Errorf("load incomplete: %d of %d creates sent in %v", issued, cfg.RecordCount, ycsbLoadLimit(cfg.RecordCount)))
	}
	if err := errors.Join(failed...); err != nil {
		res.Err = fmt.Sprintf("bench: %s ycsb load: %v", tg.name, err)
	}
	tg.log.Info("ycsb load done", "target", tg.name, "ops_per_sec", int64(res.OpsPerSec), "errors", res.Errors)
	return res
}

// Run is one workload's run phase: cfg.Threads threads, each a session,
// in a closed loop (or paced, with a target rate) through warm-up and the
// Measured interval. widx distinguishes the workloads' random streams.
func (tg *ycsbTarget) run(ctx context.Context, wl YCSBWorkload, widx int) YCSBResult {
	cfg := tg.cfg
	res := YCSBResult{Target: tg.name, Workload: wl.Name, Distribution: wl.Distribution, Mix: wl.Mix(),
		Threads: cfg.Threads, RecordCount: cfg.RecordCount, TargetOpsPerSec: cfg.TargetOps, LoadAvg: bench.LoadAvg()}
	fail := func(err error) YCSBResult {
		res.Err = fmt.Sprintf("bench: %s ycsb %s: %v", tg.name, wl.Name, err)
		return res
	}
	conns, err := load.DialAll(ctx, load.PhaseConfig{Addrs: tg.addrs, Conns: cfg.Threads, SessionTimeout: cfg.SessionTimeout})
	if err != nil {
		return fail(err)
	}
	threads := make([]*ycsbThread, len(conns))
	for i := range conns {
		r := rand.New(rand.NewPCG(cfg.Seed, uint64(widx)<<32|uint64(i)))
		threads[i] = &ycsbThread{
			id: i, addrs: tg.addrs, sessionTimeout: cfg.SessionTimeout, table: tg.table,
			ch: newYCSBChooser(wl, cfg.RecordCount, tg.inserts, r), inserts: tg.inserts,
			bytes: newYCSBBytes(r.Uint64()), r: r,
			rmw: make([]byte, ycsbRecordSize),
		}
		threads[i].rec = threads[i].bytes.newRecord()
	}
	t0 := time.Now()
	w := bench.DurWindow{T0: t0, Start: t0.Add(cfg.Warmup), End: t0.Add(cfg.Warmup + cfg.Duration)}
	if cfg.TargetOps > 0 {
		// Each thread runs at target/threads, the threads' schedules
		// staggered evenly.
		interval := time.Duration(float64(len(threads)) / cfg.TargetOps * float64(time.Second))
		for i, t := range threads {
			t.interval = interval
			t.first = t0.Add(interval * time.Duration(i) / time.Duration(len(threads)))
		}
	}
	pctx, cancel := context.WithDeadlineCause(ctx, w.End.Add(cfg.DrainTimeout), load.ErrStalled)
	defer cancel()
	tg.log.Info("ycsb run", "target", tg.name, "workload", wl.Name, "distribution", wl.Distribution,
		"threads", len(threads), "warmup", cfg.Warmup, "duration", cfg.Duration)

	errs := make([]error, len(threads))
	var wg sync.WaitGroup
	for i, t := range threads {
		t.bind(pctx, conns[i])
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = t.loop(pctx, w)
			if errs[i] == nil {
				// A session already lost to a dead server fails here;
				// that is not the run's failure.
				if err := t.sess.c.CloseSession(pctx); err != nil {
					tg.log.Debug("closeSession", "thread", i, "err", err)
				}
			}
			t.unbind()
			t.sess.c.Close()
		}()
	}
	allDone := make(chan struct{})
	var doneAt time.Time
	go func() {
		wg.Wait()
		doneAt = time.Now()
		close(allDone)
	}()
	m := tg.meter()
	finished := load.WaitUntil(ctx, w.Start, allDone)
	m.Begin()
	if !finished {
		load.WaitUntil(ctx, w.End, allDone)
	}
	m.End()
	<-allDone

	end := w.End
	if doneAt.Before(end) {
		end = doneAt
	}
	if end.After(w.Start) {
		res.Seconds = end.Sub(w.Start).Seconds()
	}
	res.merge(threads, wl)
	res.finish()
	tg.fillCPU(&res, m)
	err = errors.Join(errs...)
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case err != nil && errors.Is(context.Cause(pctx), load.ErrStalled):
		err = fmt.Errorf("%w: %w", load.ErrStalled, err)
	}
	if err != nil {
		return fail(err)
	}
	tg.log.Info("ycsb run done", "target", tg.name, "workload", wl.Name, "ops_per_sec", int64(res.OpsPerSec),
		"errors", res.Errors, "conflicts", res.Conflicts, "conn_errors", res.ConnErrors)
	return res
}

// merge adds the threads' statistics into res, an entry per operation of
// the workload's mix.
func (res *YCSBResult) merge(threads []*ycsbThread, wl YCSBWorkload) {
	for k, p := range wl.proportions() {
		if p <= 0 {
			continue
		}
		op := YCSBOpResult{Op: ycsbOpKind(k).String()}
		h, ih := stats.NewHist(), stats.NewHist()
		intended := false
		for _, t := range threads {
			s := &t.st.op[k]
			op.Ops += s.ops
			if s.errs > 0 && op.Errors == 0 {
				op.FirstError = load.ErrorName(int32(s.firstErr))
			}
			op.Errors += s.errs
			op.Conflicts += s.conflicts
			if ycsbOpKind(k) == opScan {
				op.Records += s.records
			}
			if s.hist != nil {
				h.Merge(s.hist)
			}
			if s.intended != nil {
				ih.Merge(s.intended)
				intended = true
			}
		}
		op.Latency = h.Summary()
		if intended {
			l := ih.Summary()
			op.Intended = &l
		}
		res.PerOp = append(res.PerOp, op)
	}
	for _, t := range threads {
		res.ConnErrors += t.st.connErrs
		res.Reconnects += t.st.reconnects
		if res.FirstConnError == "" {
			res.FirstConnError = t.st.firstConnErr
		}
	}
}

// Finish sums the operations and sets the rates.
func (res *YCSBResult) finish() {
	res.Ops, res.Errors, res.Conflicts = 0, 0, 0
	for i := range res.PerOp {
		op := &res.PerOp[i]
		res.Ops += op.Ops
		res.Errors += op.Errors
		res.Conflicts += op.Conflicts
		if res.Seconds > 0 {
			op.OpsPerSec = float64(op.Ops) / res.Seconds
		}
	}
	if res.Seconds > 0 {
		res.OpsPerSec = float64(res.Ops) / res.Seconds
	}
}
