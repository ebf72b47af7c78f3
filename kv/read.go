package kv

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Column selects cells of a read: one family, or with HasQualifier one
// column of it.
type Column struct {
	Family       string
	Qualifier    []byte
	HasQualifier bool
}

// ReadOptions select what a read returns of each row.
type ReadOptions struct {
	// Columns selects families or columns; none selects every family.
	Columns []Column
	// MaxVersions is how many versions of each column to return, newest
	// first; 0 means 1.
	MaxVersions int
	// AsOf, when non-zero, hides versions above it: the row as it was
	// once the entry with that zxid had applied (versions removed since
	// by a delete or by MaxVersions trimming are gone).
	AsOf uint64
	// QualifierFrom and QualifierTo bound the qualifiers returned
	// ([from, to); an empty To is unbounded): a scan within a row.
	QualifierFrom, QualifierTo []byte
	// CellLimit, when positive, stops a row after that many cells.
	CellLimit int
}

// CellVersion is one version of one cell as a read returns it.
type CellVersion struct {
	Family    string
	Qualifier []byte
	Version   uint64
	Value     []byte
}

// Row is a row and the cells a read selected of it.
type Row struct {
	Key   []byte
	Cells []CellVersion
}

// Limits on reads.
const (
	MaxScanRows   = 10000
	MaxGetColumns = 1000
	MaxMultiGet   = 1000
)

// view is a consistent read of one table: its descriptor and a pebble
// iterator opened together under mu. An iterator reads one point of the
// database whatever it is repositioned to (SetBounds), so a multi-row read
// needs no pebble snapshot.
type view struct {
	t  *table
	it *pebble.Iterator
	// seq is the store's commit count when the view was opened.
	seq uint64
}

func (s *Store) openView(name string) (*view, func(), error) {
	s.dbMu.RLock()
	if s.db == nil {
		s.dbMu.RUnlock()
		return nil, nil, errClosed
	}
	s.mu.RLock()
	t, ok := s.tables[name]
	var it *pebble.Iterator
	var err error
	if ok {
		it, err = s.db.NewIter(nil)
	}
	seq := s.seq
	s.mu.RUnlock()
	if !ok || err != nil {
		s.dbMu.RUnlock()
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("table %q: %w", name, ErrNoTable)
	}
	return &view{t: t, it: it, seq: seq}, func() {
		it.Close()
		s.dbMu.RUnlock()
	}, nil
}

// selector is a compiled ReadOptions for one table.
type selector struct {
	o ReadOptions
	// keep, if set, says which rows a scan returns (the rows of ranges
	// the RG owns, ShardedService.Scan); the others are skipped a row at
	// a time and do not count against the limit.
	keep     func(row []byte) bool
	families map[uint32]bool            // nil: all
	columns  map[uint32]map[string]bool // family -> qualifiers; a family absent here is whole
}

func compile(t *table, o ReadOptions) (*selector, error) {
	if o.MaxVersions < 0 || o.MaxVersions > MaxVersionsKept {
		return nil, invalidf("max versions %d", o.MaxVersions)
	}
	if len(o.Columns) > MaxGetColumns {
		return nil, invalidf("%d columns exceed %d", len(o.Columns), MaxGetColumns)
	}
	if o.MaxVersions == 0 {
		o.MaxVersions = 1
	}
	sel := &selector{o: o}
	if len(o.Columns) == 0 {
		return sel, nil
	}
	sel.families = make(map[uint32]bool)
	sel.columns = make(map[uint32]map[string]bool)
	whole := make(map[uint32]bool)
	for _, c := range o.Columns {
		f := t.family(c.Family)
		if f == nil {
			return nil, fmt.Errorf("family %q of table %q: %w", c.Family, t.name, ErrNoFamily)
		}
		if err := checkQualifier(c.Qualifier); err != nil {
			return nil, err
		}
		sel.families[f.id] = true
		if !c.HasQualifier {
			whole[f.id] = true
			continue
		}
		if sel.columns[f.id] == nil {
			sel.columns[f.id] = make(map[string]bool)
		}
		sel.columns[f.id][string(c.Qualifier)] = true
	}
	for id := range whole {
		delete(sel.columns, id)
	}
	return sel, nil
}

func (sel *selector) wants(fid uint32, qual []byte) bool {
	if sel.families != nil && !sel.families[fid] {
		return false
	}
	if qs, ok := sel.columns[fid]; ok && !qs[string(qual)] {
		return false
	}
	if len(sel.o.QualifierFrom) > 0 && bytes.Compare(qual, sel.o.QualifierFrom) < 0 {
		return false
	}
	if len(sel.o.QualifierTo) > 0 && bytes.Compare(qual, sel.o.QualifierTo) >= 0 {
		return false
	}
	return true
}

