package kv

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/zab"
)

// TestReadsCopyEveryCell: rows with escaped bytes and values larger than
// a read's copy buffer come back whole and distinct, through Get,
// MultiGet and Scan, and a row read twice in one MultiGet is the same.
func TestReadsCopyEveryCell(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	z := zab.Zxid(1)
	mustApply(t, s, entry(t, z, createTable("t", FamilySpec{Name: "a"}, FamilySpec{Name: "b"})))
	rows := []string{"r", "r\x00", "r\x00\xff", "r\x01", "s"}
	val := func(row string, q int) string {
		return strings.Repeat(fmt.Sprintf("%q/%d;", row, q), 300) // > readArenaMin per cell
	}
	for _, r := range rows {
		z++
		var cells []string
		for q := 0; q < 4; q++ {
			cells = append(cells, "a", fmt.Sprintf("q\x00%d", q), val(r, q))
		}
		cells = append(cells, "b", "", "small")
		mustApply(t, s, entry(t, z, put("t", r, cells...)))
	}
	check := func(how, row string, cs []CellVersion) {
		t.Helper()
		if len(cs) != 5 {
			t.Fatalf("%s %q: %d cells", how, row, len(cs))
		}
		for q := 0; q < 4; q++ {
			c := cs[q]
			if c.Family != "a" || string(c.Qualifier) != fmt.Sprintf("q\x00%d", q) || string(c.Value) != val(row, q) {
				t.Fatalf("%s %q: cell %d is %s:%q (%d bytes)", how, row, q, c.Family, c.Qualifier, len(c.Value))
			}
		}
		if c := cs[4]; c.Family != "b" || len(c.Qualifier) != 0 || string(c.Value) != "small" {
			t.Fatalf("%s %q: last cell %s:%q=%q", how, row, c.Family, c.Qualifier, c.Value)
		}
	}
	for _, r := range rows {
		cs, err := s.Get("t", []byte(r), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check("get", r, cs)
	}
	keys := [][]byte{[]byte("s"), []byte("r\x00"), []byte("nope"), []byte("r\x00")}
	got, err := s.MultiGet("t", keys, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || string(got[0].Key) != "s" || string(got[1].Key) != "r\x00" || string(got[2].Key) != "r\x00" {
		t.Fatalf("multi-get: %d rows", len(got))
	}
	for _, r := range got {
		check("multi-get", string(r.Key), r.Cells)
	}
	sc, err := s.Scan("t", nil, nil, 0, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc) != len(rows) {
		t.Fatalf("scan: %d rows, want %d", len(sc), len(rows))
	}
	for i, r := range sc {
		if !bytes.Equal(r.Key, []byte(rows[i])) {
			t.Fatalf("scan row %d is %q, want %q", i, r.Key, rows[i])
		}
		check("scan", rows[i], r.Cells)
	}
}

// TestMultiGetSeesOneBatch: a multi-get reads every row at one point,
// so rows that every Apply writes together always agree, however the
// read and the applies interleave.
func TestMultiGetSeesOneBatch(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{Name: "f"})))
	const n = 300
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 2; i < n; i++ {
			v := fmt.Sprint(i)
			if err := s.Apply([]zab.Entry{entry(t, zab.Zxid(2*i), put("t", "a", "f", "q", v)), entry(t, zab.Zxid(2*i+1), put("t", "b", "f", "q", v))}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < n; i++ {
		rows, err := s.MultiGet("t", [][]byte{[]byte("a"), []byte("b")}, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 2 && string(rows[0].Cells[0].Value) != string(rows[1].Cells[0].Value) {
			t.Fatalf("a=%s and b=%s read together", rows[0].Cells[0].Value, rows[1].Cells[0].Value)
		}
		if len(rows) == 1 {
			t.Fatalf("one of two rows written together: %q", rows[0].Key)
		}
	}
	wg.Wait()
}
