package kv

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/zab"
)

// rawCells walks every data key of s and returns, per family id, how
// many keys are one-key columns and how many are versioned.
func rawCells(t *testing.T, s *Store) (oneKey, versioned map[uint32]int) {
	t.Helper()
	oneKey, versioned = map[uint32]int{}, map[uint32]int{}
	lo := []byte{prefixData}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		p, err := decodeCellKey(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := p.cellValue(it.Value()); err != nil {
			t.Fatalf("key %x: %v", it.Key(), err)
		}
		if p.oneKey {
			oneKey[p.family]++
		} else {
			versioned[p.family]++
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return oneKey, versioned
}

// TestOneKeyLayout: a family that keeps one version stores each column
// under one key that its puts overwrite (no version in the key, no
// tombstone for the version displaced); a family that keeps more stays
// versioned. Reads see the same cells either way.
func TestOneKeyLayout(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{Name: "one"}, FamilySpec{Name: "three", MaxVersions: 3})))
	tb := s.tables["t"]
	one, three := tb.family("one"), tb.family("three")
	if !one.oneKey || three.oneKey {
		t.Fatalf("layouts: one %v, three %v", one.oneKey, three.oneKey)
	}
	z := zab.Zxid(2)
	for i := range 50 {
		mustApply(t, s, entry(t, z, put("t", "r", "one", "a", fmt.Sprint("a", i), "one", "b", fmt.Sprint("b", i), "three", "c", fmt.Sprint("c", i))))
		z++
	}
	got, err := s.Get("t", []byte("r"), ReadOptions{MaxVersions: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := "one:a@51=a49 one:b@51=b49 three:c@51=c49 three:c@50=c48 three:c@49=c47 "; cellsString(got) != want {
		t.Fatalf("got %q, want %q", cellsString(got), want)
	}
	got, _ = s.Get("t", []byte("r"), ReadOptions{AsOf: 50})
	if want := "three:c@50=c48 "; cellsString(got) != want {
		t.Fatalf("as of 50 got %q, want %q (a one-version family has nothing older)", cellsString(got), want)
	}
	ok1, ver1 := rawCells(t, s)
	if ok1[one.id] != 2 || ver1[one.id] != 0 || ok1[three.id] != 0 || ver1[three.id] != 3 {
		t.Fatalf("keys: one-key %v, versioned %v", ok1, ver1)
	}

	// Only the one-key family written: the flushed table holds no point
	// deletes (the versioned layout deletes each displaced version).
	mustApply(t, s, entry(t, z, createTable("u", FamilySpec{Name: "f"})))
	z++
	for i := range 100 {
		mustApply(t, s, entry(t, z, put("u", fmt.Sprint("r", i%7), "f", "q", fmt.Sprint(i))))
		z++
	}
	if _, err := s.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	levels, err := s.db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range levels {
		for _, sst := range l {
			// Table t's versioned family is in the first flush too.
			if sst.Properties.NumDeletions != 0 && bytes.Compare(sst.Smallest.UserKey, tablePrefix(s.tables["u"].id)) >= 0 {
				t.Errorf("sstable %v of table u holds %d deletions", sst.FileNum, sst.Properties.NumDeletions)
			}
		}
	}
	// Check-and-put compares a one-key column's value, not its stored form.
	cp := put("u", "r1", "f", "q", "new")
	cp.Op, cp.Cond = OpCheckAndPut, Condition{Family: "f", Qualifier: []byte("q"), Value: []byte("99")}
	if r := moveApplyResult(t, s, z, cp); !r.Succeeded {
		t.Fatalf("check-and-put against the stored value failed: %+v", r)
	}
}

// TestVersionedDescriptorStaysVersioned: a table whose descriptor has no
// layout flag (written before the one-key layout) keeps writing and
// reading its one-version families versioned, across a reopen.
func TestVersionedDescriptorStaysVersioned(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs, "db")
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{Name: "f"})))
	old := *s.tables["t"]
	old.oneKey = false
	if err := s.db.Set(tableMetaKey("t"), encodeTable(&old), pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openMem(t, fs, "db")
	defer s.Close()
	if tb := s.tables["t"]; tb.oneKey || tb.families[0].oneKey {
		t.Fatalf("reopened descriptor: %+v", tb)
	}
	for z := zab.Zxid(2); z < 12; z++ {
		mustApply(t, s, entry(t, z, put("t", "r", "f", "q", fmt.Sprint(uint64(z)))))
	}
	got, err := s.Get("t", []byte("r"), ReadOptions{MaxVersions: 10})
	if err != nil || cellsString(got) != "f:q@11=11 " {
		t.Fatalf("got %q %v", cellsString(got), err)
	}
	oneKey, versioned := rawCells(t, s)
	if len(oneKey) != 0 || versioned[s.tables["t"].families[0].id] != 1 {
		t.Fatalf("keys: one-key %v, versioned %v", oneKey, versioned)
	}
}

