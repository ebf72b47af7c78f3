package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/corral-db/corral/zab"
)

// Apply applies committed entries in zxid order, skipping any at or below
// Applied (a replay after restart). All of them go into one indexed pebble
// batch (so a mutation reads what an earlier one in the same call wrote)
// together with the new applied zxid, committed without sync: the zab log
// is the write-ahead log. A mutation that fails (a missing table, a failed
// condition) is a result, the same on every replica; only a pebble error
// is returned.
func (s *Store) Apply(ents []zab.Entry) error {
	if s.db == nil {
		return errClosed
	}
	applied := s.Applied()
	var ms []*Mutation
	var zxids []zab.Zxid
	last := applied
	for _, e := range ents {
		if e.Zxid <= last {
			continue
		}
		last = e.Zxid
		if len(e.Data) == 0 {
			continue // an entry of the driver's own (a new epoch's no-op)
		}
		m, err := DecodeMutation(e.Data)
		if err != nil {
			// Every replica decodes the same bytes the same way; the
			// proposer validated them, so this is not ours to stop on.
			s.log.Warn("kv: undecodable entry skipped", "zxid", e.Zxid, "err", err)
			continue
		}
		ms, zxids = append(ms, m), append(zxids, e.Zxid)
	}
	if last == applied {
		return nil
	}
	// A batch reads what it wrote only through its index, which costs an
	// insert per key: a plain batch when no mutation reads (readsBatch).
	var b *pebble.Batch
	if s.readsBatch(ms) {
		b = s.db.NewIndexedBatch()
	} else {
		b = s.db.NewBatch()
	}
	a := &applier{s: s, b: b, tables: s.tables, nextID: s.nextID, clients: s.clients, mv: s.moveApply()}
	defer a.b.Close()
	defer a.closeIter() // before the batch's Close
	type done struct {
		reqID uint64
		res   Result
	}
	var results []done
	for i, m := range ms {
		z := zxids[i]
		var err error
		if res, ok := a.fenced(m); ok {
			res.Zxid = z
			results = append(results, done{m.ReqID, res})
			continue
		}
		var old *clientRecord
		if m.Client != 0 {
			var res Result
			var dup bool
			res, dup, old, err = a.dedupe(m, z)
			if err != nil {
				return fmt.Errorf("kv: apply %v at %v: %w", m.Op, z, err)
			}
			if dup {
				results = append(results, done{m.ReqID, res})
				continue
			}
		}
		w := a.touch(m)
		res, err := a.apply(m, z)
		if err != nil {
			return fmt.Errorf("kv: apply %v at %v: %w", m.Op, z, err)
		}
		if w >= 0 {
			a.touched[w].res = res
		}
		res.Zxid = z
		if m.Client != 0 {
			if err := a.remember(m, z, res, old); err != nil {
				return fmt.Errorf("kv: apply %v at %v: %w", m.Op, z, err)
			}
		}
		results = append(results, done{m.ReqID, res})
	}
	if err := a.mv.persist(a.b); err != nil {
		return err
	}
	rec := last
	if s.opts.Breaks.AppliedLags {
		rec = applied
	}
	if err := a.b.Set(keyApplied, binary.BigEndian.AppendUint64(nil, uint64(rec)), nil); err != nil {
		return err
	}
	if a.nextID != s.nextID {
		if err := a.b.Set(keyNextID, binary.BigEndian.AppendUint64(nil, uint64(a.nextID)), nil); err != nil {
			return err
		}
	}
	wo := pebble.NoSync
	if s.opts.PebbleWAL {
		wo = pebble.Sync
	}
	s.mu.Lock()
	// The row cache forgets what this batch writes before the batch is
	// visible (rowcache.go).
	s.seq++
	if a.clearRows {
		s.rows.clear(s.seq)
	} else {
		s.rows.write(s.seq, a.touched)
	}
	err := a.b.Commit(wo)
	if err == nil {
		s.tables = a.tables
		s.nextID = a.nextID
		s.clients = a.clients
		a.commitClients()
		s.publishMove(&a.mv)
		s.applied.Store(uint64(last))
	}
	s.mu.Unlock()
	if err == nil && s.opts.PebbleWAL {
		s.advanceDurable(last)
	}
	if err != nil {
		return fmt.Errorf("kv: commit: %w", err)
	}
	for _, d := range results {
		if d.reqID != 0 {
			s.results.deliver(d.reqID, d.res)
		}
	}
	return nil
}

