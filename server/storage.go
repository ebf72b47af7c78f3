package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/zab"
)

// storage is the server's durable state: the transaction log (written by
// the driver's log writer only) and the snapshots (written by the
// snapshot goroutine, treeSM.driveSnapshots).
// Files live in version-2/ under dataDir and dataLogDir, where ZooKeeper
// keeps its own, so operators find them where they expect.
type storage struct {
	opts    *Options
	log     *slog.Logger
	fs      vfs.FS
	wal     *wal.Log
	snapDir string
	logDir  string

	// Log writer only (the driver's SyncLog).
	dirty    bool
	lastSync time.Time

	// snapping is true while a snapshot is written (the driver's
	// scheduler starts one at a time: treeSM.driveSnapshots).
	snapping atomic.Bool
	// snapDone is closed when the snapshot that set snapping ends; it is
	// stored before snapping is set, so whoever sees snapping true finds
	// the running snapshot's channel (or a later one).
	snapDone atomic.Pointer[chan struct{}]
	// purgeBelow asks the log writer to drop segments below a zxid.
	purgeBelow atomic.Int64

	fsyncs atomic.Int64
	// rl holds the logs' payloads (rlog.root), nil without logs.
	rl *logData
	// positions are the WAL positions of entries not yet slimmed
	// (walslim.go); walReads counts the entries read back from the WAL
	// for learners.
	positions walPositions
	walReads  atomic.Int64
	// replayed is how many log records recovery applied.
	replayed int
	// recovered is, in an ensemble, the log after the snapshot, not
	// applied (see openStorage).
	recovered []zab.Entry
	// idleCheck and idleQuiet are idleSnapCheck and idleSnapQuiet (tests
	// shorten them).
	idleCheck, idleQuiet time.Duration
	// complete: diskless, and the snapshot loaded was a checkpoint.
	complete bool
	// ckptMu orders a diskless checkpoint against a busy snapshot's
	// publication; ckptSeq counts checkpoints (written under ckptMu). A
	// busy snapshot that started before a checkpoint stops and is not
	// published: the checkpoint's sidecar names the newest snapshot on
	// disk, and a restart loads the newest snapshot (see
	// writeCheckpoint).
	ckptMu  sync.Mutex
	ckptSeq atomic.Int64
	// beforePublish, if set, runs after a snapshot's file is durable and
	// before it is published (tests interleave a checkpoint there).
	beforePublish func()
	// onSnapshot, if set, learns each snapshot written but the idle ones
	// (the replica compacts its in-memory log to it). A diskless leader
	// keeps its log back to the snapshot before its newest, so that a
	// member restarted from its own last snapshot catches up by DIFF
	// (replica.compact); idle snapshots come after as few as a hundredth
	// of snapCount writes, and counted there they moved that cut past a
	// crashed member's snapshot after one busy and one idle snapshot,
	// which then cost it a SNAP (TestDisklessRestartCatchesUpByDiff failed
	// so under CI). The log window follows the busy cadence, as before
	// idle snapshots came this often; checkpoints and restarts use the
	// newest snapshot on disk, idle or not.
	onSnapshot func(zxid int64)
	// snapTimes and fsyncTimes summarise the snapshots' and the log
	// fsyncs' durations for mntr, as ZooKeeper's snapshottime and
	// fsynctime metrics do.
	snapTimes, fsyncTimes msSummary
}

// fsyncWarning is ZooKeeper's fsync.warningthresholdms default.
const fsyncWarning = time.Second