func TestTableDescriptorFlags(t *testing.T) {
	tb := newTable("t", 4)
	tb.addFamily("a", 5, 1)
	tb.addFamily("b", 6, 2)
	got, err := decodeTable("t", encodeTable(tb))
	if err != nil || !got.oneKey || !got.families[0].oneKey || got.families[1].oneKey {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	b := encodeTable(tb)
	for _, bad := range [][]byte{
		append(b[:len(b)-1:len(b)-1], 3),    // an unknown flag
		append(b[:len(b):len(b)], 0),        // bytes after the flags
		append(b[:len(b)-1:len(b)-1], 0x80), // a truncated varint
	} {
		if got, err := decodeTable("t", bad); err == nil {
			t.Fatalf("decoded %x as %+v", bad, got)
		}
	}
}

// TestIngestOneKey: moved versions of a one-key column, in chunks read at
// different times and resent, leave the newest; a later put replaces it.
func TestIngestOneKey(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "b")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{Name: "cf"})))
	row := rowIn(moveHalf, 0)
	cell := func(v uint64) MovedCell {
		return MovedCell{Table: "t", Family: "cf", Row: row, Qualifier: []byte("q"), Version: v, Value: []byte(fmt.Sprint("v", v))}
	}
	z := zab.Zxid(1)
	for _, cells := range [][]MovedCell{{cell(10), cell(9)}, {cell(12), cell(11)}, {cell(9)}, {cell(12)}} {
		z++
		if r := moveApplyResult(t, s, z, &Mutation{Op: OpIngest, Move: &MoveOp{ID: 3, Range: moveHalf, Cells: cells}}); r.Err != nil {
			t.Fatalf("ingest at %v: %v", z, r.Err)
		}
	}
	got, err := s.Get("t", row, ReadOptions{MaxVersions: 10})
	if err != nil || cellsString(got) != "cf:q@12=v12 " {
		t.Fatalf("after the ingests got %q %v", cellsString(got), err)
	}
	z = 1<<32 | 1
	mustApply(t, s, entry(t, z, put("t", string(row), "cf", "q", "new")))
	got, _ = s.Get("t", row, ReadOptions{MaxVersions: 10})
	if want := fmt.Sprintf("cf:q@%d=new ", uint64(z)); cellsString(got) != want {
		t.Fatalf("after a put got %q, want %q", cellsString(got), want)
	}
}

func TestOneKeyValueRejectsShort(t *testing.T) {
	p, err := decodeCellKey(columnPrefix(1, []byte("r"), 2, []byte("q")))
	if err != nil || !p.oneKey || string(p.qual) != "q" {
		t.Fatalf("decoded %+v %v", p, err)
	}
	if _, _, err := p.cellValue([]byte{1, 2, 3}); err == nil {
		t.Fatal("a 3-byte one-key value decoded")
	}
	v, val, err := p.cellValue(oneKeyValue(nil, 77, []byte("x")))
	if err != nil || v != 77 || string(val) != "x" {
		t.Fatalf("round trip: %d %q %v", v, val, err)
	}
}

// TestReadsBatch: only mutations that never read the batch let Apply
// use a plain one; applying each kind works either way it is classed.
func TestReadsBatch(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{Name: "one"}, FamilySpec{Name: "three", MaxVersions: 3})))
	del := func(scope Scope) *Mutation {
		return &Mutation{Op: OpDelete, Table: "t", Row: []byte("r"), Delete: Delete{Scope: scope, Family: "one", Qualifier: []byte("a")}}
	}
	cond := put("t", "r", "one", "a", "y")
	cond.Op, cond.Cond = OpCheckAndPut, Condition{Family: "one", Qualifier: []byte("a"), Absent: true}
	for _, tc := range []struct {
		m     *Mutation
		reads bool
	}{
		{put("t", "r", "one", "a", "x"), false},
		{del(ScopeRow), false},
		{del(ScopeFamily), false},
		{createTable("u", FamilySpec{Name: "f"}), false},
		{&Mutation{Op: OpDropTable, Table: "u"}, false},
		{put("t", "r", "one", "a", "x", "three", "b", "x"), true},
		{put("nope", "r", "one", "a", "x"), true},
		{del(ScopeColumn), true},
		{cond, true},
	} {
		if got := s.readsBatch([]*Mutation{tc.m}); got != tc.reads {
			t.Errorf("%v %+v: reads %v, want %v", tc.m.Op, tc.m, got, tc.reads)
		}
	}
	z := zab.Zxid(2)
	for _, m := range []*Mutation{put("t", "r", "one", "a", "x"), del(ScopeColumn), put("t", "r", "three", "b", "x"), cond, del(ScopeRow)} {
		mustApply(t, s, entry(t, z, m))
		z++
	}
	old := maxClients
	maxClients = 1
	defer func() { maxClients = old }()
	if !s.readsBatch([]*Mutation{put("t", "r", "one", "a", "x"), put("t", "s", "one", "a", "x")}) {
		t.Error("two writes that may overflow a table of one client: a plain batch")
	}
}