// readsBatch reports whether applying ms may read the
// batch they are written to, which then needs its index: a conditional
// write, a put to a versioned family (it seeks the version it
// displaces), a column delete (it reads the column's versions), a move's
// mutations, a table unknown before this Apply, or a deduplication table
// that may overflow (evicting reads its age index). A one-key put, a row
// or family delete and a schema change only write.
func (s *Store) readsBatch(ms []*Mutation) bool {
	if s.clients+len(ms) > maxClients {
		return true
	}
	for _, m := range ms {
		switch m.Op {
		case OpPut:
			t, ok := s.tables[m.Table]
			if !ok {
				return true
			}
			for _, c := range m.Cells {
				if f := t.family(c.Family); f == nil || !f.oneKey {
					return true
				}
			}
		case OpDelete:
			if m.Delete.Scope == ScopeColumn {
				return true
			}
		case OpCreateTable, OpDropTable:
		default:
			return true
		}
	}
	return false
}

// applier applies the mutations of one Apply call to one batch.
type applier struct {
	s      *Store
	b      *pebble.Batch
	tables map[string]*table
	copied bool // tables is this applier's own copy
	nextID uint32
	// clients counts the deduplication table's entries (dedupe.go).
	clients int
	// pending is this Apply's changes to the client cache, by client id
	// (nil: forgotten); folded into Store.clientRecs at commit.
	pending map[uint64]*clientRecord
	// it is one iterator over the batch, reused by the trims of this
	// Apply (building one per put costs more than the seek it serves).
	it *pebble.Iterator
	// mv is this Apply's view of the range-move state (moveapply.go).
	mv moveApply
	// touched are the row mutations of this Apply, in order, for the
	// row cache; clearRows, that it may write rows it does not name (a
	// schema change or a range move): the whole cache goes.
	touched   []rowWrite
	clearRows bool
}

// touch records m for the row cache before it applies (a dropped table
// is gone from a.tables after) and returns its index in a.touched, or -1.
func (a *applier) touch(m *Mutation) int {
	switch m.Op {
	case OpPut, OpDelete, OpCheckAndPut, OpCheckAndDelete:
		if t, ok := a.tables[m.Table]; ok {
			a.touched = append(a.touched, rowWrite{key: rowCacheKey(t.id, m.Row), t: t, m: m})
			return len(a.touched) - 1
		}
	default:
		a.clearRows = true
	}
	return -1
}

// iter returns the applier's iterator bounded to [lo, hi), its view of
// the batch refreshed (the DB under it changes only through this batch).
// The caller leaves lo and hi unchanged and does not close it.
func (a *applier) iter(lo, hi []byte) (*pebble.Iterator, error) {
	o := &pebble.IterOptions{LowerBound: lo, UpperBound: hi}
	if a.it == nil {
		it, err := a.b.NewIter(o)
		if err != nil {
			return nil, err
		}
		a.it = it
		return it, nil
	}
	a.it.SetOptions(o)
	return a.it, nil
}

func (a *applier) closeIter() {
	if a.it != nil {
		a.it.Close()
		a.it = nil
	}
}

