package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/zab"
)

func openMem(t *testing.T, fs vfs.FS, dir string) *Store {
	t.Helper()
	s, err := Open(Options{FS: fs, Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// entry encodes m as the entry with zxid z.
func entry(t *testing.T, z zab.Zxid, m *Mutation) zab.Entry {
	t.Helper()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return zab.Entry{Zxid: z, Data: b}
}

func put(table, row string, cells ...string) *Mutation {
	m := &Mutation{Op: OpPut, Table: table, Row: []byte(row)}
	for i := 0; i+2 < len(cells)+1; i += 3 {
		m.Cells = append(m.Cells, Cell{Family: cells[i], Qualifier: []byte(cells[i+1]), Value: []byte(cells[i+2])})
	}
	return m
}

func createTable(name string, fams ...FamilySpec) *Mutation {
	return &Mutation{Op: OpCreateTable, Table: name, Families: fams}
}

func mustApply(t *testing.T, s *Store, ents ...zab.Entry) {
	t.Helper()
	if err := s.Apply(ents); err != nil {
		t.Fatal(err)
	}
}

func cellsString(cs []CellVersion) string {
	var b bytes.Buffer
	for _, c := range cs {
		fmt.Fprintf(&b, "%s:%s@%d=%s ", c.Family, c.Qualifier, c.Version, c.Value)
	}
	return b.String()
}

func TestApplyAndRead(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s,
		entry(t, 1, createTable("t", FamilySpec{"cf", 3}, FamilySpec{"x", 1})),
		entry(t, 2, put("t", "r1", "cf", "a", "1", "cf", "b", "2", "x", "z", "9")),
		entry(t, 3, put("t", "r1", "cf", "a", "1b")),
	)
	got, err := s.Get("t", []byte("r1"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Newest versions, versions stamped with the writing entry's zxid.
	if want := "cf:a@3=1b cf:b@2=2 x:z@2=9 "; cellsString(got) != want {
		t.Fatalf("get: %q, want %q", cellsString(got), want)
	}
	got, _ = s.Get("t", []byte("r1"), ReadOptions{MaxVersions: 5, Columns: []Column{{Family: "cf", Qualifier: []byte("a"), HasQualifier: true}}})
	if want := "cf:a@3=1b cf:a@2=1 "; cellsString(got) != want {
		t.Fatalf("versions: %q, want %q", cellsString(got), want)
	}
	got, _ = s.Get("t", []byte("r1"), ReadOptions{AsOf: 2})
	if want := "cf:a@2=1 cf:b@2=2 x:z@2=9 "; cellsString(got) != want {
		t.Fatalf("as of 2: %q, want %q", cellsString(got), want)
	}
	if _, err := s.Get("t", []byte("r2"), ReadOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing row: %v", err)
	}
	if _, err := s.Get("nope", []byte("r1"), ReadOptions{}); !errors.Is(err, ErrNoTable) {
		t.Fatalf("missing table: %v", err)
	}
	if _, err := s.Get("t", []byte("r1"), ReadOptions{Columns: []Column{{Family: "nope"}}}); !errors.Is(err, ErrNoFamily) {
		t.Fatalf("missing family: %v", err)
	}
}

func TestMaxVersionsTrimmed(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 2}, FamilySpec{"one", 0})))
	// Several writes of one column in one Apply call and across calls.
	mustApply(t, s, entry(t, 2, put("t", "r", "cf", "q", "a", "one", "q", "a")), entry(t, 3, put("t", "r", "cf", "q", "b", "one", "q", "b")))
	mustApply(t, s, entry(t, 4, put("t", "r", "cf", "q", "c", "one", "q", "c")))
	got, _ := s.Get("t", []byte("r"), ReadOptions{MaxVersions: 10})
	if want := "cf:q@4=c cf:q@3=b one:q@4=c "; cellsString(got) != want {
		t.Fatalf("got %q, want %q", cellsString(got), want)
	}
}

