package rlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"

	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// Options configure a State.
type Options struct {
	FS  vfs.FS
	Dir string // the State's directory: the data log and the snapshot
	// MaxAppend bounds one append's payload (1 MiB if 0).
	MaxAppend int64
	// IndexEvery is how many bytes of a log one index point covers (1 MiB
	// if 0).
	IndexEvery int64
	// DataLog configures the data log; its OnSync and OnRecover are the
	// State's.
	DataLog datalog.Options
	Logger  *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxAppend <= 0 {
		o.MaxAppend = 1 << 20
	}
	if o.IndexEvery <= 0 {
		o.IndexEvery = defaultIndexEvery
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.DataLog.MaxRecordSize < int(o.MaxAppend) {
		o.DataLog.MaxRecordSize = int(o.MaxAppend)
	}
	o.DataLog.Logger = o.Logger
	return o
}

// logState is one log's replicated metadata and this member's index.
type logState struct {
	name       string
	id         uint64 // the zxid of its create
	start, end int64
	sealed     bool
	last       lastAppend
	committed  int64 // end of the applied appends whose bytes are synced here
	x          index
}

// lastAppend identifies a log's newest append, so that a retry of it (same
// expected offset, length and checksum) succeeds again without a second
// copy.
type lastAppend struct {
	off, n int64
	sum    uint32
}

// unsynced is an applied append whose bytes the data log has not yet
// reported synced.
type unsynced struct {
	log *logState
	end int64       // the log's end after it
	at  datalog.Pos // the data log's end after its record
}

// Result is the outcome of one applied mutation, decided the same way on
// every replica.
type Result struct {
	Zxid zab.Zxid
	// Offset is where an append went, the end a seal fixed, the start a
	// trim set.
	Offset int64
	Err    error // nil or an *Error
}

// State is the replicated logs' state on one member: every log's metadata
// (replicated, logical) and the data log with the index into it (this
// member's own). It implements the apply side of a replicated state
// machine; see Apply, Prepare and Persist.
//
// Concurrency: mu guards everything below it. The data log has its own
// locks and is never waited for under mu except by an append that finds
// the data log's in-flight bound full (the flusher needs nothing of mu).
type State struct {
	opts Options
	dl   *datalog.Log

	nmu    sync.Mutex
	notify chan struct{} // closed and replaced on every change readers wait for

	mu      sync.Mutex
	logs    map[string]*logState
	byID    map[uint64]*logState
	applied zab.Zxid
	durable zab.Zxid
	// applyMark is the last zxid Apply was handed (0 after an install,
	// until the next Apply): see Snapshot.
	applyMark zab.Zxid
	persisted map[zab.Zxid]datalog.Pos // payloads written by Persist, by zxid, not yet applied
	// early holds payloads Apply wrote because their entry committed
	// before this member's log store had it (a leader may commit on its
	// followers' acknowledgements before its own disk write): Persist
	// reuses them, so each entry has one record. Only with a Store.
	early    map[zab.Zxid]datalog.Pos
	hasStore bool
	// onDurable, set by OpenStore, learns each new local snapshot's zxid
	// (the Store drops WAL segments below it).
	onDurable func(zab.Zxid)
	pending   []unsynced          // in data-log order
	prep      map[string]*prepLog // the leader's view ahead of apply
	waiters   map[zab.Zxid]chan Result
	// tail holds, from Open until the WAL has been read (CutOrphans), the
	// positions of the data-log records after the local snapshot.
	tail   []datalog.Pos
	closed bool
}

// Open opens (or creates) the State in opts.Dir: the data log, and the
// local snapshot if one exists.
func Open(opts Options) (*State, error) {
	opts = opts.withDefaults()
	s := &State{
		opts:      opts,
		notify:    make(chan struct{}),
		logs:      map[string]*logState{},
		byID:      map[uint64]*logState{},
		persisted: map[zab.Zxid]datalog.Pos{},
		early:     map[zab.Zxid]datalog.Pos{},
		prep:      map[string]*prepLog{},
		waiters:   map[zab.Zxid]chan Result{},
	}
	if err := opts.FS.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("rlog: %w", err)
	}
	img, err := readLocalSnapshot(opts)
	if err != nil {
		return nil, err
	}
	var snapZxid int64
	if img != nil {
		snapZxid = int64(img.applied)
	}
	covered := map[recKey]int64{}
	dopts := opts.DataLog
	dopts.OnSync = func(datalog.Pos) { s.wake() }
	dopts.OnRecover = func(p datalog.Pos, m datalog.Meta, n int) {
		if m.Zxid <= snapZxid {
			covered[recKey{p.Seg, m.Log}] += datalog.RecordSize(n)
		} else {
			s.tail = append(s.tail, p)
		}
	}
	dl, err := datalog.Open(opts.FS, filepath.Join(opts.Dir, "data"), dopts)
	if err != nil {
		return nil, err
	}
	s.dl = dl
	s.mu.Lock()
	err = s.restoreLocked(img, covered)
	s.mu.Unlock()
	if err != nil {
		dl.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the data log.
func (s *State) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wake()
	return s.dl.Close()
}

func (s *State) wake() {
	s.nmu.Lock()
	close(s.notify)
	s.notify = make(chan struct{})
	s.nmu.Unlock()
}

func (s *State) changed() <-chan struct{} {
	s.nmu.Lock()
	defer s.nmu.Unlock()
	return s.notify
}

// Applied returns the zxid of the last applied entry.
func (s *State) Applied() zab.Zxid {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied
}

// Durable returns the zxid of the newest local snapshot.
func (s *State) Durable() zab.Zxid {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.durable
}

// Persist is the log store's hook for an entry about to be appended to
// this member's WAL: an append's payload goes to the data log and the
// returned WAL form names where instead of carrying it. end is the data
// log position that must be synced before the WAL record is (the thesis's
// rule: an append's data is durable before its commit record); WaitData
// waits for it. Entries other than appends come back unchanged.
func (s *State) Persist(ctx context.Context, ent zab.Entry) (wal []byte, end datalog.Pos, err error) {
	m, err := Decode(ent.Data)
	if err != nil {
		return nil, datalog.Pos{}, err
	}
	if m.Op != OpAppend || m.Payload == nil {
		return ent.Data, datalog.Pos{}, nil
	}
	// Under mu, so that Apply's fallback (storeLocked) and Persist never
	// both write one entry's payload.
	s.mu.Lock()
	defer s.mu.Unlock()
	pos, ok := s.early[ent.Zxid]
	delete(s.early, ent.Zxid)
	if ok {
		end = datalog.Pos{Seg: pos.Seg, Off: pos.Off + datalog.RecordSize(int(m.Length))}
	} else {
		// Decode checked m.Sum against the payload.
		pos, end, err = s.dl.AppendSummed(ctx, datalog.Meta{Zxid: int64(ent.Zxid), Log: m.Log, Offset: m.Offset}, m.Payload, m.Sum)
		if err != nil {
			return nil, datalog.Pos{}, err
		}
		s.persisted[ent.Zxid] = pos
	}
	wal, _, err = SplitPayload(ent.Data, pos)
	return wal, end, err
}

// WaitData waits until the data log has synced up to end.
func (s *State) WaitData(ctx context.Context, end datalog.Pos) error {
	return s.dl.WaitSynced(ctx, end)
}

// Payload returns the payload of a WAL-form append, from the data log, to
// turn it back into the proposal form for a learner (AttachPayload).
func (s *State) Payload(local datalog.Pos) ([]byte, error) {
	_, p, err := s.dl.Read(local)
	return p, err
}

// Apply applies committed entries in zxid order. An entry's mutation that
// fails (a wrong offset, a sealed log) is a Result with an error, the same
// on every replica; an error returned means the member cannot go on.
func (s *State) Apply(ents []zab.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range ents {
		if e.Zxid <= s.applied {
			continue
		}
		s.applyMark = e.Zxid
		res, name, err := s.applyLocked(e)
		if err != nil {
			return err
		}
		s.settleLocked(name)
		s.applied = e.Zxid
		if ch, ok := s.waiters[e.Zxid]; ok {
			delete(s.waiters, e.Zxid)
			ch <- res
		}
	}
	s.wake()
	return nil
}

func (s *State) applyLocked(e zab.Entry) (Result, string, error) {
	m, err := Decode(e.Data)
	if err != nil {
		// Every replica decodes the same bytes the same way: a result.
		return Result{Zxid: e.Zxid, Offset: -1, Err: &Error{Code: CodeBadRequest, Detail: err.Error()}}, "", nil
	}
	res, err := s.applyMutationLocked(e, m)
	return res, m.Name, err
}

func (s *State) applyMutationLocked(e zab.Entry, m Mutation) (Result, error) {
	res := Result{Zxid: e.Zxid, Offset: -1}
	l := s.logs[m.Name]
	if m.Op == OpCreate {
		if l != nil {
			res.Err = s.errLocked(CodeExists, l, -1)
			return res, nil
		}
		l = &logState{name: m.Name, id: uint64(e.Zxid)}
		s.logs[m.Name] = l
		s.byID[l.id] = l
		res.Offset = 0
		return res, nil
	}
	if l == nil {
		res.Err = &Error{Code: CodeNotFound, Log: m.Name}
		if m.Op == OpAppend {
			return res, s.discardLocked(e.Zxid, m, nil)
		}
		return res, nil
	}
	switch m.Op {
	case OpAppend:
		switch {
		case m.Log != l.id:
			res.Err = &Error{Code: CodeNotFound, Log: m.Name, Detail: "the log was deleted and created again"}
		case l.sealed:
			res.Err = s.errLocked(CodeSealed, l, m.Offset)
		case m.Length > s.opts.MaxAppend:
			res.Err = s.errLocked(CodeTooLarge, l, m.Offset)
		case m.Offset != l.end:
			res.Err = s.errLocked(CodeWrongOffset, l, m.Offset)
		}
		if res.Err != nil {
			return res, s.discardLocked(e.Zxid, m, l)
		}
		pos, end, err := s.storeLocked(e.Zxid, m, l)
		if err != nil {
			return res, err
		}
		l.x.add(l.end, m.Length, pos, s.opts.IndexEvery)
		l.end += m.Length
		l.last = lastAppend{off: m.Offset, n: m.Length, sum: m.Sum}
		s.pending = append(s.pending, unsynced{log: l, end: l.end, at: end})
		s.advanceLocked()
		res.Offset = m.Offset
	case OpTrim:
		if m.Offset > l.end {
			res.Err = s.errLocked(CodeOutOfRange, l, m.Offset)
			return res, nil
		}
		if m.Offset > l.start {
			l.start = m.Offset
			for _, u := range l.x.trim(l.start) {
				if err := s.dl.Release(u.seg, u.bytes); err != nil {
					return res, err
				}
			}
		}
		res.Offset = l.start
	case OpSeal:
		l.sealed = true
		res.Offset = l.end
	case OpDelete:
		delete(s.logs, l.name)
		delete(s.byID, l.id)
		for _, u := range l.x.segs {
			if err := s.dl.Release(u.seg, u.bytes); err != nil {
				return res, err
			}
		}
		res.Offset = l.end
	}
	return res, nil
}

// storeLocked returns where the append's payload is in the data log,
// writing it now if Persist did not.
func (s *State) storeLocked(z zab.Zxid, m Mutation, l *logState) (pos, end datalog.Pos, err error) {
	if m.Local != nil {
		delete(s.persisted, z)
		// A WAL-form entry: its payload must be where it says.
		dm, n, next, err := s.dl.Next(*m.Local)
		if err == nil && (dm.Log != l.id || dm.Offset != m.Offset || int64(n) != m.Length || dm.Zxid != int64(z)) {
			err = fmt.Errorf("holds zxid %#x log %d offset %d length %d", dm.Zxid, dm.Log, dm.Offset, n)
		}
		if err != nil {
			return pos, end, fmt.Errorf("rlog: the data log lacks the payload of append %#x to %q at %s: %w", int64(z), m.Name, m.Local, err)
		}
		return *m.Local, next, nil
	}
	if p, ok := s.persisted[z]; ok {
		delete(s.persisted, z)
		return p, datalog.Pos{Seg: p.Seg, Off: p.Off + datalog.RecordSize(int(m.Length))}, nil
	}
	if m.Payload == nil {
		return pos, end, fmt.Errorf("rlog: append %#x to %q has neither payload nor local position", int64(z), m.Name)
	}
	pos, end, err = s.dl.AppendSummed(context.Background(), datalog.Meta{Zxid: int64(z), Log: l.id, Offset: m.Offset}, m.Payload, m.Sum)
	if err != nil {
		return pos, end, fmt.Errorf("rlog: storing append %#x: %w", int64(z), err)
	}
	if s.hasStore {
		s.early[z] = pos
	}
	return pos, end, nil
}

// discardLocked forgets the payload of an append that failed: its record,
// if the data log has one, is released and, while it stays, skipped.
func (s *State) discardLocked(z zab.Zxid, m Mutation, l *logState) error {
	var pos datalog.Pos
	switch p, ok := s.persisted[z]; {
	case m.Local != nil:
		pos = *m.Local
	case ok:
		pos = p
		delete(s.persisted, z)
	default:
		return nil
	}
	if l != nil {
		l.x.dead = append(l.x.dead, deadRecord{zxid: int64(z), seg: pos.Seg})
	}
	return s.dl.Release(pos.Seg, datalog.RecordSize(int(m.Length)))
}

// advanceLocked moves each log's committed end up to what the data log has
// synced.
func (s *State) advanceLocked() {
	synced := s.dl.Synced()
	i := 0
	for ; i < len(s.pending); i++ {
		u := s.pending[i]
		if synced.Less(u.at) {
			break
		}
		if u.end > u.log.committed {
			u.log.committed = u.end
		}
	}
	if i > 0 {
		s.pending = append(s.pending[:0], s.pending[i:]...)
	}
}

func (s *State) errLocked(c Code, l *logState, off int64) *Error {
	return &Error{Code: c, Log: l.name, Start: l.start, End: l.end, Committed: l.committed,
		Sealed: l.sealed, Offset: off, Limit: s.opts.MaxAppend}
}

// Stat is a log's positions.
type Stat struct {
	Name      string
	ID        uint64
	Start     int64
	End       int64
	Committed int64
	Sealed    bool
}

// Stat returns the positions of the named log.
func (s *State) Stat(name string) (Stat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	l := s.logs[name]
	if l == nil {
		return Stat{}, &Error{Code: CodeNotFound, Log: name}
	}
	return statOf(l), nil
}

func statOf(l *logState) Stat {
	return Stat{Name: l.name, ID: l.id, Start: l.start, End: l.end, Committed: l.committed, Sealed: l.sealed}
}

// List returns every log's positions, by name.
func (s *State) List() []Stat {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listLocked()
}

func (s *State) listLocked() []Stat {
	s.advanceLocked()
	out := make([]Stat, 0, len(s.logs))
	for _, l := range s.logs {
		out = append(out, statOf(l))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// IndexBytes returns the memory the named log's index holds.
func (s *State) IndexBytes(name string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.logs[name]; l != nil {
		return l.x.bytes()
	}
	return 0
}

// errClosed is returned by reads after Close.
var errClosed = errors.New("rlog: closed")

// wait registers for the result of the entry with zxid z.
func (s *State) wait(z zab.Zxid) <-chan Result {
	ch := make(chan Result, 1)
	s.mu.Lock()
	s.waiters[z] = ch
	s.mu.Unlock()
	return ch
}

// failWaiters answers every waiting request with err.
func (s *State) failWaiters(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for z, ch := range s.waiters {
		ch <- Result{Zxid: z, Offset: -1, Err: err}
		delete(s.waiters, z)
	}
}

func (s *State) notePersisted(z zab.Zxid, p datalog.Pos) {
	s.mu.Lock()
	s.persisted[z] = p
	s.mu.Unlock()
}

// cutAfter cuts the data log at the first payload persisted for an entry
// after z (none of them was applied: a TRUNC cuts only uncommitted
// entries).
func (s *State) cutAfter(z zab.Zxid) error {
	s.mu.Lock()
	var cut *datalog.Pos
	for ez, p := range s.persisted {
		if ez > z {
			if cut == nil || p.Less(*cut) {
				q := p
				cut = &q
			}
			delete(s.persisted, ez)
		}
	}
	s.mu.Unlock()
	if cut == nil {
		return nil
	}
	return s.dl.Cut(*cut)
}

// CutOrphans cuts the data log at its first record after the local
// snapshot that no WAL record references: a payload written before a
// crash whose WAL record never became durable. Payloads are written in
// zxid order and each WAL record after its payload, so such records are a
// suffix of the data log; left in place, one would shadow the append that
// later takes its offset. referenced holds the positions the WAL's
// records after the snapshot name. Call it once, after reading the WAL.
func (s *State) CutOrphans(referenced map[datalog.Pos]bool) error {
	s.mu.Lock()
	tail := s.tail
	s.tail = nil
	s.mu.Unlock()
	i := len(tail)
	for i > 0 && !referenced[tail[i-1]] {
		i--
	}
	if i == len(tail) {
		return nil
	}
	s.opts.Logger.Warn("rlog: cutting data-log payloads no WAL record references (written before a crash)",
		"position", tail[i].String(), "records", len(tail)-i)
	return s.dl.Cut(tail[i])
}