func (a *applier) apply(m *Mutation, z zab.Zxid) (Result, error) {
	if m.Op.isMove() {
		return a.applyMove(m)
	}
	switch m.Op {
	case OpCreateTable:
		return a.createTable(m)
	case OpDropTable:
		return a.dropTable(m)
	}
	t, ok := a.tables[m.Table]
	if !ok {
		return Result{Err: fmt.Errorf("table %q: %w", m.Table, ErrNoTable)}, nil
	}
	if m.Op == OpCheckAndPut || m.Op == OpCheckAndDelete {
		f := t.family(m.Cond.Family)
		if f == nil {
			return Result{Err: fmt.Errorf("family %q of table %q: %w", m.Cond.Family, m.Table, ErrNoFamily)}, nil
		}
		v, found, err := newestValue(a.b, t.id, m.Row, f.id, m.Cond.Qualifier)
		if err != nil {
			return Result{}, err
		}
		if m.Cond.Absent == found || (!m.Cond.Absent && string(v) != string(m.Cond.Value)) {
			return Result{Succeeded: false}, nil
		}
	}
	switch m.Op {
	case OpPut, OpCheckAndPut:
		return a.put(t, m, a.mv.version(z))
	default:
		return a.delete(t, m)
	}
}

func (a *applier) put(t *table, m *Mutation, version uint64) (Result, error) {
	rp := rowPrefix(t.id, m.Row)
	cells := make([]putCell, len(m.Cells))
	// slab holds the keys, vslab one-key columns' values (version first).
	var slab, vslab []byte
	for i, c := range m.Cells {
		f := t.family(c.Family)
		if f == nil {
			return Result{Err: fmt.Errorf("family %q of table %q: %w", c.Family, t.name, ErrNoFamily)}, nil
		}
		n := len(slab)
		slab = appendEscaped(binary.BigEndian.AppendUint32(append(slab, rp...), f.id), c.Qualifier)
		value := c.Value
		if f.oneKey {
			if vslab == nil {
				n := 8 * len(m.Cells)
				for _, c := range m.Cells {
					n += len(c.Value)
				}
				vslab = make([]byte, 0, n)
			}
			nv := len(vslab)
			vslab = oneKeyValue(vslab, version, c.Value)
			value = vslab[nv:len(vslab):len(vslab)]
		} else {
			slab = binary.BigEndian.AppendUint64(slab, ^version)
		}
		cells[i] = putCell{key: slab[n:len(slab):len(slab)], value: value, f: f}
	}
	// Key order, which groups the cells by family and column; a column
	// written twice keeps its last value, as two Sets of one key would.
	slices.SortStableFunc(cells, func(x, y putCell) int { return bytes.Compare(x.key, y.key) })
	w := 0
	for i := range cells {
		if w > 0 && bytes.Equal(cells[w-1].key, cells[i].key) {
			w--
		}
		cells[w] = cells[i]
		w++
	}
	cells = cells[:w]
	fpLen := len(rp) + 4
	for lo := 0; lo < len(cells); {
		hi := lo + 1
		for hi < len(cells) && cells[hi].f == cells[lo].f {
			hi++
		}
		if cells[lo].f.oneKey {
			// Each column's one key is overwritten: nothing to trim.
			for _, c := range cells[lo:hi] {
				if err := a.b.Set(c.key, c.value, nil); err != nil {
					return Result{}, err
				}
			}
			lo = hi
			continue
		}
		fp := cells[lo].key[:fpLen]
		if err := a.putFamily(fp, cells[lo:hi], version, int(max(cells[lo].f.maxVersions, 1))); err != nil {
			return Result{}, err
		}
		lo = hi
	}
	return Result{Succeeded: true, Version: version}, nil
}

// putCell is one cell of a put: its key (the column prefix, then the
// version unless the family is one-key), its stored value and its family.
type putCell struct {
	key, value []byte
	f          *family
}

