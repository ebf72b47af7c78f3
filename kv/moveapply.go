package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/zab"
)

// The state the range-move operations keep, in pebble beside the data
// (so it is replicated, in every snapshot, and survives restarts):
//
//	metaFences                 the fence set (movefence.go encode)
//	metaSealed | move(8)       (empty): ingests of that move are refused
//	metaVersionFloor           u64: the highest version an ingest wrote
//
// The version floor keeps versions increasing after an ingest: cells keep
// the versions the source RG gave them (its zxids), which may exceed
// this RG's zxids, so a put whose zxid is not above the floor takes
// floor+1 as its version (and raises the floor) instead. Every replica
// applies the same entries to the same floor, so they agree.
const (
	metaFences       byte = 'f'
	metaSealed       byte = 's'
	metaVersionFloor byte = 'v'
)

var (
	keyFences       = []byte{prefixMeta, metaFences}
	keyVersionFloor = []byte{prefixMeta, metaVersionFloor}
)

func sealedKey(move uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{prefixMeta, metaSealed}, move)
}

// Errors of the move operations' results.
var (
	// ErrMoveSealed: an ingest of a move the target has sealed.
	ErrMoveSealed = errors.New("range move already sealed")
	// ErrNotFenced: an export or drop of a range the move has not fenced
	// (here, or not yet applied here).
	ErrNotFenced = errors.New("range not fenced by this move")
)

// moveState is the Store's part of it. fences is published at each
// commit for readers; floor belongs to the apply goroutine.
type moveState struct {
	fences atomic.Pointer[fenceSet]
	floor  uint64
}

func (ms *moveState) load(db *pebble.DB) error {
	fs := fenceSet{}
	v, c, err := db.Get(keyFences)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return err
	default:
		fs, err = decodeFences(v)
		c.Close()
		if err != nil {
			return err
		}
	}
	floor, err := getUint64(db, keyVersionFloor)
	if err != nil {
		return err
	}
	ms.fences.Store(&fs)
	ms.floor = floor
	return nil
}

func (ms *moveState) current() fenceSet {
	if p := ms.fences.Load(); p != nil {
		return *p
	}
	return nil
}

// FencedRow returns the WrongRange answer for row if a move has fenced
// it away from this RG, else nil.
func (s *Store) FencedRow(row []byte) error {
	if f, ok := s.move.current().find(ring.Hash(row)); ok {
		return &WrongRangeError{Group: f.To, RingVersion: f.RingVersion}
	}
	return nil
}

// Fences returns the fence set as applied.
func (s *Store) Fences() []Fence { return append([]Fence(nil), s.move.current()...) }

// VersionFloor returns the version floor as applied. It belongs to the
// apply goroutine: call it between Applies (tests).
func (s *Store) VersionFloor() uint64 { return s.move.floor }

// moveApply is an applier's view of the move state: this Apply's changes
// until its batch commits.
type moveApply struct {
	fences        fenceSet
	floor         uint64
	fencesChanged bool
	floorChanged  bool
}

func (s *Store) moveApply() moveApply {
	return moveApply{fences: s.move.current(), floor: s.move.floor}
}

// version is the version of a put applied at z.
func (ma *moveApply) version(z zab.Zxid) uint64 {
	if uint64(z) > ma.floor {
		return uint64(z)
	}
	ma.floor++
	ma.floorChanged = true
	return ma.floor
}

// persist adds the changed move state to the batch.
func (ma *moveApply) persist(b *pebble.Batch) error {
	if ma.fencesChanged {
		if err := b.Set(keyFences, ma.fences.encode(), nil); err != nil {
			return err
		}
	}
	if ma.floorChanged {
		if err := b.Set(keyVersionFloor, binary.BigEndian.AppendUint64(nil, ma.floor), nil); err != nil {
			return err
		}
	}
	return nil
}

// publish installs the state of a committed Apply.
func (s *Store) publishMove(ma *moveApply) {
	if ma.fencesChanged {
		fs := ma.fences
		s.move.fences.Store(&fs)
	}
	s.move.floor = ma.floor
}

// fenced answers a row write whose row a move has fenced: WrongRange,
// with nothing applied or recorded (a retry in the target RG applies it).
func (a *applier) fenced(m *Mutation) (Result, bool) {
	switch m.Op {
	case OpPut, OpDelete, OpCheckAndPut, OpCheckAndDelete:
	default:
		return Result{}, false
	}
	f, ok := a.mv.fences.find(ring.Hash(m.Row))
	if !ok {
		return Result{}, false
	}
	return Result{Err: &WrongRangeError{Group: f.To, RingVersion: f.RingVersion}}, true
}

func (a *applier) applyMove(m *Mutation) (Result, error) {
	mv := m.Move
	switch m.Op {
	case OpFence:
		// A move sealed here (aborted, or finished into this RG) must not
		// fence again: a stale mover's fence would outlive the move.
		if done, err := a.sealed(mv.ID); err != nil || done {
			return Result{Err: fmt.Errorf("move %x: %w", mv.ID, ErrMoveSealed)}, err
		}
		fs, err := a.mv.fences.add(mv.Range, Fence{Move: mv.ID, To: mv.To, RingVersion: mv.RingVersion})
		if err != nil {
			return Result{Err: invalidf("%v", err)}, nil
		}
		a.mv.fences = fs
		a.mv.fencesChanged = true
		return Result{Succeeded: true}, nil
	case OpIngest:
		return a.ingest(mv)
	case OpSeal:
		if err := a.b.Set(sealedKey(mv.ID), nil, nil); err != nil {
			return Result{}, err
		}
		a.mv.fences = a.mv.fences.lift(mv.Range)
		a.mv.fencesChanged = true
		return Result{Succeeded: true}, nil
	case OpDropRange:
		if !a.mv.fences.covers(mv.Range, mv.ID) {
			return Result{Err: fmt.Errorf("drop %v: %w", mv.Range, ErrNotFenced)}, nil
		}
		return a.dropRange(mv.Range)
	}
	return Result{Err: invalidf("operation %v", m.Op)}, nil
}