func openStorage(o *Options) (*storage, *datatree.Tree, error) {
	st := &storage{
		opts:      o,
		log:       o.Logger,
		fs:        o.FS,
		snapDir:   filepath.Join(o.DataDir, "version-2"),
		logDir:    filepath.Join(o.DataLogDir, "version-2"),
		idleCheck: idleSnapCheck,
		idleQuiet: idleSnapQuiet,
	}
	if err := st.fs.MkdirAll(st.snapDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create dataDir: %w", err)
	}
	if err := snap.CleanTemp(st.fs, st.snapDir); err != nil {
		st.log.Warn("removing unfinished snapshots failed", "err", err)
	}
	var tree *datatree.Tree
	_, err := snap.Load(st.fs, st.snapDir, st.log, func(zxid int64, r io.Reader) error {
		t, err := datatree.ReadSnapshot(r)
		if err != nil {
			// A body that passed its CRC but does not decode is as bad as
			// a damaged one: set it aside and fall back to an older one.
			return fmt.Errorf("%w: %w", snap.ErrCorrupt, err)
		}
		tree = t
		return nil
	})
	switch {
	case errors.Is(err, snap.ErrNoSnapshot):
		tree = datatree.New()
	case err != nil:
		return nil, nil, fmt.Errorf("load snapshot: %w", err)
	}
	packLogs(o, tree)
	st.log.Info("loaded snapshot", "zxid", hex(tree.LastZxid()), "nodes", tree.NodeCount())

	if o.Durability == DurabilityDiskless {
		// No log: the snapshot is everything. In an ensemble, a
		// checkpoint beside it makes it complete; otherwise the server
		// recovers as a non-voter until a leader synchronizes it.
		if o.Ensemble != nil {
			st.recovered, st.complete = st.readCheckpoint(tree.LastZxid())
		}
		st.purgeCheckpoints()
		return st, tree, nil
	}
	w, err := wal.Open(st.fs, st.logDir, wal.Options{Logger: st.log, SegmentSize: o.PreallocSize})
	if err != nil {
		return nil, nil, fmt.Errorf("open transaction log: %w", err)
	}
	st.wal = w
	var (
		h       txn.Header
		tx      txn.Txn
		res     datatree.Result
		n       int
		lastErr error
	)
	next := tree.LastZxid() + 1
	err = w.ReadFrom(next, func(zxid int64, data []byte) error {
		if o.Ensemble != nil {
			// Replicated: the log may end with proposals that never
			// committed. Hand them to zab, which delivers what is
			// committed once a leader has synchronized this server.
			st.recovered = append(st.recovered, zab.Entry{Zxid: zab.Zxid(zxid), Data: bytes.Clone(data)})
			return nil
		}
		if err := txn.Decode(data, &h, &tx); err != nil {
			return fmt.Errorf("log record %s: %w", hex(zxid), err)
		}
		if n == 0 && zxid != next {
			st.log.Warn("transaction log starts after the snapshot: transactions are missing",
				"snapshot", hex(next-1), "firstLogged", hex(zxid))
		}
		res.Events = res.Events[:0]
		tree.Apply(&h, &tx, &res)
		n++
		return nil
	})
	if err == nil {
		err = lastErr
	}
	if err != nil {
		w.Close()
		return nil, nil, fmt.Errorf("replay transaction log: %w", err)
	}
	if last := w.LastZxid(); last > tree.LastZxid() && o.Ensemble == nil {
		w.Close()
		return nil, nil, fmt.Errorf("transaction log ends at %s but replay reached %s", hex(last), hex(tree.LastZxid()))
	}
	st.log.Info("replayed transaction log", "transactions", n, "zxid", hex(tree.LastZxid()))
	st.replayed = n
	return st, tree, nil
}

// appendEntry buffers one proposal's WAL record (log writer): with logs,
// an append's payload goes to the data log (not synced) and the record
// keeps a reference.
func (st *storage) appendEntry(e zab.Entry) error {
	data := e.Data
	if st.rl != nil {
		var err error
		if data, err = st.rl.toWAL(e); err != nil {
			return err
		}
	}
	if st.wal == nil {
		return nil // diskless
	}
	st.dirty = true
	p, err := st.wal.AppendPos(int64(e.Zxid), data)
	if err == nil {
		st.positions.add(int64(e.Zxid), p)
	}
	return err
}