// TestTrimLeavesNoRangeTombstone: many puts of two columns keep exactly
// MaxVersions versions, trimmed (and a column delete done) with point
// deletes only, so no range tombstone reaches an sstable.
func TestTrimLeavesNoRangeTombstone(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 3})))
	// Five puts per Apply call: the later ones trim what the earlier
	// ones wrote into the same batch.
	z := zab.Zxid(2)
	for i := 0; i < 40; i += 5 {
		var ents []zab.Entry
		for j := i; j < i+5; j++ {
			ents = append(ents, entry(t, z, put("t", "r", "cf", "q", fmt.Sprint(j), "cf", "p", fmt.Sprint(j))))
			z++
		}
		mustApply(t, s, ents...)
	}
	got, err := s.Get("t", []byte("r"), ReadOptions{MaxVersions: 100})
	if err != nil {
		t.Fatal(err)
	}
	if want := "cf:p@41=39 cf:p@40=38 cf:p@39=37 cf:q@41=39 cf:q@40=38 cf:q@39=37 "; cellsString(got) != want {
		t.Fatalf("got %q, want %q", cellsString(got), want)
	}
	mustApply(t, s, entry(t, z, &Mutation{Op: OpDelete, Table: "t", Row: []byte("r"), Delete: Delete{Scope: ScopeColumn, Family: "cf", Qualifier: []byte("p")}}))
	got, _ = s.Get("t", []byte("r"), ReadOptions{MaxVersions: 100})
	if want := "cf:q@41=39 cf:q@40=38 cf:q@39=37 "; cellsString(got) != want {
		t.Fatalf("after the column delete got %q, want %q", cellsString(got), want)
	}
	if _, err := s.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	levels, err := s.db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, l := range levels {
		for _, sst := range l {
			tables++
			if n := sst.Properties.NumRangeDeletions; n != 0 {
				t.Errorf("sstable %v holds %d range deletions", sst.FileNum, n)
			}
		}
	}
	if tables == 0 {
		t.Fatal("no sstable after the flush")
	}
}

// TestTrimWideRow: a put of two far-apart columns of a wide row trims
// both (the trim steps to near columns and seeks to far ones) and leaves
// the others alone.
func TestTrimWideRow(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 1})))
	var all []string
	for i := 0; i < 20; i++ {
		all = append(all, "cf", fmt.Sprintf("c%02d", i), "v")
	}
	mustApply(t, s, entry(t, 2, put("t", "r", all...)))
	mustApply(t, s, entry(t, 3, put("t", "r", "cf", "c00", "x", "cf", "c19", "x", "cf", "c01", "x")), entry(t, 4, put("t", "r", "cf", "c19", "y", "cf", "c00", "y")))
	got, err := s.Get("t", []byte("r"), ReadOptions{MaxVersions: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := "cf:c00@4=y cf:c01@3=x "
	for i := 2; i < 19; i++ {
		want += fmt.Sprintf("cf:c%02d@2=v ", i)
	}
	want += "cf:c19@4=y "
	if cellsString(got) != want {
		t.Fatalf("got %q, want %q", cellsString(got), want)
	}
}

func TestDeletesAndDrop(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s,
		entry(t, 1, createTable("t", FamilySpec{"a", 1}, FamilySpec{"b", 1})),
		entry(t, 2, put("t", "r", "a", "x", "1", "a", "y", "2", "b", "x", "3")),
		entry(t, 3, put("t", "r\x00", "a", "x", "4")),
		entry(t, 4, &Mutation{Op: OpDelete, Table: "t", Row: []byte("r"), Delete: Delete{Scope: ScopeColumn, Family: "a", Qualifier: []byte("x")}}),
	)
	got, _ := s.Get("t", []byte("r"), ReadOptions{})
	if want := "a:y@2=2 b:x@2=3 "; cellsString(got) != want {
		t.Fatalf("after column delete %q, want %q", cellsString(got), want)
	}
	mustApply(t, s, entry(t, 5, &Mutation{Op: OpDelete, Table: "t", Row: []byte("r"), Delete: Delete{Scope: ScopeFamily, Family: "a"}}))
	got, _ = s.Get("t", []byte("r"), ReadOptions{})
	if want := "b:x@2=3 "; cellsString(got) != want {
		t.Fatalf("after family delete %q, want %q", cellsString(got), want)
	}
	mustApply(t, s, entry(t, 6, &Mutation{Op: OpDelete, Table: "t", Row: []byte("r"), Delete: Delete{Scope: ScopeRow}}))
	if _, err := s.Get("t", []byte("r"), ReadOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after row delete: %v", err)
	}
	// The neighbouring row whose key extends r survives.
	if got, err := s.Get("t", []byte("r\x00"), ReadOptions{}); err != nil || cellsString(got) != "a:x@3=4 " {
		t.Fatalf("neighbour: %q %v", cellsString(got), err)
	}
	// Drop and re-create: the old data does not come back.
	mustApply(t, s, entry(t, 7, &Mutation{Op: OpDropTable, Table: "t"}), entry(t, 8, createTable("t", FamilySpec{"a", 1})))
	if _, err := s.Get("t", []byte("r\x00"), ReadOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after drop and create: %v", err)
	}
}

