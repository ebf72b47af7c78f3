package durability

import (
	"context"
	"encoding/binary"
	"slices"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/wire"
)

// Phase names of the durability benchmark.
const (
	DurPhaseCreate = "create"
	DurPhaseGet    = "get"
	DurPhaseCPU    = "cpu"
	DurPhaseQueue  = "queue"
)

// Where the phases put their nodes.
const (
	durRoot        = "/bench"
	durCreatePfx   = "c"
	durCPUPfx      = "r"
	durQueueRoot   = "/bench-queue"
	durQueueMsgPfx = "msg-"
)

// createLoop is client i creating root/prefix-i-0, -1, ... one at a time,
// each when the one before is answered, or, with tokens, each when a token
// arrives (until tokens is closed). ks.Counts[i] is the number of creates
// it sent.
func createLoop(ctx context.Context, c *load.Conn, i int, w bench.DurWindow, ks *load.KeySpace, data []byte,
	tokens <-chan struct{}, rec *durRecorder, series *secondCounter) error {
	var path []byte
	for n := 0; n < durMaxOpsPerClient; n++ {
		if tokens != nil {
			select {
			case _, ok := <-tokens:
				if !ok {
					return nil
				}
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		sent := time.Now()
		if !sent.Before(w.End) {
			return nil
		}
		path = ks.AppendPath(path[:0], i, ks.Counts[i])
		code, _, err := c.Call(ctx, func(e *wire.Encoder, xid int32) { load.AppendCreate(e, xid, path, data) })
		if err != nil {
			return err
		}
		ks.Counts[i]++
		rec.done(w, series, sent, time.Now(), code)
	}
	return nil
}

// durCreate is the create phase (the thesis's Fig. 5.1): clients
// synchronous clients create nodes as fast as they are answered. It
// returns the nodes made, for the get phase.
func (env durPhaseEnv) durCreate(ctx context.Context, clients, valueSize int, warmup, duration time.Duration) (DurPhase, *load.KeySpace) {
	res := DurPhase{Phase: DurPhaseCreate}
	ks := &load.KeySpace{Root: durRoot, Prefix: durCreatePfx, Counts: make([]int64, clients)}
	recs := make([]durRecorder, clients)
	series := newSecondCounter(duration)
	data := load.Value(valueSize)
	env.runClients(ctx, &res, durClients{
		n: clients, warmup: warmup, duration: duration,
		setup: func(ctx context.Context, c *load.Conn) error { return c.EnsureNode(ctx, durRoot) },
		work: func(ctx context.Context, i int, c *load.Conn, w bench.DurWindow) error {
			return createLoop(ctx, c, i, w, ks, data, nil, &recs[i], series)
		},
	})
	mergeRecorders(&res, recs)
	finishSeries(&res, series)
	return res, ks
}

// durGet is the getData phase (Fig. 5.2): clients synchronous clients read
// the nodes the create phase made, each walking its own share.
func (env durPhaseEnv) durGet(ctx context.Context, clients int, ks *load.KeySpace, warmup, duration time.Duration) DurPhase {
	res := DurPhase{Phase: DurPhaseGet}
	recs := make([]durRecorder, clients)
	series := newSecondCounter(duration)
	env.runClients(ctx, &res, durClients{
		n: clients, warmup: warmup, duration: duration,
		work: func(ctx context.Context, i int, c *load.Conn, w bench.DurWindow) error {
			kc, err := load.NewKeyCursor(ks, i)
			if err != nil {
				return err
			}
			for n := 0; n < durMaxOpsPerClient; n++ {
				sent := time.Now()
				if !sent.Before(w.End) {
					return nil
				}
				path := kc.NextPath()
				code, _, err := c.Call(ctx, func(e *wire.Encoder, xid int32) { load.AppendGetData(e, xid, path) })
				if err != nil {
					return err
				}
				recs[i].done(w, series, sent, time.Now(), code)
			}
			return nil
		},
	})
	mergeRecorders(&res, recs)
	finishSeries(&res, series)
	return res
}

// durCPU is the fixed-rate phase (Fig. 5.5): clients synchronous clients
// create nodes at rate per second together, paced from the start of the
// warm-up, while the members' CPU time is read.
func (env durPhaseEnv) durCPU(ctx context.Context, clients, valueSize int, rate float64, warmup, duration time.Duration) DurPhase {
	res := DurPhase{Phase: DurPhaseCPU, TargetRate: rate}
	ks := &load.KeySpace{Root: durRoot, Prefix: durCPUPfx, Counts: make([]int64, clients)}
	recs := make([]durRecorder, clients)
	series := newSecondCounter(duration)
	data := load.Value(valueSize)
	tokens := make(chan struct{}, clients)
	var missed atomic.Int64
	var started atomic.Bool
	pacerDone := make(chan struct{})
	env.runClients(ctx, &res, durClients{
		n: clients, warmup: warmup, duration: duration,
		setup: func(ctx context.Context, c *load.Conn) error { return c.EnsureNode(ctx, durRoot) },
		work: func(ctx context.Context, i int, c *load.Conn, w bench.DurWindow) error {
			if i == 0 {
				// One pacer for the phase, started with the window; it
				// stops at the window's end or with ctx.
				p := load.Pacer{Rate: rate, T0: w.T0, Start: w.Start, End: w.End, Now: time.Now, Sleep: load.SleepCtx}
				started.Store(true)
				go func() {
					defer close(pacerDone)
					_, m := p.Run(ctx, tokens)
					missed.Store(m)
				}()
			}
			return createLoop(ctx, c, i, w, ks, data, tokens, &recs[i], series)
		},
	})
	mergeRecorders(&res, recs)
	finishSeries(&res, series)
	if started.Load() {
		<-pacerDone // runClients has ended the phase's context
	}
	res.Missed = missed.Load()
	return res
}

// durQueueConfig shapes the queue phase.
type durQueueConfig struct {
	producers, consumers int
	valueSize            int
	// maxBacklog bounds what is produced and not yet consumed: a producer
	// waits while the queue holds that many. Time in the queue is part of
	// the end-to-end latency, so the bound also caps that (Little's law).
	maxBacklog       int64
	warmup, duration time.Duration
}

// durQueue is the message-queue phase (Fig. 5.6), ZooKeeper's queue
// recipe: producers create persistent sequential nodes under durQueueRoot,
// each carrying its send time; consumers list the children, sort them and
// take each in order with getData and delete, skipping one another
// consumer got to first (NoNode). Clients are producers first, so with the
// connections spread round-robin over followers-then-leader the first
// producer and consumer sit on followers.
func (env durPhaseEnv) durQueue(ctx context.Context, qc durQueueConfig) DurPhase {
	res := DurPhase{Phase: DurPhaseQueue, Producers: qc.producers, Consumers: qc.consumers}
	n := qc.producers + qc.consumers
	prodRecs := make([]durRecorder, qc.producers)
	consRecs := make([]durRecorder, qc.consumers)
	e2e := make([]*stats.Hist, qc.consumers)
	lost := make([]int64, qc.consumers)
	prodSeries, consSeries := newSecondCounter(qc.duration), newSecondCounter(qc.duration)
	var produced, consumed atomic.Int64
	root := []byte(durQueueRoot)
	prefix := []byte(durQueueRoot + "/" + durQueueMsgPfx)
	env.runClients(ctx, &res, durClients{
		n: n, warmup: qc.warmup, duration: qc.duration,
		setup: func(ctx context.Context, c *load.Conn) error { return c.EnsureNode(ctx, durQueueRoot) },
		work: func(ctx context.Context, i int, c *load.Conn, w bench.DurWindow) error {
			if i < qc.producers {
				return produceLoop(ctx, c, w, prefix, qc, &produced, &consumed, &prodRecs[i], prodSeries)
			}
			k := i - qc.producers
			e2e[k] = stats.NewHist()
			return consumeLoop(ctx, c, w, root, &consumed, &consRecs[k], e2e[k], &lost[k], consSeries)
		},
	})
	// Ops, errors and throughput are the consumers'; latency the producers'.
	mergeRecorders(&res, consRecs)
	finishSeries(&res, consSeries)
	var prod DurPhase
	mergeRecorders(&prod, prodRecs)
	res.Latency = prod.Latency
	res.Errors += prod.Errors
	if res.FirstError == "" {
		res.FirstError = prod.FirstError
	}
	res.Produced = prod.Ops
	if res.Seconds > 0 {
		res.ProducedPerSec = float64(res.Produced) / res.Seconds
	}
	res.ProducedPerSecond = prodSeries.values()
	all := stats.NewHist()
	for k := range e2e {
		if e2e[k] != nil {
			all.Merge(e2e[k])
		}
		res.LostRaces += lost[k]
	}
	s := all.Summary()
	res.EndToEnd = &s
	res.LeftInQueue = produced.Load() - consumed.Load()
	return res
}

// durMsgStamp is the size of the send time at the head of a message.
const durMsgStamp = 8

// produceLoop creates messages one at a time while the backlog allows.
func produceLoop(ctx context.Context, c *load.Conn, w bench.DurWindow, prefix []byte, qc durQueueConfig,
	produced, consumed *atomic.Int64, rec *durRecorder, series *secondCounter) error {
	msg := load.Value(max(qc.valueSize, durMsgStamp))
	for n := 0; n < durMaxOpsPerClient; n++ {
		sent := time.Now()
		if !sent.Before(w.End) {
			return nil
		}
		if produced.Load()-consumed.Load() >= qc.maxBacklog {
			if !load.SleepCtx(ctx, time.Millisecond) {
				return context.Cause(ctx)
			}
			continue
		}
		binary.BigEndian.PutUint64(msg, uint64(sent.Sub(w.T0)))
		code, _, err := c.CreateSeq(ctx, prefix, msg)
		if err != nil {
			return err
		}
		if code == wire.CodeOK {
			produced.Add(1)
		}
		rec.done(w, series, sent, time.Now(), code)
	}
	return nil
}

// consumeLoop lists the queue and takes its messages in order; an empty
// queue is listed again after a millisecond.
func consumeLoop(ctx context.Context, c *load.Conn, w bench.DurWindow, root []byte, consumed *atomic.Int64,
	rec *durRecorder, e2e *stats.Hist, lost *int64, series *secondCounter) error {
	var path []byte
	for n := 0; n < durMaxOpsPerClient; n++ {
		if !time.Now().Before(w.End) {
			return nil
		}
		code, names, err := c.GetChildren(ctx, root)
		if err != nil {
			return err
		}
		if code != wire.CodeOK || len(names) == 0 {
			if code != wire.CodeOK {
				rec.done(w, nil, time.Now(), time.Now(), code)
			}
			if !load.SleepCtx(ctx, time.Millisecond) {
				return context.Cause(ctx)
			}
			continue
		}
		// Sequence numbers are zero-padded: name order is creation order.
		slices.Sort(names)
		for _, name := range names {
			if !time.Now().Before(w.End) {
				return nil
			}
			path = append(append(append(path[:0], root...), '/'), name...)
			code, data, err := c.GetData(ctx, path)
			if err != nil {
				return err
			}
			if code == wire.CodeNoNode {
				if w.Measured(time.Now()) {
					*lost++
				}
				continue
			}
			if code != wire.CodeOK {
				rec.done(w, nil, time.Now(), time.Now(), code)
				continue
			}
			if code, err = c.DeleteNode(ctx, path); err != nil {
				return err
			}
			now := time.Now()
			if code == wire.CodeNoNode {
				if w.Measured(now) {
					*lost++
				}
				continue
			}
			if code != wire.CodeOK {
				rec.done(w, nil, now, now, code)
				continue
			}
			consumed.Add(1)
			if !w.Measured(now) {
				continue
			}
			// The consumer's ops are messages: latency goes to e2e.
			rec.ops++
			series.add(now.Sub(w.Start))
			if len(data) >= durMsgStamp {
				sentAt := time.Duration(binary.BigEndian.Uint64(data))
				e2e.Record(now.Sub(w.T0) - sentAt)
			}
		}
	}
	return nil
}