// putFamily writes one family's cells of a put (cells in key order, all
// of version) and trims each column to keep versions with a point delete
// of the one the new version displaces. Every put and ingest trims, so a
// column holds at most keep versions before this one: the keep-th
// existing version, if any, is the only one to delete, found with at
// most keep seeks, before the new version is written. A range tombstone
// per put would pile up in the memtable, and every later iterator and
// Get re-fragment all of them.
//
// The family's iterator (one per Apply, applier.iter) only ever seeks
// forward (SeekGE to a column, or to the successor of the key it stands
// on, never Next): pebble then positions each level from where it stands
// when it can (TrySeekUsingNext) instead of searching its index again. A
// record's columns sit side by side, so after the first column the
// others are mostly in the blocks already positioned; a full seek of
// every column through every level was most of a put's CPU.
//
// The batch receives each column's new version and then the version it
// displaces, which sorts right after it: one put's writes arrive in key
// order, so the memtable inserts each from where the last one landed.
func (a *applier) putFamily(fp []byte, cells []putCell, version uint64, keep int) error {
	it, err := a.iter(fp, prefixEnd(fp))
	if err != nil {
		return err
	}
	// succ holds the keys sought and the displaced keys, appended and
	// never overwritten (a grown slab leaves earlier keys in the old
	// array).
	var succ []byte
	more := true // the family may have keys at or after the next column
	for _, c := range cells {
		cp := c.key[:len(c.key)-8]
		var old []byte
		ok := more && it.SeekGE(cp)
		for n := 0; ok && bytes.HasPrefix(it.Key(), cp); {
			k := it.Key()
			// An escaped qualifier is no other's prefix: the rest of k
			// is its version.
			if len(k) != len(cp)+8 {
				return errBadKey
			}
			if ^binary.BigEndian.Uint64(k[len(cp):]) < version {
				if n == keep-1 {
					succ, old = appendKey(succ, k, 0)
					break
				}
				n++
			}
			var next []byte
			succ, next = appendKey(succ, k, 1)
			ok = it.SeekGE(next)
		}
		if err := it.Error(); err != nil {
			return err
		}
		if !ok {
			more = false // nothing left in the family at or after cp
		}
		if err := a.b.Set(c.key, c.value, nil); err != nil {
			return err
		}
		if old != nil {
			if err := a.b.Delete(old, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// trimColumns removes the versions beyond keep of the columns cols (their
// prefixes, within the family prefix fp) with point deletes, reading each
// column to its end: what an ingest that may add several versions of a
// column needs (a put uses putFamily). The iterator only seeks forward,
// as putFamily's does.
func (a *applier) trimColumns(fp []byte, cols [][]byte, keep int) error {
	slices.SortFunc(cols, bytes.Compare)
	cols = slices.CompactFunc(cols, bytes.Equal)
	it, err := a.iter(fp, prefixEnd(fp))
	if err != nil {
		return err
	}
	var old [][]byte
	var succ []byte
	for _, cp := range cols {
		ok := it.SeekGE(cp)
		for n := 0; ok && bytes.HasPrefix(it.Key(), cp); n++ {
			if n >= keep {
				old = append(old, bytes.Clone(it.Key()))
			}
			var next []byte
			succ, next = appendKey(succ, it.Key(), 1)
			ok = it.SeekGE(next)
		}
		if err := it.Error(); err != nil {
			return err
		}
		if !ok {
			break // no keys left in the family: nothing more to trim
		}
	}
	for _, k := range old {
		if err := a.b.Delete(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// appendKey appends k and extra zero bytes to slab and returns the slab
// and the copy (its capacity capped): with extra 1, k's immediate
// successor. Callers keep appending to one slab and never overwrite it
// (a grown slab leaves earlier keys in the old array, still valid).
func appendKey(slab, k []byte, extra int) ([]byte, []byte) {
	if cap(slab)-len(slab) < len(k)+extra {
		slab = make([]byte, 0, max(512, 2*cap(slab), len(k)+extra))
	}
	n := len(slab)
	slab = append(slab, k...)
	for range extra {
		slab = append(slab, 0)
	}
	return slab, slab[n:len(slab):len(slab)]
}

// deleteVersions point-deletes the versions of the column whose prefix is
// lo, newest first, after the first keep of them.
func (a *applier) deleteVersions(lo []byte, keep int) error {
	it, err := a.b.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: escapedEnd(lo)})
	if err != nil {
		return err
	}
	n := 0
	var old [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		if n >= keep {
			old = append(old, append([]byte(nil), it.Key()...))
		}
		n++
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// Deleting while the iterator is open would make the batch re-index
	// under it; collect first, then delete.
	for _, k := range old {
		if err := a.b.Delete(k, nil); err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) delete(t *table, m *Mutation) (Result, error) {
	var lo []byte
	switch m.Delete.Scope {
	case ScopeRow:
		lo = rowPrefix(t.id, m.Row)
	default:
		f := t.family(m.Delete.Family)
		if f == nil {
			return Result{Err: fmt.Errorf("family %q of table %q: %w", m.Delete.Family, t.name, ErrNoFamily)}, nil
		}
		if m.Delete.Scope == ScopeFamily {
			fp := familyPrefix(t.id, m.Row, f.id)
			if err := a.b.DeleteRange(fp, prefixEnd(fp), nil); err != nil {
				return Result{}, err
			}
			return Result{Succeeded: true}, nil
		}
		// A column holds at most its family's MaxVersions versions:
		// point deletes, no range tombstone.
		if err := a.deleteVersions(columnPrefix(t.id, m.Row, f.id, m.Delete.Qualifier), 0); err != nil {
			return Result{}, err
		}
		return Result{Succeeded: true}, nil
	}
	if err := a.b.DeleteRange(lo, escapedEnd(lo), nil); err != nil {
		return Result{}, err
	}
	return Result{Succeeded: true}, nil
}

func (a *applier) ownTables() {
	if !a.copied {
		a.tables = maps.Clone(a.tables)
		if a.tables == nil {
			a.tables = make(map[string]*table)
		}
		a.copied = true
	}
}

func (a *applier) createTable(m *Mutation) (Result, error) {
	if _, ok := a.tables[m.Table]; ok {
		return Result{Err: fmt.Errorf("table %q: %w", m.Table, ErrTableExists)}, nil
	}
	t := newTable(m.Table, a.nextID)
	a.nextID++
	for _, f := range m.Families {
		t.addFamily(f.Name, a.nextID, max(f.MaxVersions, 1))
		a.nextID++
	}
	if err := a.b.Set(tableMetaKey(t.name), encodeTable(t), nil); err != nil {
		return Result{}, err
	}
	a.ownTables()
	a.tables[t.name] = t
	return Result{Succeeded: true}, nil
}

func (a *applier) dropTable(m *Mutation) (Result, error) {
	t, ok := a.tables[m.Table]
	if !ok {
		return Result{Err: fmt.Errorf("table %q: %w", m.Table, ErrNoTable)}, nil
	}
	if err := a.b.Delete(tableMetaKey(t.name), nil); err != nil {
		return Result{}, err
	}
	tp := tablePrefix(t.id)
	if err := a.b.DeleteRange(tp, prefixEnd(tp), nil); err != nil {
		return Result{}, err
	}
	a.ownTables()
	delete(a.tables, t.name)
	return Result{Succeeded: true}, nil
}

// iterSource is a pebble DB, batch or snapshot.
type iterSource interface {
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

// newestValue returns the newest version's value of one column.
func newestValue(src iterSource, tid uint32, row []byte, fid uint32, qual []byte) ([]byte, bool, error) {
	lo := columnPrefix(tid, row, fid, qual)
	it, err := src.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: escapedEnd(lo)})
	if err != nil {
		return nil, false, err
	}
	defer it.Close()
	if !it.First() {
		return nil, false, it.Error()
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return nil, false, err
	}
	if len(it.Key()) == len(lo) { // a one-key column (keys.go)
		if _, v, err = splitOneKeyValue(v); err != nil {
			return nil, false, err
		}
	}
	return append([]byte(nil), v...), true, nil
}

func sortTables(ts []TableInfo) {
	slices.SortFunc(ts, func(a, b TableInfo) int { return strings.Compare(a.Name, b.Name) })
}