func TestResultsAndConditions(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	await := func(m *Mutation, z zab.Zxid) Result {
		m.ReqID = uint64(z) + 100
		ch, cancel := s.Await(m.ReqID)
		defer cancel()
		mustApply(t, s, entry(t, z, m))
		return <-ch
	}
	if r := await(put("t", "r", "cf", "q", "v"), 1); !errors.Is(r.Err, ErrNoTable) {
		t.Fatalf("put to missing table: %+v", r)
	}
	if r := await(createTable("t", FamilySpec{"cf", 1}), 2); r.Err != nil || !r.Succeeded {
		t.Fatalf("create: %+v", r)
	}
	if r := await(createTable("t", FamilySpec{"cf", 1}), 3); !errors.Is(r.Err, ErrTableExists) {
		t.Fatalf("create twice: %+v", r)
	}
	if r := await(put("t", "r", "nope", "q", "v"), 4); !errors.Is(r.Err, ErrNoFamily) {
		t.Fatalf("put to missing family: %+v", r)
	}
	cap := func(absent bool, expect, val string) *Mutation {
		return &Mutation{Op: OpCheckAndPut, Table: "t", Row: []byte("r"), Cells: []Cell{{"cf", []byte("q"), []byte(val)}},
			Cond: Condition{Family: "cf", Qualifier: []byte("q"), Absent: absent, Value: []byte(expect)}}
	}
	if r := await(cap(true, "", "1"), 5); !r.Succeeded || r.Zxid != 5 {
		t.Fatalf("check absent on empty: %+v", r)
	}
	if r := await(cap(true, "", "x"), 6); r.Succeeded {
		t.Fatalf("check absent on present: %+v", r)
	}
	if r := await(cap(false, "0", "x"), 7); r.Succeeded {
		t.Fatalf("check wrong value: %+v", r)
	}
	if r := await(cap(false, "1", "2"), 8); !r.Succeeded {
		t.Fatalf("check right value: %+v", r)
	}
	cad := &Mutation{Op: OpCheckAndDelete, Table: "t", Row: []byte("r"), Delete: Delete{Scope: ScopeRow}, Cond: Condition{Family: "cf", Qualifier: []byte("q"), Value: []byte("2")}}
	if r := await(cad, 9); !r.Succeeded {
		t.Fatalf("check-and-delete: %+v", r)
	}
	if _, err := s.Get("t", []byte("r"), ReadOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after check-and-delete: %v", err)
	}
}

