package replica

import (
	"fmt"
	"sync"

	"github.com/corral-db/corral/zab"
)

// maxQueuedLogOps bounds the log queue while Run's log goroutine drains
// it: Process waits for room, which holds the node loop back when the
// disk cannot keep up.
const maxQueuedLogOps = 1024

// logOp is one piece of work for the log writer: entries to append, or a
// truncation that must be durable before Process goes on.
type logOp struct {
	entries  []zab.Entry
	gen      uint64
	truncate *zab.Zxid
	done     chan error
}

// logQueue hands log work from Process to the log writer, in order.
type logQueue struct {
	mu sync.Mutex
	// ops are waiting for the writer; room is signalled when it takes
	// them.
	ops []logOp
	// spare is the slice of a previous take, given back (recycle) for
	// the next ops, so queueing allocates nothing.
	spare []logOp
	room  *sync.Cond
	// bounded: a log goroutine drains the queue (Run), so Process may
	// wait for room.
	bounded bool
	// ready is signalled when ops becomes non-empty.
	ready chan struct{}
}

func (q *logQueue) init() {
	q.room = sync.NewCond(&q.mu)
	q.ready = make(chan struct{}, 1)
}

// push queues op. wake wakes the log writer (not when the caller runs
// SyncLog itself next: Drive); wait waits for room in a bounded queue
// (not on the log writer itself, which drains it).
func (q *logQueue) push(op logOp, wake, wait bool) {
	q.mu.Lock()
	for wait && q.bounded && len(q.ops) >= maxQueuedLogOps {
		q.room.Wait()
	}
	q.ops = append(q.ops, op)
	q.mu.Unlock()
	if wake {
		q.wake()
	}
}

// wake signals the log writer that ops are queued.
func (q *logQueue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// recycle gives back a slice take returned, once its ops are done.
func (q *logQueue) recycle(ops []logOp) {
	clear(ops) // the entries they hold
	q.mu.Lock()
	if q.spare == nil && cap(ops) <= maxQueuedLogOps {
		q.spare = ops[:0]
	}
	q.mu.Unlock()
}

func (q *logQueue) take() []logOp {
	q.mu.Lock()
	ops := q.ops
	q.ops, q.spare = q.spare[:0], nil
	q.room.Broadcast()
	q.mu.Unlock()
	return ops
}

// Pending reports whether appended entries wait for SyncLog.
func (d *Driver) Pending() bool {
	d.lq.mu.Lock()
	defer d.lq.mu.Unlock()
	return len(d.lq.ops) > 0
}

// SyncLog writes the queued entries to the log store, syncs them once
// (group commit) and reports them Persisted; truncations queued between
// them are made durable in order. Run's log goroutine calls it whenever
// entries are queued; the simulator calls it when its simulated fsync
// completes.
func (d *Driver) SyncLog() error { return d.syncLog(false) }

// syncLog is SyncLog; quiet (Drive) does not wake the node loop after
// Persisted, since the caller processes the next Ready itself.
func (d *Driver) syncLog(quiet bool) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	var last zab.Zxid
	var gen uint64
	flush := func() error {
		if last == 0 {
			return nil
		}
		if err := d.env.Log.Sync(); err != nil {
			return fmt.Errorf("replica: log sync: %w", err)
		}
		d.persisted(gen, last, quiet)
		last = 0
		return nil
	}
	ops := d.lq.take()
	defer d.lq.recycle(ops)
	fail := func(i int, err error) error {
		// The truncations not reached learn the failure too.
		for _, op := range ops[i:] {
			if op.done != nil {
				op.done <- err
			}
		}
		return err
	}
	for i, op := range ops {
		if op.truncate != nil {
			err := flush()
			if err == nil {
				err = d.env.Log.TruncateAfter(*op.truncate)
			}
			if err != nil {
				return fail(i, err)
			}
			op.done <- nil
			continue
		}
		if err := d.env.Log.Append(op.entries); err != nil {
			return fail(i, fmt.Errorf("replica: log append: %w", err))
		}
		last, gen = op.entries[len(op.entries)-1].Zxid, op.gen
	}
	return flush()
}

// truncateLog cuts the log store after z, durably, behind every append
// queued before (Process).
func (d *Driver) truncateLog(z zab.Zxid) error {
	done := make(chan error, 1)
	d.lq.push(logOp{truncate: &z, done: done}, true, true)
	// Write the queue here rather than wait for the log goroutine (which
	// may have stopped): either this call or the goroutine's, serialised
	// by wmu, handles the truncation, in queue order.
	if err := d.SyncLog(); err != nil {
		return err
	}
	return <-done
}

// persisted reports durable entries to the node, unless the log was cut
// since they were appended, and sends the acknowledgement (or the
// leader's commit) it caused at once rather than after a round through
// the node loop. Under mu, so they leave before anything of a later
// Ready.
func (d *Driver) persisted(gen uint64, z zab.Zxid, quiet bool) {
	d.mu.Lock()
	if gen == d.gen {
		d.durable = max(d.durable, z)
		d.node.Persisted(z)
		if msgs := d.node.TakeMessages(); len(msgs) > 0 {
			d.attachSnapshotsLocked(msgs)
			d.env.Send(msgs)
			d.node.RecycleMessages(msgs)
		}
	}
	d.mu.Unlock()
	if !quiet {
		d.signal()
	}
}
