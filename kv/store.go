package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/zab"
)

// Options configure a Store.
type Options struct {
	// FS is the file system pebble and the snapshot files live on;
	// vfs.Default when nil. Tests use vfs.NewMem().
	FS vfs.FS
	// Dir is the store's directory; the pebble database is Dir itself.
	Dir string
	// Logger receives pebble's log lines and the store's own; slog's
	// default when nil.
	Logger *slog.Logger
	// MemTableSize is pebble's memtable size; pebble's default when 0.
	MemTableSize uint64
	// CacheSize is pebble's block cache in bytes; pebble's default
	// (8 MiB) when 0. Apply reads every written column's older versions
	// to trim them, so a cache smaller than the hot rows turns each put
	// into sstable block reads and decompressions.
	CacheSize int64
	// PebbleWAL keeps pebble's own WAL and syncs it at every Apply, for a
	// store that no replication log precedes (LocalGroup). Durable is then
	// Applied. A replica group leaves it off: the zab log is the WAL.
	PebbleWAL bool
	// RowCacheSize is the byte budget of the cache of rows that plain
	// reads returned (rowcache.go): DefaultRowCacheSize when 0, none
	// when negative.
	RowCacheSize int64
	// GateCompactions installs a compaction scheduler that
	// HoldCompactions can hold: a leader holds its compactions until it
	// hands leadership over (the compaction-aware leader change). Off,
	// pebble's default scheduler runs them as they come.
	GateCompactions bool

	// Breaks deliberately violates one of the store's rules. The
	// simulator's self-test (sim/bite_test.go) sets them to show that it
	// catches each violation; nothing else may.
	Breaks Breaks
}

// Breaks name the store's rules the simulator must be able to catch it
// breaking.
type Breaks struct {
	// AppliedLags records, in each applied batch, the applied zxid of the
	// batch before instead of the batch's own: the applied zxid is no
	// longer in the same pebble batch as the data it covers.
	AppliedLags bool
}

// Store is the key-value state machine: one pebble database fed by
// committed entries. It implements replica.StateMachine.
//
// Concurrency. Apply, InstallSnapshot and Close run on the driver's apply
// goroutine; reads, Snapshot and WriteSnapshot on any goroutine.
//   - dbMu guards the db pointer's lifetime: readers and snapshotters hold
//     it shared for as long as they use db; InstallSnapshot and Close hold
//     it exclusively to swap or close it. Apply, on the goroutine that
//     swaps, needs no lock to use db.
//   - mu makes the schema and the data change together: Apply holds it
//     exclusively while committing a batch and installing the schema the
//     batch made; a read holds it shared while it looks tables up and
//     opens its pebble iterator (which pins a consistent view).
//
// Lock order: dbMu, then mu.
type Store struct {
	opts Options
	fs   vfs.FS
	log  *slog.Logger

	dbMu sync.RWMutex
	db   *pebble.DB // guarded by dbMu (see above)

	mu     sync.RWMutex
	tables map[string]*table // guarded by mu; replaced, never changed in place
	// seq counts the commits of Apply batches and database opens: a
	// view's seq orders it against the row cache's marks (rowcache.go).
	seq  uint64 // guarded by mu
	rows *rowCache

	nextID  uint32 // apply goroutine only
	clients int    // apply goroutine only: entries of the deduplication table
	// clientRecs is the deduplication table in memory (dedupe.go); apply
	// goroutine only.
	clientRecs clientCache
	applied    atomic.Uint64
	durable    atomic.Uint64

	results waiters
	events  eventCounts
	// gate is the compaction scheduler (Options.GateCompactions); nil
	// when pebble's default runs compactions.
	gate *compactionGate
	// l0CompactionThreshold and l0StopWritesThreshold are pebble's,
	// after its defaults.
	l0CompactionThreshold, l0StopWritesThreshold int

	// move is the range-move state (moveapply.go).
	move moveState
}

