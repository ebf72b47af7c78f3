package kv

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/zab"
)

// TestRowCacheRefusesStaleFill: a read whose view was opened before a
// commit wrote its row does not leave the row's old cells in the cache
// (the commit's mark is newer than the view), and neither does one whose
// row's mark was evicted meanwhile (the floor). With the checks off the
// next Get returns the old value: the test sees a stale fill.
func TestRowCacheRefusesStaleFill(t *testing.T) {
	for _, stale := range []bool{false, true} {
		t.Run(fmt.Sprintf("stale=%v", stale), func(t *testing.T) {
			s := openMem(t, vfs.NewMem(), "db")
			defer s.Close()
			s.rows.stale = stale
			z := zab.Zxid(1)
			mustApply(t, s, entry(t, z, createTable("t", FamilySpec{Name: "f"})))
			z++
			mustApply(t, s, entry(t, z, put("t", "r", "f", "q", "old")))
			// A Get's steps, with a commit between its view and its fill.
			v, done, err := s.openView("t")
			if err != nil {
				t.Fatal(err)
			}
			sel, err := compile(v.t, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			lo := rowPrefix(v.t.id, []byte("r"))
			rows, err := readRows(v, sel, lo, escapedEnd(lo), 1)
			if err != nil || len(rows) != 1 {
				t.Fatalf("read: %v %v", rows, err)
			}
			z++
			mustApply(t, s, entry(t, z, put("t", "r", "f", "q", "new")))
			s.rows.fill(rowCacheKey(v.t.id, []byte("r")), v.seq, rows[0].Cells)
			done()
			cells, err := s.Get("t", []byte("r"), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := string(cells[0].Value)
			if stale {
				if got != "old" {
					t.Fatalf("with the checks off the stale fill should show: got %q", got)
				}
				return
			}
			if got != "new" {
				t.Fatalf("get after a stale fill: %q, want new", got)
			}
		})
	}
}

// TestRowCacheEvictedMarkRaisesFloor: once a write's mark is evicted, a
// fill from a view older than that write is refused.
func TestRowCacheEvictedMarkRaisesFloor(t *testing.T) {
	c := newRowCache(16 * rowEntryOverhead)
	cells := []CellVersion{{Family: "f", Value: []byte("v")}}
	mark(c, 5, "a")
	for i := range 20 { // push the mark of a out
		mark(c, 6, fmt.Sprint("x", i))
	}
	if _, ok := c.entries["a"]; ok {
		t.Fatal("the mark of a was not evicted")
	}
	c.fill("a", 4, cells)
	if _, ok := c.get("a"); ok {
		t.Fatal("a fill from before an evicted mark was cached")
	}
	c.fill("a", 6, cells)
	if _, ok := c.get("a"); !ok {
		t.Fatal("a fill from after every write was refused")
	}
}

// TestRowCacheReadsAgree: while puts rewrite a few rows, concurrent Gets
// and MultiGets of them never go back to an older version of a row they
// have seen, a MultiGet's rows are from one point (every put writes the
// rows a and b together, so their versions agree), and once the puts end
// every read returns the last version.
func TestRowCacheReadsAgree(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{Name: "f"})))
	z := zab.Zxid(2)
	pair := func(v string) []zab.Entry {
		e1 := entry(t, z, put("t", "a", "f", "q", v))
		e2 := entry(t, z+1, put("t", "b", "f", "q", v))
		z += 2
		return []zab.Entry{e1, e2}
	}
	mustApply(t, s, pair("v0")...)
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			var last string
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				rows, err := s.MultiGet("t", [][]byte{[]byte("a"), []byte("b")}, ReadOptions{})
				if err != nil || len(rows) != 2 {
					errs <- fmt.Errorf("multi-get: %v %v", rows, err)
					return
				}
				va, vb := string(rows[0].Cells[0].Value), string(rows[1].Cells[0].Value)
				if va != vb {
					errs <- fmt.Errorf("multi-get at two points: a=%s b=%s", va, vb)
					return
				}
				if len(va) < len(last) || (len(va) == len(last) && va < last) {
					errs <- fmt.Errorf("a went back from %s to %s", last, va)
					return
				}
				last = va
				if _, err := s.Get("t", []byte("a"), ReadOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	const n = 2000
	for i := 1; i <= n; i++ {
		ents := pair(fmt.Sprintf("v%d", i))
		if err := s.Apply(ents); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []string{"a", "b"} {
		cells, err := s.Get("t", []byte(r), ReadOptions{})
		if err != nil || string(cells[0].Value) != fmt.Sprintf("v%d", n) {
			t.Fatalf("%s after the puts: %v %v", r, cells, err)
		}
	}
	if hits, _, _ := s.rows.stats(); hits == 0 {
		t.Fatal("no read hit the cache")
	}
}

// mark records a row delete of each key at seq: a mark in the cache.
func mark(c *rowCache, seq uint64, keys ...string) {
	for _, k := range keys {
		c.write(seq, []rowWrite{{key: k, m: &Mutation{Op: OpDelete, Delete: Delete{Scope: ScopeRow}}, res: Result{Succeeded: true}}})
	}
}

// TestRowCacheWriteThrough: after every mutation of hotWorkload's random
// puts and deletes, with a Get of a random row between (which fills the
// cache, so that later writes find cached rows to update), every row
// reads through the cache exactly as a walk of the database does.
func TestRowCacheWriteThrough(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	rng := rand.New(rand.NewPCG(9, 13))
	hotWorkload(t, s, rng, func() { checkRowCached(t, s, hotRows[rng.IntN(len(hotRows))]) })
	for _, r := range hotRows {
		checkRowCached(t, s, r)
	}
	if hits, _, _ := s.rows.stats(); hits == 0 {
		t.Fatal("no read hit the cache")
	}
}

// checkRowCached compares a Get of row r (through the cache) with a
// walk of the database.
func checkRowCached(t *testing.T, s *Store, r string) {
	t.Helper()
	got, gerr := s.Get("t", []byte(r), ReadOptions{})
	v, done, err := s.openView("t")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	sel, err := compile(v.t, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lo := rowPrefix(v.t.id, []byte(r))
	want, err := refReadRows(s, v, sel, lo, escapedEnd(lo), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		if gerr == nil {
			t.Fatalf("row %q: got %s, want not found", r, cellsString(got))
		}
		return
	}
	if gerr != nil || cellsString(got) != cellsString(want[0].Cells) {
		t.Fatalf("row %q:\n got %s (%v)\nwant %s", r, cellsString(got), gerr, cellsString(want[0].Cells))
	}
}
