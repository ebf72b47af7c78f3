package kv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/zab"
)

// TestReadRowsSeeksMatchSteps: readRows, which moves its iterator by
// seeks past columns and rows it is done with, returns what a plain walk
// of every key in the range returns (refReadRows), over random puts and
// deletes to a few hot rows (so columns carry many trimmed versions) and
// random read options: versions, as-of, selected families and columns,
// qualifier bounds, cell and row limits, a row filter.
func TestReadRowsSeeksMatchSteps(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	rng := rand.New(rand.NewPCG(7, 11))
	z := zab.Zxid(1)
	mustApply(t, s, entry(t, z, createTable("t", FamilySpec{Name: "a", MaxVersions: 3}, FamilySpec{Name: "b"}, FamilySpec{Name: "c", MaxVersions: 2})))
	rows := []string{"r0", "r1", "r1\x00", "r2", "r3\xff"}
	quals := []string{"", "q", "q\x00", "q1", "zz"}
	fams := []string{"a", "b", "c"}
	var zxids []zab.Zxid
	for range 3000 {
		z++
		zxids = append(zxids, z)
		row := rows[rng.IntN(len(rows))]
		switch rng.IntN(20) {
		case 0:
			mustApply(t, s, entry(t, z, &Mutation{Op: OpDelete, Table: "t", Row: []byte(row), Delete: Delete{Scope: ScopeColumn, Family: fams[rng.IntN(3)], Qualifier: []byte(quals[rng.IntN(len(quals))])}}))
		case 1:
			mustApply(t, s, entry(t, z, &Mutation{Op: OpDelete, Table: "t", Row: []byte(row), Delete: Delete{Scope: ScopeFamily, Family: fams[rng.IntN(3)]}}))
		default:
			var cells []string
			for range 1 + rng.IntN(6) {
				cells = append(cells, fams[rng.IntN(3)], quals[rng.IntN(len(quals))], fmt.Sprintf("v%d", z))
			}
			mustApply(t, s, entry(t, z, put("t", row, cells...)))
		}
	}
	randOptions := func() (ReadOptions, func(row []byte) bool, int) {
		var o ReadOptions
		o.MaxVersions = rng.IntN(4)
		if rng.IntN(3) == 0 {
			o.AsOf = uint64(zxids[rng.IntN(len(zxids))])
		}
		switch rng.IntN(4) {
		case 0:
			o.Columns = []Column{{Family: fams[rng.IntN(3)]}}
		case 1:
			o.Columns = []Column{{Family: "a", Qualifier: []byte(quals[rng.IntN(len(quals))]), HasQualifier: true}, {Family: "c"}}
		}
		if rng.IntN(4) == 0 {
			o.QualifierFrom = []byte(quals[rng.IntN(len(quals))])
			o.QualifierTo = []byte(quals[rng.IntN(len(quals))])
		}
		if rng.IntN(4) == 0 {
			o.CellLimit = 1 + rng.IntN(5)
		}
		var keep func([]byte) bool
		if rng.IntN(4) == 0 {
			skip := rows[rng.IntN(len(rows))]
			keep = func(r []byte) bool { return string(r) != skip }
		}
		return o, keep, rng.IntN(4)
	}
	for i := range 2000 {
		o, keep, limit := randOptions()
		v, done, err := s.openView("t")
		if err != nil {
			t.Fatal(err)
		}
		sel, err := compile(v.t, o)
		if err != nil {
			done()
			t.Fatal(err)
		}
		sel.keep = keep
		lo, hi := tablePrefix(v.t.id), prefixEnd(tablePrefix(v.t.id))
		if i%2 == 0 { // one row, as Get reads it
			lo = rowPrefix(v.t.id, []byte(rows[rng.IntN(len(rows))]))
			hi = escapedEnd(lo)
		}
		got, err := readRows(v, sel, lo, hi, limit)
		if err != nil {
			done()
			t.Fatal(err)
		}
		want, err := refReadRows(s, v, sel, lo, hi, limit)
		done()
		if err != nil {
			t.Fatal(err)
		}
		if g, w := rowsString(got), rowsString(want); g != w {
			t.Fatalf("read %d (%+v, limit %d):\n got %s\nwant %s", i, o, limit, g, w)
		}
	}
}

// refReadRows is readRows by definition: every key of [lo, hi) in order,
// First then Next, through an iterator of its own.
func refReadRows(s *Store, v *view, sel *selector, lo, hi []byte, limit int) ([]Row, error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	it.SetBounds(lo, hi)
	var rows []Row
	var cur *Row
	var lastCol []byte
	versions := 0
	for ok := it.First(); ok; ok = it.Next() {
		p, err := decodeCellKey(it.Key())
		if err != nil {
			return nil, err
		}
		if cur == nil || !bytes.Equal(cur.Key, p.row) {
			if cur != nil && len(cur.Cells) > 0 {
				rows = append(rows, *cur)
			}
			cur = &Row{Key: p.row}
		}
		if limit > 0 && len(rows) >= limit {
			return rows, nil
		}
		if sel.keep != nil && !sel.keep(p.row) {
			continue
		}
		f := v.t.familyByID(p.family)
		if f == nil || !sel.wants(p.family, p.qual) || (sel.o.AsOf != 0 && p.version > sel.o.AsOf) {
			continue
		}
		if sel.o.CellLimit > 0 && len(cur.Cells) >= sel.o.CellLimit {
			continue
		}
		col := it.Key()[:len(it.Key())-8]
		if !bytes.Equal(col, lastCol) {
			lastCol, versions = bytes.Clone(col), 0
		}
		if versions >= sel.o.MaxVersions {
			continue
		}
		versions++
		cur.Cells = append(cur.Cells, CellVersion{Family: f.name, Qualifier: p.qual, Version: p.version, Value: bytes.Clone(it.Value())})
	}
	if cur != nil && len(cur.Cells) > 0 && (limit <= 0 || len(rows) < limit) {
		rows = append(rows, *cur)
	}
	return rows, it.Error()
}

func rowsString(rows []Row) string {
	var b bytes.Buffer
	for _, r := range rows {
		fmt.Fprintf(&b, "[%q: %s] ", r.Key, cellsString(r.Cells))
	}
	return b.String()
}
