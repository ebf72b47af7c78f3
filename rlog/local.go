package rlog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/zab"
)

// Local runs a State as one member alone: NOT replicated. It plays the
// parts the replication driver plays for a group: it assigns zxids,
// prepares requests, persists each mutation (the payload to the data log
// at once, the metadata record to a WAL of its own) and applies what it
// synced. It exists so that the log service and its clients work before
// the state machine is wired into an ensemble; docs/design/rlog.md says
// what that wiring needs.
//
// Its commit path is the thesis's decoupled group commit: Do writes an
// append's payload to the data log and queues the metadata record; the
// committer goroutine takes the queue, waits until the data log has synced
// past every payload in it, appends the records to the WAL and syncs it
// (the data is durable before its commit record), then applies them. The
// queue is bounded by the data log's in-flight bytes and by maxQueued.
type Local struct {
	s *State
	w *wal.Log

	mu    sync.Mutex
	next  zab.Zxid // guarded by mu
	queue []zab.Entry
	qEnd  datalog.Pos // data end of the newest queued append
	err   error
	room  chan struct{} // closed and replaced when the queue drains

	kick chan struct{}
	stop chan struct{}
	done chan struct{}

	// SnapshotEvery is how many entries the committer applies between two
	// local snapshots (which let it drop WAL segments).
	snapEvery int
	sinceSnap int
}

const maxQueued = 1 << 16

// LocalOptions configure a Local.
type LocalOptions struct {
	State Options
	WAL   wal.Options
	// SnapshotEvery: entries between local snapshots (100000 if 0).
	SnapshotEvery int
}

// OpenLocal opens a Local in opts.State.Dir: the State, then the WAL,
// replaying the WAL's records after the State's snapshot.
func OpenLocal(opts LocalOptions) (*Local, error) {
	s, err := Open(opts.State)
	if err != nil {
		return nil, err
	}
	w, err := wal.Open(opts.State.FS, filepath.Join(opts.State.Dir, "wal"), opts.WAL)
	if err != nil {
		s.Close()
		return nil, err
	}
	referenced := map[datalog.Pos]bool{}
	err = w.ReadFrom(int64(s.Applied())+1, func(z int64, data []byte) error {
		if m, err := Decode(data); err == nil && m.Local != nil {
			referenced[*m.Local] = true
		}
		return s.Apply([]zab.Entry{{Zxid: zab.Zxid(z), Data: append([]byte(nil), data...)}})
	})
	if err != nil {
		w.Close()
		s.Close()
		return nil, fmt.Errorf("rlog: replaying the WAL: %w", err)
	}
	if err := s.CutOrphans(referenced); err != nil {
		w.Close()
		s.Close()
		return nil, err
	}
	next := max(zab.Zxid(w.LastZxid()), s.Applied()) + 1
	if next == 1 {
		next = 1<<32 | 1
	}
	lc := &Local{s: s, w: w, next: next, room: make(chan struct{}),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		snapEvery: opts.SnapshotEvery}
	if lc.snapEvery <= 0 {
		lc.snapEvery = 100000
	}
	go lc.commit()
	return lc, nil
}

// State returns the State, for reads.
func (lc *Local) State() *State { return lc.s }

// Do prepares, persists and applies one request and returns its result.
// A nil error with Result.Err set is the operation's own failure; an error
// returned means the outcome is unknown (ctx ended) or the member failed.
func (lc *Local) Do(ctx context.Context, req Mutation) (Result, error) {
	for {
		lc.mu.Lock()
		if lc.err != nil {
			err := lc.err
			lc.mu.Unlock()
			return Result{}, err
		}
		if len(lc.queue) < maxQueued {
			break
		}
		room := lc.room
		lc.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	prop, dup, err := lc.s.Prepare(req)
	if err != nil {
		lc.mu.Unlock()
		return Result{Offset: -1, Err: err}, nil
	}
	if dup != nil {
		lc.mu.Unlock()
		return *dup, nil
	}
	z := lc.next
	ent := zab.Entry{Zxid: z, Data: Encode(nil, &prop)}
	walData, end, err := lc.s.Persist(ctx, ent)
	if err != nil {
		// The view counted a mutation that will never apply.
		lc.s.ResetPrepare()
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			lc.mu.Unlock()
			return Result{}, err
		}
		lc.failLocked(err)
		lc.mu.Unlock()
		return Result{}, err
	}
	lc.next++
	ch := lc.s.wait(z)
	lc.queue = append(lc.queue, zab.Entry{Zxid: z, Data: walData})
	if end != (datalog.Pos{}) {
		lc.qEnd = end
	}
	lc.mu.Unlock()
	select {
	case lc.kick <- struct{}{}:
	default:
	}
	select {
	case res := <-ch:
		if res.Err != nil {
			if _, ok := CodeOf(res.Err); !ok {
				return Result{}, res.Err
			}
		}
		return res, nil
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

func (lc *Local) failLocked(err error) {
	if lc.err == nil {
		lc.err = fmt.Errorf("rlog: local member failed: %w", err)
		lc.s.failWaiters(lc.err)
		close(lc.room)
		lc.room = make(chan struct{})
	}
}

// commit is the committer goroutine (the thesis's FlushRP): data sync,
// then WAL write and sync, then apply, for whatever queued meanwhile.
func (lc *Local) commit() {
	defer close(lc.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-lc.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-lc.stop:
			return
		case <-lc.kick:
		}
		for {
			lc.mu.Lock()
			q, end := lc.queue, lc.qEnd
			lc.queue = nil
			if len(q) > 0 {
				close(lc.room)
				lc.room = make(chan struct{})
			}
			lc.mu.Unlock()
			if len(q) == 0 {
				break
			}
			if err := lc.commitGroup(ctx, q, end); err != nil {
				lc.mu.Lock()
				lc.failLocked(err)
				lc.mu.Unlock()
				return
			}
		}
	}
}

func (lc *Local) commitGroup(ctx context.Context, q []zab.Entry, end datalog.Pos) error {
	if end != (datalog.Pos{}) {
		if err := lc.s.WaitData(ctx, end); err != nil {
			return err
		}
	}
	for _, e := range q {
		if err := lc.w.Append(int64(e.Zxid), e.Data); err != nil {
			return err
		}
	}
	if err := lc.w.Sync(); err != nil {
		return err
	}
	if err := lc.s.Apply(q); err != nil {
		return err
	}
	lc.sinceSnap += len(q)
	if lc.sinceSnap >= lc.snapEvery {
		lc.sinceSnap = 0
		z, err := lc.s.Snapshot(ctx)
		if err != nil {
			return err
		}
		if err := lc.w.PurgeBefore(int64(z)); err != nil {
			return err
		}
	}
	return nil
}

// Close stops the committer (waiting for nothing queued: an orderly stop
// should let requests finish first) and closes the WAL and the State.
func (lc *Local) Close() error {
	close(lc.stop)
	<-lc.done
	lc.mu.Lock()
	lc.failLocked(errors.New("closed"))
	lc.mu.Unlock()
	werr := lc.w.Close()
	serr := lc.s.Close()
	return errors.Join(werr, serr)
}