func (a *applier) sealed(move uint64) (bool, error) {
	_, c, err := a.b.Get(sealedKey(move))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.Close()
	return true, nil
}

// ingest writes a move's cells with their versions and merges its
// deduplication records. Writing the same cells again changes nothing,
// so a mover may resend a chunk. Chunks read at different times may
// bring a column more versions than its family keeps: each column
// written is trimmed as a put trims it, so that every column holds at
// most its family's versions (trimColumns relies on it).
func (a *applier) ingest(mv *MoveOp) (Result, error) {
	if done, err := a.sealed(mv.ID); err != nil || done {
		return Result{Err: fmt.Errorf("move %x: %w", mv.ID, ErrMoveSealed)}, err
	}
	type target struct {
		tid, fid uint32
		keep     int
		oneKey   bool
	}
	ts := make([]target, len(mv.Cells))
	for i, c := range mv.Cells {
		t, ok := a.tables[c.Table]
		if !ok {
			return Result{Err: fmt.Errorf("table %q: %w", c.Table, ErrNoTable)}, nil
		}
		f := t.family(c.Family)
		if f == nil {
			return Result{Err: fmt.Errorf("family %q of table %q: %w", c.Family, c.Table, ErrNoFamily)}, nil
		}
		ts[i] = target{t.id, f.id, int(max(f.maxVersions, 1)), f.oneKey}
	}
	for i, c := range mv.Cells {
		if ts[i].oneKey {
			if err := a.ingestOneKey(columnPrefix(ts[i].tid, c.Row, ts[i].fid, c.Qualifier), c.Version, c.Value); err != nil {
				return Result{}, err
			}
		} else if err := a.b.Set(cellKey(ts[i].tid, c.Row, ts[i].fid, c.Qualifier, c.Version), c.Value, nil); err != nil {
			return Result{}, err
		}
		if c.Version > a.mv.floor {
			a.mv.floor = c.Version
			a.mv.floorChanged = true
		}
	}
	trimmed := make(map[string]bool, len(mv.Cells))
	for i, c := range mv.Cells {
		if ts[i].oneKey {
			continue // ingestOneKey kept the newer version alone
		}
		cp := columnPrefix(ts[i].tid, c.Row, ts[i].fid, c.Qualifier)
		if trimmed[string(cp)] {
			continue
		}
		trimmed[string(cp)] = true
		if err := a.trimColumns(familyPrefix(ts[i].tid, c.Row, ts[i].fid), [][]byte{cp}, ts[i].keep); err != nil {
			return Result{}, err
		}
	}
	for _, c := range mv.Clients {
		if err := a.mergeClient(c); err != nil {
			return Result{}, err
		}
	}
	return Result{Succeeded: true}, nil
}

// ingestOneKey writes a moved version of a one-key column (key, its
// column prefix) unless the column holds that version or a newer one: a
// resent chunk, or a chunk read before a later one, changes nothing.
func (a *applier) ingestOneKey(key []byte, version uint64, value []byte) error {
	old, closer, err := a.b.Get(key)
	switch {
	case err == pebble.ErrNotFound:
	case err != nil:
		return err
	default:
		have, _, err := splitOneKeyValue(old)
		closer.Close()
		if err != nil {
			return err
		}
		if have >= version {
			return nil
		}
	}
	return a.b.Set(key, oneKeyValue(nil, version, value), nil)
}

// mergeClient adopts a copied deduplication record when its sequence is
// above the one held here (a lane writes one request at a time, so the
// higher sequence is the client's later write).
func (a *applier) mergeClient(c MovedClient) error {
	rec, err := decodeClientRecord(c.Record)
	if err != nil {
		return err
	}
	old, ok := a.lookupClient(c.Client)
	if ok && old.seq >= rec.seq {
		return nil
	}
	if ok {
		if err := a.b.Delete(clientAgeKey(old.res.Zxid, c.Client), nil); err != nil {
			return err
		}
	} else {
		a.clients++
	}
	if err := a.b.Set(clientKey(c.Client), c.Record, nil); err != nil {
		return err
	}
	a.setClient(c.Client, &rec)
	if err := a.b.Set(clientAgeKey(rec.res.Zxid, c.Client), nil, nil); err != nil {
		return err
	}
	for a.clients > maxClients {
		if err := a.forgetOldestClient(); err != nil {
			return err
		}
	}
	return nil
}

// dropRange deletes every cell of every row hashing into r, row by row
// (a row out of r is skipped with one seek).
func (a *applier) dropRange(r ring.Range) (Result, error) {
	lo := []byte{prefixData}
	it, err := a.b.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return Result{}, err
	}
	var rows [][2][]byte
	for ok := it.First(); ok; {
		p, err := decodeCellKey(it.Key())
		if err != nil {
			it.Close()
			return Result{}, err
		}
		rp := rowPrefix(p.table, p.row)
		end := escapedEnd(rp)
		if r.Contains(ring.Hash(p.row)) {
			rows = append(rows, [2][]byte{rp, end})
		}
		ok = it.SeekGE(end)
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Result{}, err
	}
	for _, rr := range rows {
		if err := a.b.DeleteRange(rr[0], rr[1], nil); err != nil {
			return Result{}, err
		}
	}
	return Result{Succeeded: true}, nil
}