func TestScan(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	ents := []zab.Entry{entry(t, 1, createTable("t", FamilySpec{"cf", 1})), entry(t, 2, createTable("u", FamilySpec{"cf", 1}))}
	for i, r := range []string{"d", "a", "c", "b", "e"} {
		ents = append(ents, entry(t, zab.Zxid(10+i), put("t", r, "cf", "q1", r+"1", "cf", "q2", r+"2", "cf", "q3", r+"3")))
	}
	ents = append(ents, entry(t, 20, put("u", "a", "cf", "q", "other table")))
	mustApply(t, s, ents...)
	rows, err := s.Scan("t", []byte("b"), []byte("e"), 0, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range rows {
		keys = append(keys, string(r.Key))
	}
	if fmt.Sprint(keys) != "[b c d]" {
		t.Fatalf("scan [b,e): %v", keys)
	}
	rows, _ = s.Scan("t", nil, nil, 2, ReadOptions{})
	if len(rows) != 2 || string(rows[0].Key) != "a" || string(rows[1].Key) != "b" || len(rows[0].Cells) != 3 {
		t.Fatalf("scan limit 2: %+v", rows)
	}
	// Within a row: a qualifier range and a cell limit.
	got, _ := s.Get("t", []byte("c"), ReadOptions{QualifierFrom: []byte("q2"), CellLimit: 1})
	if cellsString(got) != "cf:q2@12=c2 " {
		t.Fatalf("row slice: %q", cellsString(got))
	}
	mg, err := s.MultiGet("t", [][]byte{[]byte("e"), []byte("zz"), []byte("a")}, ReadOptions{Columns: []Column{{Family: "cf", Qualifier: []byte("q3"), HasQualifier: true}}})
	if err != nil || len(mg) != 2 || string(mg[0].Key) != "e" || cellsString(mg[1].Cells) != "cf:q3@11=a3 " {
		t.Fatalf("multiget: %+v %v", mg, err)
	}
}

// TestIdempotentReplay: entries at or below the applied zxid change
// nothing, whether replayed in the same process or after a restart.
func TestIdempotentReplay(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs, "db")
	ents := []zab.Entry{
		entry(t, 1, createTable("t", FamilySpec{"cf", 5})),
		entry(t, 2, put("t", "r", "cf", "q", "a")),
		entry(t, 3, put("t", "r", "cf", "q", "b")),
	}
	mustApply(t, s, ents...)
	mustApply(t, s, ents...)
	mustApply(t, s, ents[1])
	check := func(s *Store) {
		t.Helper()
		got, err := s.Get("t", []byte("r"), ReadOptions{MaxVersions: 10})
		if err != nil || cellsString(got) != "cf:q@3=b cf:q@2=a " {
			t.Fatalf("after replay: %q %v", cellsString(got), err)
		}
		if s.Applied() != 3 {
			t.Fatalf("applied %v", s.Applied())
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openMem(t, fs, "db")
	defer s.Close()
	check(s)
	mustApply(t, s, ents...)
	check(s)
}

// TestCrashResumesFromFlushed: with no WAL, a crash loses what pebble had
// not flushed, and the store reopens at the zxid it had flushed (Durable),
// from which the log replays the rest.
func TestCrashResumesFromFlushed(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := openMem(t, fs, "db")
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 1})), entry(t, 2, put("t", "r", "cf", "q", "a")))
	z, err := s.Snapshot(context.Background())
	if err != nil || z != 2 || s.Durable() != 2 {
		t.Fatalf("snapshot: %v %v durable %v", z, err, s.Durable())
	}
	later := entry(t, 3, put("t", "r", "cf", "q", "b"))
	mustApply(t, s, later)
	if s.Durable() != 2 || s.Applied() != 3 {
		t.Fatalf("durable %v applied %v", s.Durable(), s.Applied())
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	s.Close()

	s2 := openMem(t, crashed, "db")
	defer s2.Close()
	if s2.Applied() != 2 || s2.Durable() != 2 {
		t.Fatalf("after crash: applied %v durable %v, want 2", s2.Applied(), s2.Durable())
	}
	got, _ := s2.Get("t", []byte("r"), ReadOptions{})
	if cellsString(got) != "cf:q@2=a " {
		t.Fatalf("after crash: %q", cellsString(got))
	}
	mustApply(t, s2, later)
	got, _ = s2.Get("t", []byte("r"), ReadOptions{})
	if cellsString(got) != "cf:q@3=b " {
		t.Fatalf("after replay: %q", cellsString(got))
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	src := openMem(t, vfs.NewMem(), "a/db")
	defer src.Close()
	mustApply(t, src, entry(t, 1, createTable("t", FamilySpec{"cf", 2})))
	for i := 2; i < 50; i++ {
		mustApply(t, src, entry(t, zab.Zxid(i), put("t", fmt.Sprintf("r%03d", i%7), "cf", "q", fmt.Sprint(i))))
	}
	var buf bytes.Buffer
	z, err := src.WriteSnapshot(context.Background(), &buf)
	if err != nil || z != 49 {
		t.Fatalf("write snapshot: %v %v", z, err)
	}
	dstFS := vfs.NewMem()
	dst := openMem(t, dstFS, "b/db")
	mustApply(t, dst, entry(t, 1, createTable("old", FamilySpec{"cf", 1})), entry(t, 2, put("old", "r", "cf", "q", "gone")))

	// A damaged stream is refused and leaves the store as it was.
	bad := append([]byte(nil), buf.Bytes()...)
	bad[len(bad)/2] ^= 0xff
	if _, err := dst.InstallSnapshot(context.Background(), bytes.NewReader(bad)); err == nil {
		t.Fatal("damaged snapshot installed")
	}
	if _, err := dst.Get("old", []byte("r"), ReadOptions{}); err != nil {
		t.Fatalf("store changed by a refused snapshot: %v", err)
	}
	if _, err := dst.InstallSnapshot(context.Background(), bytes.NewReader(buf.Bytes()[:buf.Len()-3])); err == nil {
		t.Fatal("cut snapshot installed")
	}

	got, err := dst.InstallSnapshot(context.Background(), bytes.NewReader(buf.Bytes()))
	if err != nil || got != 49 || dst.Applied() != 49 || dst.Durable() != 49 {
		t.Fatalf("install: %v %v applied %v durable %v", got, err, dst.Applied(), dst.Durable())
	}
	if _, err := dst.Get("old", []byte("r"), ReadOptions{}); !errors.Is(err, ErrNoTable) {
		t.Fatalf("old state survived install: %v", err)
	}
	a, _ := src.Scan("t", nil, nil, 0, ReadOptions{MaxVersions: 5})
	b, _ := dst.Scan("t", nil, nil, 0, ReadOptions{MaxVersions: 5})
	if fmt.Sprint(a) != fmt.Sprint(b) || len(a) != 7 {
		t.Fatalf("installed state differs:\n%v\n%v", a, b)
	}
	// The installed store goes on applying and survives a restart.
	mustApply(t, dst, entry(t, 50, put("t", "new", "cf", "q", "x")))
	dst.Close()
	dst = openMem(t, dstFS, "b/db")
	defer dst.Close()
	if dst.Applied() != 50 {
		t.Fatalf("after restart applied %v", dst.Applied())
	}
	if _, err := dst.Get("t", []byte("new"), ReadOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestTemperature(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 1})))
	z := zab.Zxid(2)
	for f := 0; f < 3; f++ {
		for i := 0; i < 100; i++ {
			mustApply(t, s, entry(t, z, put("t", fmt.Sprintf("r%d-%d", f, i), "cf", "q", "v")))
			z++
		}
		if _, err := s.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	tp, err := s.Temperature(0)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Flushes < 3 {
		t.Fatalf("%d flushes counted, want at least 3", tp.Flushes)
	}
	// Three flushed tables are in L0 or were compacted out of it.
	if tp.L0Tables == 0 && tp.Compactions == 0 {
		t.Fatalf("temperature %+v: flushed tables neither in L0 nor compacted", tp)
	}
	if tp.L0Sublevels > 0 && tp.Heat <= 0 {
		t.Fatalf("temperature %+v: L0 sublevels but no heat", tp)
	}
}

// TestTrimHotColumns: hundreds of puts of the same columns, some in one
// Apply call, with a flush between, keep each column at its family's
// versions: the trim stops at the first version beyond them and seeks to
// the next column, over versions trimmed in the memtable and in
// sstables alike.
func TestTrimHotColumns(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"one", 1}, FamilySpec{"two", 2})))
	z := zab.Zxid(2)
	for i := 0; i < 300; i += 3 {
		var ents []zab.Entry
		for j := i; j < i+3; j++ {
			v := fmt.Sprint(j)
			ents = append(ents, entry(t, z, put("t", "r", "one", "a", v, "one", "b", v, "two", "a", v, "two", "c", v, "one", "c", v)))
			z++
		}
		mustApply(t, s, ents...)
		if i == 150 {
			if _, err := s.Snapshot(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := s.Get("t", []byte("r"), ReadOptions{MaxVersions: 1000})
	if err != nil {
		t.Fatal(err)
	}
	want := "one:a@301=299 one:b@301=299 one:c@301=299 two:a@301=299 two:a@300=298 two:c@301=299 two:c@300=298 "
	if cellsString(got) != want {
		t.Fatalf("got %q, want %q", cellsString(got), want)
	}
}
