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
// snapshot taken together under mu.
type view struct {
	t    *table
	snap *pebble.Snapshot
}

func (s *Store) openView(name string) (*view, func(), error) {
	s.dbMu.RLock()
	if s.db == nil {
		s.dbMu.RUnlock()
		return nil, nil, errClosed
	}
	s.mu.RLock()
	t, ok := s.tables[name]
	var snap *pebble.Snapshot
	if ok {
		snap = s.db.NewSnapshot()
	}
	s.mu.RUnlock()
	if !ok {
		s.dbMu.RUnlock()
		return nil, nil, fmt.Errorf("table %q: %w", name, ErrNoTable)
	}
	return &view{t: t, snap: snap}, func() {
		snap.Close()
		s.dbMu.RUnlock()
	}, nil
}

// selector is a compiled ReadOptions for one table.
type selector struct {
	o        ReadOptions
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
// rows (0: no limit).
func readRows(v *view, sel *selector, lo, hi []byte, limit int) ([]Row, error) {
	it, err := v.snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var rows []Row
	var cur *Row
	var colFam uint32
	var colQual []byte
	versions := 0
	full := false // cur reached CellLimit
	for ok := it.First(); ok; ok = it.Next() {
		p, err := decodeCellKey(it.Key())
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
			cur = &Row{Key: p.row}
			colQual, versions, full = nil, 0, false
		}
		if full {
			continue
		}
		f := v.t.familyByID(p.family)
		if f == nil || !sel.wants(p.family, p.qual) {
			continue // a dropped family's leftovers, or not selected
		}
		if sel.o.AsOf != 0 && p.version > sel.o.AsOf {
			continue
		}
		if colQual == nil || colFam != p.family || !bytes.Equal(colQual, p.qual) {
			colFam, colQual, versions = p.family, p.qual, 0
		}
		if versions >= sel.o.MaxVersions {
			continue
		}
		versions++
		val, err := it.ValueAndErr()
		if err != nil {
			return nil, err
		}
		cur.Cells = append(cur.Cells, CellVersion{Family: f.name, Qualifier: p.qual, Version: p.version, Value: append([]byte(nil), val...)})
		if sel.o.CellLimit > 0 && len(cur.Cells) >= sel.o.CellLimit {
			full = true
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

// Get reads one row. It returns ErrNotFound when the row has no selected
// cell.
func (s *Store) Get(tableName string, row []byte, o ReadOptions) ([]CellVersion, error) {
	if err := checkRow(row); err != nil {
		return nil, err
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
	lo := rowPrefix(v.t.id, row)
	rows, err := readRows(v, sel, lo, escapedEnd(lo), 1)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("row %q of table %q: %w", row, tableName, ErrNotFound)
	}
	return rows[0].Cells, nil
}

// Scan reads the rows in [from, to) in key order (an empty from starts at
// the table's first row, an empty to runs to its end), at most limit rows
// (0 or more than MaxScanRows means MaxScanRows). Rows with no selected
// cell are left out.
func (s *Store) Scan(tableName string, from, to []byte, limit int, o ReadOptions) ([]Row, error) {
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
	v, done, err := s.openView(tableName)
	if err != nil {
		return nil, err
	}
	defer done()
	sel, err := compile(v.t, o)
	if err != nil {
		return nil, err
	}
	var out []Row
	for _, r := range rowKeys {
		lo := rowPrefix(v.t.id, r)
		rows, err := readRows(v, sel, lo, escapedEnd(lo), 1)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
