package durability

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/wire"
)

// DurPhase is one phase of `corral bench durability` against one
// configuration. Throughput counts successful requests (consumed
// messages, for the queue) whose replies arrived in the measured interval,
// over its length; PerSecond splits the same count by second.
type DurPhase struct {
	Config  string `json:"config"`
	Server  string `json:"server"`
	Phase   string `json:"phase"`
	Clients int    `json:"clients"`
	// Seconds is the measured interval's length.
	Seconds    float64 `json:"seconds"`
	Ops        int64   `json:"ops"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	// PerSecond is the count in each second of the measured interval (the
	// last one partial when the interval is not whole seconds), Series its
	// summary over the whole seconds.
	PerSecond []int64     `json:"per_second"`
	Series    SeriesStats `json:"per_second_stats"`
	// Latency is of the requests counted (the queue: of the producers'
	// Creates), from sending the request to reading its reply.
	Latency stats.Latency `json:"latency"`
	// ServerCPU is the members' CPU seconds together in the measured
	// interval, ServerCPUEach each one's, ServerCPUPerSecond the sum in
	// each whole second in percent of one core.
	load.CPUUse
	ServerCPUPerSecond []float64 `json:"server_cpu_pct_per_second,omitempty"`
	// LoadAvg is /proc/loadavg's three averages as the phase began.
	LoadAvg string `json:"load_avg,omitempty"`

	// The CPU phase: the rate asked for, and the tokens due in the
	// Measured interval that found every client busy.
	TargetRate float64 `json:"target_rate,omitempty"`
	Missed     int64   `json:"missed,omitempty"`

	// The queue phase: Ops and PerSecond count consumed messages;
	// Produced* count the producers' successful creates the same way.
	Producers         int     `json:"producers,omitempty"`
	Consumers         int     `json:"consumers,omitempty"`
	Produced          int64   `json:"produced,omitempty"`
	ProducedPerSec    float64 `json:"produced_per_sec,omitempty"`
	ProducedPerSecond []int64 `json:"produced_per_second,omitempty"`
	// LostRaces are getData or delete replies NoNode in the measured
	// interval: another consumer took the message first (the recipe's cost
	// of several consumers).
	LostRaces int64 `json:"lost_races,omitempty"`
	// LeftInQueue is what was produced but not consumed when the phase
	// ended.
	LeftInQueue int64 `json:"left_in_queue,omitempty"`
	// EndToEnd is, for each message consumed in the measured interval,
	// from its producer sending the create to its consumer reading the
	// delete's reply: time in the queue included.
	EndToEnd *stats.Latency `json:"end_to_end,omitempty"`

	Err string `json:"error,omitempty"`
}

// durPhaseEnv is what the phases against one configuration share.
type durPhaseEnv struct {
	config, server string
	// Addrs are the members' client addresses, followers first; clients
	// are spread over them round-robin.
	addrs          []string
	procs          []load.ServerProc
	sessionTimeout time.Duration
	drain          time.Duration
	log            *slog.Logger
}

// durMaxOpsPerClient bounds every client loop by count as well as time.
const durMaxOpsPerClient = 1 << 24

// durClients is the part of a phase the runner does not know: its clients'
// work.
type durClients struct {
	n                int
	warmup, duration time.Duration
	// setup runs on the first client before the window opens.
	setup func(ctx context.Context, c *load.Conn) error
	// work is client i's loop; it must return by w.end (a request in flight
	// then may finish) or when ctx ends.
	work func(ctx context.Context, i int, c *load.Conn, w bench.DurWindow) error
}

// runClients dials spec.n sessions, runs their work through the window,
// meters CPU over the measured interval (in total and per second), ends
// the sessions and fills in res's timing and CPU fields. A request
// unanswered drain after the window's end fails the phase with ErrStalled.
func (env durPhaseEnv) runClients(ctx context.Context, res *DurPhase, spec durClients) error {
	res.Config, res.Server, res.Clients = env.config, env.server, spec.n
	res.LoadAvg = bench.LoadAvg()
	fail := func(err error) error {
		err = fmt.Errorf("bench: %s %s: %w", env.config, res.Phase, err)
		res.Err = err.Error()
		return err
	}
	conns, err := load.DialAll(ctx, load.PhaseConfig{Addrs: env.addrs, Conns: spec.n, SessionTimeout: env.sessionTimeout})
	if err != nil {
		return fail(err)
	}
	if spec.setup != nil {
		if err := spec.setup(ctx, conns[0]); err != nil {
			load.CloseAll(conns)
			return fail(err)
		}
	}
	t0 := time.Now()
	w := bench.DurWindow{T0: t0, Start: t0.Add(spec.warmup), End: t0.Add(spec.warmup + spec.duration)}
	pctx, cancel := context.WithDeadlineCause(ctx, w.End.Add(env.drain), load.ErrStalled)
	defer cancel()
	// Closing the sockets is what interrupts a blocked request.
	stop := context.AfterFunc(pctx, func() { load.CloseAll(conns) })
	defer stop()
	env.log.Info("phase start", "config", env.config, "phase", res.Phase, "clients", spec.n,
		"warmup", spec.warmup, "duration", spec.duration)

	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = spec.work(pctx, i, c, w); errs[i] == nil {
				errs[i] = c.CloseSession(pctx)
			} else {
				c.Close()
			}
		}()
	}
	allDone := make(chan struct{})
	var doneAt time.Time
	go func() {
		wg.Wait()
		doneAt = time.Now()
		close(allDone)
	}()

	meter := load.CpuMeter{}
	for _, p := range env.procs {
		meter.Pids = append(meter.Pids, p.PID)
	}
	finished := load.WaitUntil(ctx, w.Start, allDone)
	meter.Begin()
	samples := make(chan []time.Duration, 1)
	sctx, stopSampling := context.WithCancel(ctx)
	go func() { samples <- sampleCPU(sctx, meter.Pids, w.Start, int(spec.duration/time.Second)) }()
	if !finished {
		load.WaitUntil(ctx, w.End, allDone)
	}
	meter.End()
	<-allDone
	stopSampling()
	readings := <-samples

	end := w.End
	if doneAt.Before(end) {
		end = doneAt
	}
	if end.After(w.Start) {
		res.Seconds = end.Sub(w.Start).Seconds()
	}
	res.CPUUse = meter.Use(env.procs)
	res.ServerCPUPerSecond = cpuPercents(readings, time.Second)

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
	return nil
}

// sampleCPU reads the processes' CPU time together at start and at each
// of the n whole seconds after it, stopping early when ctx ends or a read
// fails (a process exited).
func sampleCPU(ctx context.Context, pids []int, start time.Time, n int) []time.Duration {
	if len(pids) == 0 || n <= 0 {
		return nil
	}
	read := func() (time.Duration, bool) {
		var sum time.Duration
		for _, pid := range pids {
			t, err := load.ReadProcCPU(pid)
			if err != nil {
				return 0, false
			}
			sum += t
		}
		return sum, true
	}
	var out []time.Duration
	for k := 0; k <= n; k++ {
		if !load.SleepCtx(ctx, time.Until(start.Add(time.Duration(k)*time.Second))) {
			break
		}
		t, ok := read()
		if !ok {
			break
		}
		out = append(out, t)
	}
	return out
}

// durRecorder is what one client saw of the requests it measures.
type durRecorder struct {
	hist     *stats.Hist
	ops      int64
	errs     int64
	firstErr wire.Code
}

// done records a reply that arrived at now for a request sent at sent;
// only replies in the measured interval count. A successful one is also
// counted in its second of series.
func (r *durRecorder) done(w bench.DurWindow, series *secondCounter, sent, now time.Time, code wire.Code) {
	if !w.Measured(now) {
		return
	}
	if code != wire.CodeOK {
		if r.errs == 0 {
			r.firstErr = code
		}
		r.errs++
		return
	}
	r.ops++
	if r.hist == nil {
		r.hist = stats.NewHist()
	}
	r.hist.Record(now.Sub(sent))
	if series != nil {
		series.add(now.Sub(w.Start))
	}
}

// mergeRecorders adds the clients' counts and latencies into res.
func mergeRecorders(res *DurPhase, recs []durRecorder) {
	h := stats.NewHist()
	for i := range recs {
		r := &recs[i]
		res.Ops += r.ops
		if r.errs > 0 && res.Errors == 0 {
			res.FirstError = load.ErrorName(int32(r.firstErr))
		}
		res.Errors += r.errs
		if r.hist != nil {
			h.Merge(r.hist)
		}
	}
	res.Latency = h.Summary()
}

// finishSeries sets the throughput and the per-second series.
func finishSeries(res *DurPhase, series *secondCounter) {
	if res.Seconds > 0 {
		res.OpsPerSec = float64(res.Ops) / res.Seconds
	}
	res.PerSecond = series.values()
	res.Series = SummarizeSeries(res.PerSecond, time.Duration(res.Seconds*float64(time.Second)))
}
