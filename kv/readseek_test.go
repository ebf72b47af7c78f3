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
	rows, quals, fams := hotRows, hotQuals, hotFams
	zxids, _ := hotWorkload(t, s, rng, nil)
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

var (
	hotRows  = []string{"r0", "r1", "r1\x00", "r2", "r3\xff"}
	hotQuals = []string{"", "q", "q\x00", "q1", "zz"}
	hotFams  = []string{"a", "b", "c"}
)

// hotWorkload creates table t (families a, b, c keeping 3, 1 and 2
// versions) and applies 3,000 random puts (up to six cells, a column
// sometimes twice) and column and family deletes to five rows. It
// returns the zxids applied and what the table must hold: row, family,
// qualifier to the kept versions, newest first. between, if set, runs
// after each mutation.
func hotWorkload(t *testing.T, s *Store, rng *rand.Rand, between func()) ([]zab.Zxid, map[[3]string][]CellVersion) {
	keep := map[string]int{"a": 3, "b": 1, "c": 2}
	model := make(map[[3]string][]CellVersion)
	z := zab.Zxid(1)
	mustApply(t, s, entry(t, z, createTable("t", FamilySpec{Name: "a", MaxVersions: 3}, FamilySpec{Name: "b"}, FamilySpec{Name: "c", MaxVersions: 2})))
	var zxids []zab.Zxid
	for range 3000 {
		z++
		zxids = append(zxids, z)
		row := hotRows[rng.IntN(len(hotRows))]
		switch rng.IntN(20) {
		case 0:
			f, q := hotFams[rng.IntN(3)], hotQuals[rng.IntN(len(hotQuals))]
			mustApply(t, s, entry(t, z, &Mutation{Op: OpDelete, Table: "t", Row: []byte(row), Delete: Delete{Scope: ScopeColumn, Family: f, Qualifier: []byte(q)}}))
			delete(model, [3]string{row, f, q})
		case 1:
			f := hotFams[rng.IntN(3)]
			mustApply(t, s, entry(t, z, &Mutation{Op: OpDelete, Table: "t", Row: []byte(row), Delete: Delete{Scope: ScopeFamily, Family: f}}))
			for _, q := range hotQuals {
				delete(model, [3]string{row, f, q})
			}
		default:
			var cells []string
			last := make(map[[3]string]string)
			for range 1 + rng.IntN(6) {
				f, q, v := hotFams[rng.IntN(3)], hotQuals[rng.IntN(len(hotQuals))], fmt.Sprintf("v%d.%d", z, rng.IntN(100))
				cells = append(cells, f, q, v)
				last[[3]string{row, f, q}] = v
			}
			mustApply(t, s, entry(t, z, put("t", row, cells...)))
			for k, v := range last {
				vs := append([]CellVersion{{Family: k[1], Qualifier: []byte(k[2]), Version: uint64(z), Value: []byte(v)}}, model[k]...)
				model[k] = vs[:min(len(vs), keep[k[1]])]
			}
		}
		if between != nil {
			between()
		}
	}
	return zxids, model
}

// TestPutsKeepTheNewestVersions: after hotWorkload, every column holds
// exactly its family's newest versions, the last value of a column
// written twice in one put, and nothing deleted.
func TestPutsKeepTheNewestVersions(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	_, model := hotWorkload(t, s, rand.New(rand.NewPCG(3, 5)), nil)
	got, err := s.Scan("t", nil, nil, 0, ReadOptions{MaxVersions: 10})
	if err != nil {
		t.Fatal(err)
	}
	var want []Row
	for _, r := range hotRows {
		row := Row{Key: []byte(r)}
		for _, f := range hotFams {
			for _, q := range []string{"", "q", "q\x00", "q1", "zz"} { // key order
				row.Cells = append(row.Cells, model[[3]string{r, f, q}]...)
			}
		}
		if len(row.Cells) > 0 {
			want = append(want, row)
		}
	}
	if g, w := rowsString(got), rowsString(want); g != w {
		t.Fatalf("table:\n got %s\nwant %s", g, w)
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
		version, value, err := p.cellValue(it.Value())
		if err != nil {
			return nil, err
		}
		f := v.t.familyByID(p.family)
		if f == nil || !sel.wants(p.family, p.qual) || (sel.o.AsOf != 0 && version > sel.o.AsOf) {
			continue
		}
		if sel.o.CellLimit > 0 && len(cur.Cells) >= sel.o.CellLimit {
			continue
		}
		col := p.columnOf(it.Key())
		if !bytes.Equal(col, lastCol) {
			lastCol, versions = bytes.Clone(col), 0
		}
		if versions >= sel.o.MaxVersions {
			continue
		}
		versions++
		cur.Cells = append(cur.Cells, CellVersion{Family: f.name, Qualifier: p.qual, Version: version, Value: bytes.Clone(value)})
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