// syncEntries makes the records appendEntry buffered durable as the mode
// requires (commit). With logs, the payloads written so far are synced
// first (sync durability): an append's data is durable before its commit
// record, and the member acknowledges only after both.
func (st *storage) syncEntries() error {
	if st.rl != nil && st.opts.Durability != DurabilityAsync {
		if err := st.rl.syncWritten(); err != nil {
			return err
		}
	}
	return st.commit()
}

// commit makes the appended transactions durable as the durability mode
// requires and drops the log segments purge released (log writer).
func (st *storage) commit() error {
	if !st.dirty || st.wal == nil {
		return nil
	}
	st.dirty = false
	switch st.opts.Durability {
	case DurabilityAsync:
		if err := st.wal.Flush(); err != nil {
			return err
		}
		if time.Since(st.lastSync) >= st.opts.AsyncSyncInterval {
			t0 := time.Now()
			if err := st.wal.Sync(); err != nil {
				return err
			}
			st.fsyncs.Add(1)
			st.lastSync = time.Now()
			st.fsyncTimes.add(st.lastSync.Sub(t0))
		}
	default:
		t0 := time.Now()
		if err := st.wal.Sync(); err != nil {
			return err
		}
		d := time.Since(t0)
		if d > fsyncWarning {
			st.log.Warn("fsync of the transaction log was slow; it adds to every write's latency", "took", d)
		}
		st.fsyncs.Add(1)
		st.fsyncTimes.add(d)
	}
	if below := st.purgeBelow.Swap(0); below > 0 {
		if err := st.wal.PurgeBefore(below); err != nil {
			st.log.Warn("purging old log segments failed", "err", err)
		}
	}
	return nil
}

// idleSnapCheck is how often the snapshot goroutine asks the driver's
// scheduler whether a snapshot is due (treeSM.driveSnapshots);
// idleSnapQuiet is how long no write must come before a diskless member
// takes an idle snapshot (replica.Schedule.IdleQuiet: the lull after a
// burst; the reasons and measurements are in docs/design/diskless.md).
const (
	idleSnapCheck = 25 * time.Millisecond
	idleSnapQuiet = 100 * time.Millisecond
)

// idleSnapMin is the least number of writes since the newest snapshot
// that makes an idle one worth taking: a hundredth of snapCount (1000 by
// default; their checkpoint is some 200 KB).
func (st *storage) idleSnapMin() int64 {
	return int64(max(st.opts.SnapCount/100, 1))
}

// snapshot takes a snapshot that the replica compacts its log to.
func (st *storage) snapshot(s *Server) error {
	_, err := st.takeSnapshot(s, true, snapBusy)
	return err
}

