package replica

import (
	"context"
	"sync"
	"time"

	"github.com/corral-db/corral/zab"
)

// snapCheckEvery is how often Run's snapshot goroutine asks the scheduler.
const snapCheckEvery = 25 * time.Millisecond

// Run drives the member until ctx ends or a disk fails: a node loop
// (ticks every tick, messages from recv, every Ready), a log goroutine
// (group commit) in sync and async modes, and a snapshot goroutine. recv
// is the transport's Recv channel; Config.Env.Send its Send. Run returns
// after all three goroutines stopped, with the error that stopped the
// member (nil when ctx ended). In diskless mode it writes a checkpoint on
// the way out (orderly shutdown).
func (d *Driver) Run(parent context.Context, recv <-chan zab.Message, tick time.Duration) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	var wg sync.WaitGroup
	if !d.diskless {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.RunLog(ctx); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(snapCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := d.MaybeSnapshot(ctx); err != nil && ctx.Err() == nil {
				d.log.Error("snapshot failed", "err", err)
			}
		}
	}()
	t := time.NewTicker(tick)
	defer t.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-t.C:
			d.Tick()
		case m, ok := <-recv:
			if !ok {
				break loop
			}
			if err := d.Step(m); err != nil {
				d.log.Warn("message refused", "msg", m.String(), "err", err)
			}
		case <-d.wake:
		}
		if err := d.Process(); err != nil {
			cancel(err)
			break loop
		}
	}
	cancel(nil)
	wg.Wait()
	err := context.Cause(ctx)
	// The owner's context ending, whatever its cause (a signal, from
	// signal.NotifyContext, is not context.Canceled), or the transport's
	// channel closing is an orderly stop; an error of the loop's own is
	// not.
	if err == context.Canceled || (parent.Err() != nil && err == context.Cause(parent)) {
		err = nil
		if d.diskless {
			if cerr := d.Checkpoint(); cerr != nil {
				d.log.Error("checkpoint at shutdown failed", "err", cerr)
			}
		}
	}
	return err
}

// RunLog is the log goroutine: it writes queued entries and syncs them,
// one sync per group, until ctx ends or the log store fails (the error).
// Run starts it; an owner with a node loop of its own runs it beside.
// While it runs, Process waits when maxQueuedLogOps are queued.
func (d *Driver) RunLog(ctx context.Context) error {
	d.lq.mu.Lock()
	d.lq.bounded = true
	d.lq.mu.Unlock()
	defer func() {
		// Nobody drains the queue any more: stop bounding it, and wake a
		// Process waiting for room.
		d.lq.mu.Lock()
		d.lq.bounded = false
		d.lq.room.Broadcast()
		d.lq.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-d.lq.ready:
		}
		if !d.solo {
			if err := d.SyncLog(); err != nil {
				return err
			}
			continue
		}
		// A group of one commits what its own sync made durable: the
		// commit is processed here, rather than after a wake-up of the
		// node loop, unless a Process runs elsewhere (it, or the node
		// loop after it, takes the commit).
		if err := d.syncLog(true); err != nil {
			return err
		}
		if !d.pmu.TryLock() {
			d.signal()
			continue
		}
		err := d.processLocked(byLogWriter)
		d.pmu.Unlock()
		if err != nil {
			return err
		}
	}
}

// Wake returns a channel signalled when the node may have work for
// Process: an owner with a node loop of its own selects on it.
func (d *Driver) Wake() <-chan struct{} { return d.wake }