// Open opens (creating if need be) the store in o.Dir, finishing or
// discarding a snapshot install that a crash interrupted. It resumes from
// the applied zxid pebble holds, which is also durable: with no WAL,
// everything pebble reopens with had been flushed.
func Open(o Options) (*Store, error) {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Dir == "" {
		return nil, errors.New("kv: no directory")
	}
	s := &Store{opts: o, fs: o.FS, log: o.Logger}
	rc := o.RowCacheSize
	if rc == 0 {
		rc = DefaultRowCacheSize
	}
	s.rows = newRowCache(max(rc, 0))
	if o.GateCompactions {
		s.gate = newCompactionGate()
	}
	if err := s.recoverInstall(); err != nil {
		return nil, err
	}
	if err := s.openDB(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) pebbleOptions() *pebble.Options {
	po := &pebble.Options{
		FS:            s.fs,
		DisableWAL:    !s.opts.PebbleWAL,
		Logger:        pebbleLogger{s.log},
		EventListener: s.events.listener(s.log),
	}
	if s.opts.MemTableSize > 0 {
		po.MemTableSize = s.opts.MemTableSize
	}
	if s.opts.CacheSize > 0 {
		po.CacheSize = s.opts.CacheSize
	}
	if s.gate != nil {
		po.Experimental.CompactionScheduler = s.gate
	}
	po.EnsureDefaults()
	s.l0CompactionThreshold = po.L0CompactionThreshold
	s.l0StopWritesThreshold = po.L0StopWritesThreshold
	return po
}

// openDB opens s.opts.Dir and loads the applied zxid and the schema. The
// caller holds dbMu exclusively or owns s alone.
func (s *Store) openDB() error {
	db, err := pebble.Open(s.opts.Dir, s.pebbleOptions())
	if err != nil {
		return fmt.Errorf("kv: open %s: %w", s.opts.Dir, err)
	}
	applied, nextID, tables, err := loadState(db)
	if err != nil {
		db.Close()
		return err
	}
	clients, err := loadClients(db)
	if err == nil {
		err = s.move.load(db)
	}
	if err != nil {
		db.Close()
		return err
	}
	s.clients = len(clients)
	s.clientRecs = clients
	s.db = db
	s.mu.Lock()
	s.tables = tables
	s.seq++
	s.rows.clear(s.seq)
	s.mu.Unlock()
	s.nextID = nextID
	s.applied.Store(uint64(applied))
	s.durable.Store(uint64(applied))
	return nil
}

func loadState(db *pebble.DB) (zab.Zxid, uint32, map[string]*table, error) {
	applied, err := getUint64(db, keyApplied)
	if err != nil {
		return 0, 0, nil, err
	}
	next, err := getUint64(db, keyNextID)
	if err != nil {
		return 0, 0, nil, err
	}
	if next == 0 {
		next = 1
	}
	tables := make(map[string]*table)
	lo := []byte{prefixMeta, metaTable}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return 0, 0, nil, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		name := string(it.Key()[len(lo):])
		v, err := it.ValueAndErr()
		if err != nil {
			return 0, 0, nil, err
		}
		t, err := decodeTable(name, v)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("kv: table %q descriptor: %w", name, err)
		}
		tables[name] = t
	}
	if err := it.Error(); err != nil {
		return 0, 0, nil, err
	}
	return zab.Zxid(applied), uint32(next), tables, nil
}

func getUint64(db *pebble.DB, key []byte) (uint64, error) {
	v, c, err := db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("kv: reserved key %q holds %d bytes", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Applied returns the zxid of the last applied entry.
func (s *Store) Applied() zab.Zxid { return zab.Zxid(s.applied.Load()) }

// Durable returns the newest zxid pebble has flushed: what survives a
// crash of this process without the replication log. It advances at
// Open, Snapshot, WriteSnapshot and InstallSnapshot; pebble's own
// memtable flushes in between make more durable than it reports, which is
// safe (the driver keeps more log than it needs until the next Snapshot).
func (s *Store) Durable() zab.Zxid { return zab.Zxid(s.durable.Load()) }

func (s *Store) advanceDurable(z zab.Zxid) {
	for {
		d := s.durable.Load()
		if uint64(z) <= d || s.durable.CompareAndSwap(d, uint64(z)) {
			return
		}
	}
}

// Snapshot flushes pebble's memtables and returns the zxid every flushed
// byte covers at least: the applied zxid read before the flush started
// (entries applied while it ran may be flushed too, and are replayed
// harmlessly after a crash since they are above what Durable says).
func (s *Store) Snapshot(ctx context.Context) (zab.Zxid, error) {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.db == nil {
		return 0, errClosed
	}
	z := s.Applied()
	s.releaseNearStallLocked()
	if err := s.db.Flush(); err != nil {
		return 0, fmt.Errorf("kv: flush: %w", err)
	}
	s.advanceDurable(z)
	return z, nil
}

var errClosed = errors.New("kv: store closed")

// Close flushes (so an orderly stop loses nothing pebble held only in
// memory) and closes the database.
func (s *Store) Close() error {
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if s.db == nil {
		return nil
	}
	z := s.Applied()
	s.releaseNearStallLocked()
	err := s.db.Flush()
	if err == nil {
		s.advanceDurable(z)
	}
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	s.db = nil
	return err
}

// Tables lists the tables in name order.
func (s *Store) Tables() []TableInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]TableInfo, 0, len(s.tables))
	for _, t := range s.tables {
		out = append(out, t.info())
	}
	sortTables(out)
	return out
}

// Table describes one table.
func (s *Store) Table(name string) (TableInfo, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tables[name]
	if !ok {
		return TableInfo{}, fmt.Errorf("table %q: %w", name, ErrNoTable)
	}
	return t.info(), nil
}

// Await registers a request id before its mutation is proposed; the
// channel receives the mutation's result when this member applies it.
// cancel forgets the registration.
func (s *Store) Await(reqID uint64) (<-chan Result, func()) { return s.results.await(reqID) }

// pebbleLogger sends pebble's log lines to slog.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug("pebble: " + fmt.Sprintf(format, args...))
}
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error("pebble: " + fmt.Sprintf(format, args...))
}
func (p pebbleLogger) Fatalf(format string, args ...any) {
	// pebble's contract: Fatalf does not return.
	panic(fmt.Sprintf("pebble: "+format, args...))
}

var discardLogger = slog.New(slog.DiscardHandler)