// readRows reads the rows of v in [lo, hi) (pebble keys), up to limit
// rows (0: no limit), repositioning v's iterator. Values and qualifiers
// are copied into one buffer per call, the row key decoded once per row.
//
// The iterator moves only by SeekGE: to lo, then to the end of a column
// once the read has the versions it wants of it (or wants none), to the
// end of a row it skips or has filled, else to the successor of the key
// it stands on (what Next would reach). A versioned column's older versions are
// point-deleted as puts displace them (apply.go, putFamily), and until a flush and a
// compaction drop them every one is a set and a tombstone the iterator
// would step over one by one with Next: with a hot row that was most of
// a read's CPU. A seek past the column skips them in one search. Seeking
// forward from where it stands lets pebble try a few steps first
// (TrySeekUsingNext) before searching each level again, so a successor
// seek costs about what Next does; a Next would end that chain.
func readRows(v *view, sel *selector, lo, hi []byte, limit int) ([]Row, error) {
	it := v.it
	it.SetBounds(lo, hi)
	var rows []Row
	var cur *Row
	var rowRaw []byte // cur's escaped key prefix (table, escaped row)
	var colFam uint32
	var colQual []byte
	var arena []byte
	// slab holds the keys sought, appended and never overwritten (a
	// grown slab leaves earlier keys in the old array).
	var slab []byte
	versions := 0
	full := false // cur reached CellLimit
	// A SeekGE, not First: the chain of forward seeks starts here.
	ok := it.SeekGE(lo)
	for ok {
		k := it.Key()
		var p cellKeyParts
		var err error
		if rowRaw != nil && len(k) > len(rowRaw) && bytes.Equal(k[:len(rowRaw)], rowRaw) {
			p, err = decodeCellKeyRestView(k[len(rowRaw):])
			p.row = cur.Key
		} else {
			p, err = decodeCellKey(k)
		}
		if err != nil {
			return nil, err
		}
		if cur == nil || !bytes.Equal(cur.Key, p.row) {
			if cur != nil && len(cur.Cells) > 0 {
				rows = append(rows, *cur)
				if limit > 0 && len(rows) >= limit {
					return rows, nil
				}
			}
			if sel.keep != nil && !sel.keep(p.row) {
				cur, rowRaw = nil, nil
				slab, ok = seekEnd(it, slab, k[:len(k)-len(p.rest)])
				continue
			}
			cur = &Row{Key: p.row}
			rowRaw = append(rowRaw[:0], k[:len(k)-len(p.rest)]...)
			versions, full = 0, false
		}
		if full {
			slab, ok = seekEnd(it, slab, rowRaw)
			continue
		}
		// col is the key's column prefix (all but a versioned key's version).
		col := p.columnOf(k)
		f := v.t.familyByID(p.family)
		if f == nil || !sel.wants(p.family, p.qual) {
			// A dropped family's leftovers, or not selected.
			slab, ok = seekEnd(it, slab, col)
			continue
		}
		stored, err := it.ValueAndErr()
		if err != nil {
			return nil, err
		}
		version, val, err := p.cellValue(stored)
		if err != nil {
			return nil, err
		}
		if sel.o.AsOf != 0 && version > sel.o.AsOf {
			slab, ok = seekSuccessor(it, slab, k)
			continue
		}
		if versions == 0 || colFam != p.family || !bytes.Equal(colQual, p.qual) {
			versions = 0 // a new column
		}
		if versions == 0 { // copy the column's qualifier once
			arena, colQual = appendCopy(arena, p.qual)
			colFam = p.family
		}
		versions++
		qual := colQual
		var value []byte
		arena, value = appendCopy(arena, val)
		if cur.Cells == nil {
			cur.Cells = make([]CellVersion, 0, 16)
		}
		cur.Cells = append(cur.Cells, CellVersion{Family: f.name, Qualifier: qual, Version: version, Value: value})
		switch {
		case sel.o.CellLimit > 0 && len(cur.Cells) >= sel.o.CellLimit:
			full = true
			slab, ok = seekEnd(it, slab, rowRaw)
		case versions >= sel.o.MaxVersions:
			slab, ok = seekEnd(it, slab, col)
		default:
			slab, ok = seekSuccessor(it, slab, k)
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if cur != nil && len(cur.Cells) > 0 {
		rows = append(rows, *cur)
	}
	return rows, nil
}

// seekEnd positions it at the first key after every key that begins with
// p, an escaped prefix ending in its terminator (a row's or a column's),
// the end's bytes kept in slab.
func seekEnd(it *pebble.Iterator, slab, p []byte) ([]byte, bool) {
	slab, end := appendKey(slab, p, 0)
	end[len(end)-1] = 0x02 // escapedEnd
	return slab, it.SeekGE(end)
}

// seekSuccessor positions it at the first key after k (where Next goes),
// the successor's bytes kept in slab.
func seekSuccessor(it *pebble.Iterator, slab, k []byte) ([]byte, bool) {
	slab, succ := appendKey(slab, k, 1) // k then a zero byte
	return slab, it.SeekGE(succ)
}

// readArenaMin is the least a read's copy buffer grows by: a 1 KiB row of
// ten columns takes one allocation.
const readArenaMin = 4 << 10

// appendCopy copies b to the end of arena and returns the arena and the
// copy (its capacity capped, so appending to it cannot reach the next).
// A copy made before the arena grew keeps the old array: still valid.
func appendCopy(arena, b []byte) ([]byte, []byte) {
	if cap(arena)-len(arena) < len(b) {
		arena = make([]byte, 0, max(readArenaMin, 2*cap(arena), len(b)))
	}
	n := len(arena)
	arena = append(arena, b...)
	return arena, arena[n:len(arena):len(arena)]
}

// Get reads one row. It returns ErrNotFound when the row has no selected
// cell.
func (s *Store) Get(tableName string, row []byte, o ReadOptions) ([]CellVersion, error) {
	if err := checkRow(row); err != nil {
		return nil, err
	}
	rows, err := s.readPoint(tableName, [][]byte{row}, o)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("row %q of table %q: %w", row, tableName, ErrNotFound)
	}
	return rows[0].Cells, nil
}

// plain reports whether o reads what the row cache keeps: every family,
// the newest version, no bounds.
func (o *ReadOptions) plain() bool {
	return len(o.Columns) == 0 && o.MaxVersions <= 1 && o.MaxVersions >= 0 && o.AsOf == 0 &&
		len(o.QualifierFrom) == 0 && len(o.QualifierTo) == 0 && o.CellLimit == 0
}

// readPoint reads the rows rowKeys (checked) of a table at one point: the
// row cache's hits and the pebble view for the misses are taken under
// one hold of mu, with no commit between them. A row with no selected
// cell is left out. The misses that plain reads read fill the cache
// before the view is released (rowcache.go).
func (s *Store) readPoint(tableName string, rowKeys [][]byte, o ReadOptions) ([]Row, error) {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.db == nil {
		return nil, errClosed
	}
	s.mu.RLock()
	t, ok := s.tables[tableName]
	if !ok {
		s.mu.RUnlock()
		return nil, fmt.Errorf("table %q: %w", tableName, ErrNoTable)
	}
	plain := o.plain()
	var cached [][]CellVersion
	misses := len(rowKeys)
	if plain {
		cached = make([][]CellVersion, len(rowKeys))
		for i, r := range rowKeys {
			var hit bool
			if cached[i], hit = s.rows.get(rowCacheKey(t.id, r)); hit {
				misses--
			}
		}
	}
	var it *pebble.Iterator
	var err error
	if misses > 0 || len(rowKeys) == 0 {
		it, err = s.db.NewIter(nil)
	}
	v := &view{t: t, it: it, seq: s.seq}
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	if it != nil {
		defer it.Close()
	}
	sel, err := compile(v.t, o)
	if err != nil {
		return nil, err
	}
	out := make([]Row, 0, len(rowKeys))
	for i, r := range rowKeys {
		if cached != nil && cached[i] != nil {
			out = append(out, Row{Key: r, Cells: cached[i]})
			continue
		}
		lo := rowPrefix(v.t.id, r)
		rows, err := readRows(v, sel, lo, escapedEnd(lo), 1)
		if err != nil {
			return nil, err
		}
		if plain && len(rows) == 1 {
			s.rows.fill(rowCacheKey(v.t.id, r), v.seq, rows[0].Cells)
		}
		out = append(out, rows...)
	}
	return out, nil
}

// Scan reads the rows in [from, to) in key order (an empty from starts at
// the table's first row, an empty to runs to its end), at most limit rows
// (0 or more than MaxScanRows means MaxScanRows). Rows with no selected
// cell are left out.
func (s *Store) Scan(tableName string, from, to []byte, limit int, o ReadOptions) ([]Row, error) {
	return s.ScanRows(tableName, from, to, limit, o, nil)
}

// ScanRows is Scan returning only the rows keep accepts (nil: all); the
// limit counts returned rows. A sharded node scans with keep saying
// whether the RG owns the row (ShardedService.Scan).
func (s *Store) ScanRows(tableName string, from, to []byte, limit int, o ReadOptions, keep func(row []byte) bool) ([]Row, error) {
	if len(from) > MaxRowLen || len(to) > MaxRowLen {
		return nil, invalidf("scan bound longer than %d bytes", MaxRowLen)
	}
	if limit <= 0 || limit > MaxScanRows {
		limit = MaxScanRows
	}
	v, done, err := s.openView(tableName)
	if err != nil {
		return nil, err
	}
	defer done()
	sel, err := compile(v.t, o)
	if err != nil {
		return nil, err
	}
	sel.keep = keep
	tp := tablePrefix(v.t.id)
	lo, hi := tp, prefixEnd(tp)
	if len(from) > 0 {
		lo = rowPrefix(v.t.id, from)
	}
	if len(to) > 0 {
		hi = rowPrefix(v.t.id, to)
	}
	if bytes.Compare(lo, hi) >= 0 {
		return nil, nil
	}
	return readRows(v, sel, lo, hi, limit)
}

// MultiGet reads several rows from one consistent view; rows not found
// are left out of the answer.
func (s *Store) MultiGet(tableName string, rowKeys [][]byte, o ReadOptions) ([]Row, error) {
	if len(rowKeys) > MaxMultiGet {
		return nil, invalidf("%d rows exceed %d", len(rowKeys), MaxMultiGet)
	}
	for _, r := range rowKeys {
		if err := checkRow(r); err != nil {
			return nil, err
		}
	}
	return s.readPoint(tableName, rowKeys, o)
}