// takeSnapshot writes the tree while writes continue: it holds the read lock
// only for a chunk of nodes at a time. Replaying the log from the zxid it
// started at repairs whatever changed under it (transactions are
// idempotent). compact says whether onSnapshot learns it; kind is what it
// counts as ("" for none). It returns the
// snapshot's zxid, or -1 if a checkpoint overtook it and it was dropped.
func (st *storage) takeSnapshot(s *Server, compact bool, kind string) (int64, error) {
	done := make(chan struct{})
	st.snapDone.Store(&done)
	st.snapping.Store(true)
	defer func() {
		st.snapping.Store(false)
		close(done)
	}()
	start := time.Now()
	seq := st.ckptSeq.Load()
	s.mu.RLock()
	zxid := s.tree.LastZxid()
	w, err := snap.Create(st.fs, st.snapDir, zxid)
	if err != nil {
		s.mu.RUnlock()
		return 0, err
	}
	err = s.tree.WriteSnapshot(stopWriter{w, func() bool { return st.ckptSeq.Load() != seq }}, func(write func()) {
		s.mu.RUnlock()
		write()
		s.mu.RLock()
	})
	s.mu.RUnlock()
	dropped := func() (int64, error) {
		w.Abort()
		st.log.Info("snapshot dropped: a checkpoint was written while it ran", "zxid", hex(zxid))
		return -1, nil
	}
	if errors.Is(err, errCheckpointed) {
		return dropped()
	}
	if err != nil {
		w.Abort()
		return 0, err
	}
	if err := w.Sync(); err != nil {
		return 0, err
	}
	if st.rl != nil {
		// The payloads the tree names were written before it applied
		// their creates: durable before the snapshot that names them.
		if err := st.rl.syncWritten(); err != nil {
			w.Abort()
			return 0, err
		}
	}
	if st.beforePublish != nil {
		st.beforePublish()
	}
	st.ckptMu.Lock()
	if st.ckptSeq.Load() != seq {
		st.ckptMu.Unlock()
		return dropped()
	}
	err = w.Commit()
	st.ckptMu.Unlock()
	if err != nil {
		return 0, err
	}
	took := time.Since(start)
	st.snapshotTaken(took, kind)
	if kind != "" {
		// A snapshot the driver's scheduler asked for (treeSM.Snapshot,
		// kind "") is logged by the driver, which knows busy from idle.
		st.log.Info("snapshot written", "zxid", hex(zxid), "took", took, "idle", kind != snapBusy)
	}
	if compact && st.onSnapshot != nil {
		st.onSnapshot(zxid)
	}
	return zxid, nil
}

// errCheckpointed stops a busy snapshot that a checkpoint overtook.
var errCheckpointed = errors.New("a checkpoint was written")

// stopWriter fails its writes once stop says so, which ends a snapshot
// at its next chunk.
type stopWriter struct {
	w    io.Writer
	stop func() bool
}

func (s stopWriter) Write(p []byte) (int, error) {
	if s.stop() {
		return 0, errCheckpointed
	}
	return s.w.Write(p)
}

// purgeLoop keeps autopurge.snapRetainCount snapshots and the log needed
// to replay from the oldest, every autopurge.purgeInterval.
func (st *storage) purgeLoop(ctx context.Context) {
	if st.opts.PurgeInterval <= 0 {
		return
	}
	t := time.NewTicker(st.opts.PurgeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st.purge()
		st.compactLogs(ctx)
	}
}

// compactLogs compacts the data log's sparse segments (rlogcompact.go)
// after a purge has released what the kept snapshots no longer need.
func (st *storage) compactLogs(ctx context.Context) {
	if st.rl == nil {
		return
	}
	segs, moved, err := st.rl.compactSparse(ctx)
	if err != nil {
		st.log.Warn("compacting the rlog data log failed; the records stay where they are", "segments", segs, "records", moved, "err", err)
		return
	}
	if segs > 0 {
		st.log.Info("compacted sparse rlog data-log segments", "segments", segs, "records", moved)
	}
}

func (st *storage) purge() {
	oldest, err := snap.Purge(st.fs, st.snapDir, st.opts.SnapRetainCount)
	if err != nil {
		st.log.Warn("purging snapshots failed", "err", err)
		return
	}
	if oldest > 0 {
		// Replay from the oldest kept snapshot starts at oldest+1.
		st.purgeBelow.Store(oldest + 1)
		if st.rl != nil {
			// No kept snapshot and no replay from one needs the payloads
			// of entries removed by then.
			st.rl.releaseUpTo(oldest)
		}
	}
	if st.wal == nil {
		st.purgeCheckpoints()
	}
}

func (st *storage) close() error {
	if st.rl != nil {
		// The data log first: its bytes are durable before the records
		// that name them.
		if err := st.rl.close(); err != nil {
			st.log.Error("closing the rlog data log failed", "err", err)
		}
	}
	if st.wal == nil {
		return nil
	}
	if err := st.wal.Sync(); err != nil {
		st.wal.Close()
		return err
	}
	return st.wal.Close()
}
