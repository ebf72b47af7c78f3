package kv

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/zab"
)

// withID gives m a request id and a fresh ReqID, as a retry through
// another member would have.
func withID(m *Mutation, client, seq, reqID uint64) *Mutation {
	c := *m
	c.Client, c.Seq, c.ReqID = client, seq, reqID
	return &c
}

// applyResult applies e and returns the result the store hands its
// proposer.
func applyResult(t *testing.T, s *Store, z zab.Zxid, m *Mutation) Result {
	t.Helper()
	ch, cancel := s.Await(m.ReqID)
	defer cancel()
	mustApply(t, s, entry(t, z, m))
	select {
	case r := <-ch:
		return r
	default:
		t.Fatalf("%v at %v: no result", m.Op, z)
		return Result{}
	}
}

func getString(t *testing.T, s *Store, row string) string {
	t.Helper()
	got, err := s.Get("t", []byte(row), ReadOptions{MaxVersions: 5})
	if err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	return cellsString(got)
}

func TestDedupeRepeatAnswersFirstResult(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 5})))
	const c = 0xc1
	if r := applyResult(t, s, 2, withID(put("t", "r", "cf", "q", "a"), c, 1, 10)); !r.Succeeded || r.Zxid != 2 {
		t.Fatalf("first put: %+v", r)
	}
	// Another client writes in between; then client c's put is retried.
	applyResult(t, s, 3, withID(put("t", "r", "cf", "q", "b"), 0xc2, 1, 11))
	r := applyResult(t, s, 4, withID(put("t", "r", "cf", "q", "a"), c, 1, 12))
	if !r.Succeeded || r.Zxid != 2 || r.Err != nil {
		t.Fatalf("retried put: %+v, want the first result (zxid 2)", r)
	}
	if got := getString(t, s, "r"); got != "cf:q@3=b cf:q@2=a " {
		t.Fatalf("after the retry: %q: the retry applied again", got)
	}
	if s.Applied() != 4 {
		t.Fatalf("applied %v, want 4", s.Applied())
	}

	// A check-and-put's recorded outcome: failed, and stays failed though
	// the condition would hold now.
	cp := &Mutation{Op: OpCheckAndPut, Table: "t", Row: []byte("r"), Cells: []Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte("c")}},
		Cond: Condition{Family: "cf", Qualifier: []byte("q"), Value: []byte("a")}}
	if r := applyResult(t, s, 5, withID(cp, c, 2, 13)); r.Succeeded {
		t.Fatalf("check-and-put on b succeeded: %+v", r)
	}
	applyResult(t, s, 6, withID(put("t", "r", "cf", "q", "a"), 0xc2, 2, 14))
	if r := applyResult(t, s, 7, withID(cp, c, 2, 15)); r.Succeeded || r.Zxid != 5 {
		t.Fatalf("retried check-and-put: %+v, want the first (failed, zxid 5)", r)
	}
	if got := getString(t, s, "r"); got != "cf:q@6=a cf:q@3=b cf:q@2=a " {
		t.Fatalf("after the retried check-and-put: %q", got)
	}

	// A recorded error stays the same error.
	if r := applyResult(t, s, 8, withID(put("nope", "r", "cf", "q", "x"), c, 3, 16)); !errors.Is(r.Err, ErrNoTable) {
		t.Fatalf("put to a missing table: %+v", r)
	}
	mustApply(t, s, entry(t, 9, createTable("nope", FamilySpec{"cf", 1})))
	r = applyResult(t, s, 10, withID(put("nope", "r", "cf", "q", "x"), c, 3, 17))
	if !errors.Is(r.Err, ErrNoTable) || r.Zxid != 8 {
		t.Fatalf("retried put to a then missing table: %+v", r)
	}
	if _, err := s.Get("nope", []byte("r"), ReadOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the retry applied: %v", err)
	}
}

func TestDedupeStaleSequence(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 5})))
	const c = 7
	applyResult(t, s, 2, withID(put("t", "r", "cf", "q", "one"), c, 1, 1))
	applyResult(t, s, 3, withID(put("t", "r", "cf", "q", "two"), c, 2, 2))
	// Sequence 1 again after 2 applied: an old retry overtaken.
	r := applyResult(t, s, 4, withID(put("t", "r", "cf", "q", "one"), c, 1, 3))
	if !errors.Is(r.Err, ErrStaleRequest) || r.Succeeded {
		t.Fatalf("stale retry: %+v", r)
	}
	if got := getString(t, s, "r"); got != "cf:q@3=two cf:q@2=one " {
		t.Fatalf("stale retry applied: %q", got)
	}
}

// TestDedupeWithinOneBatch: a write and its retry committed in one Apply
// call (one pebble batch).
func TestDedupeWithinOneBatch(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	first := withID(put("t", "r", "cf", "q", "a"), 9, 1, 1)
	retry := withID(put("t", "r", "cf", "q", "a"), 9, 1, 2)
	ch1, c1 := s.Await(1)
	defer c1()
	ch2, c2 := s.Await(2)
	defer c2()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 5})), entry(t, 2, first), entry(t, 3, retry))
	r1, r2 := <-ch1, <-ch2
	if r1.Zxid != 2 || r2.Zxid != 2 || !r2.Succeeded {
		t.Fatalf("results %+v %+v", r1, r2)
	}
	if got := getString(t, s, "r"); got != "cf:q@2=a " {
		t.Fatalf("%q", got)
	}
}

// TestDedupeSurvivesRestartAndSnapshot: the table is store state: a crash
// that keeps the flushed state, and a snapshot installed on another
// member, both still answer a retry with the first result.
func TestDedupeSurvivesRestartAndSnapshot(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := openMem(t, fs, "db")
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 5})))
	applyResult(t, s, 2, withID(put("t", "r", "cf", "q", "a"), 5, 1, 1))
	if _, err := s.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	applyResult(t, s, 3, withID(put("t", "r", "cf", "q", "b"), 6, 1, 2)) // not flushed: lost
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	s.Close()

	s2 := openMem(t, crashed, "db")
	defer s2.Close()
	if s2.Applied() != 2 {
		t.Fatalf("reopened at %v, want 2", s2.Applied())
	}
	if r := applyResult(t, s2, 3, withID(put("t", "r", "cf", "q", "a"), 5, 1, 3)); r.Zxid != 2 || !r.Succeeded {
		t.Fatalf("retry after restart: %+v", r)
	}
	// Client 6's write was lost with the unflushed state (the log would
	// replay it); its retry applies.
	if r := applyResult(t, s2, 4, withID(put("t", "r", "cf", "q", "b"), 6, 1, 4)); r.Zxid != 4 {
		t.Fatalf("client 6 after restart: %+v", r)
	}

	var buf bytes.Buffer
	if _, err := s2.WriteSnapshot(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	dst := openMem(t, vfs.NewMem(), "other")
	defer dst.Close()
	if _, err := dst.InstallSnapshot(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		client uint64
		want   zab.Zxid
	}{{5, 2}, {6, 4}} {
		if r := applyResult(t, dst, zab.Zxid(5+c.client), withID(put("t", "r", "cf", "q", "x"), c.client, 1, 10+c.client)); r.Zxid != c.want {
			t.Fatalf("client %d retried after install: %+v, want zxid %v", c.client, r, c.want)
		}
	}
	if got := getString(t, dst, "r"); got != "cf:q@4=b cf:q@2=a " {
		t.Fatalf("installed store after retries: %q", got)
	}
}

// TestDedupeTableBounded: past maxClients the client whose last write is
// oldest is forgotten (its retry applies again), on every replica alike,
// and the count survives a reopen.
func TestDedupeTableBounded(t *testing.T) {
	defer func(n int) { maxClients = n }(maxClients)
	maxClients = 2
	fs := vfs.NewMem()
	s := openMem(t, fs, "db")
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 10})))
	applyResult(t, s, 2, withID(put("t", "r", "cf", "q", "1"), 1, 1, 1))
	applyResult(t, s, 3, withID(put("t", "r", "cf", "q", "2"), 2, 1, 2))
	applyResult(t, s, 4, withID(put("t", "r", "cf", "q", "1b"), 1, 2, 3)) // client 1 is now the newest
	applyResult(t, s, 5, withID(put("t", "r", "cf", "q", "3"), 3, 1, 4))  // forgets client 2
	if s.clients != 2 {
		t.Fatalf("%d clients kept, want 2", s.clients)
	}
	if r := applyResult(t, s, 6, withID(put("t", "r", "cf", "q", "1b"), 1, 2, 5)); r.Zxid != 4 {
		t.Fatalf("client 1 forgotten: %+v", r)
	}
	if r := applyResult(t, s, 7, withID(put("t", "r", "cf", "q", "2"), 2, 1, 6)); r.Zxid != 7 {
		t.Fatalf("client 2 remembered past the bound: %+v", r)
	}
	s.Close()
	s = openMem(t, fs, "db")
	defer s.Close()
	if s.clients != 2 {
		t.Fatalf("reopened with %d clients counted, want 2", s.clients)
	}
	if r := applyResult(t, s, 8, withID(put("t", "r", "cf", "q", "2"), 2, 1, 7)); r.Zxid != 7 {
		t.Fatalf("client 2 after reopen: %+v", r)
	}
}

func TestMutationRequestID(t *testing.T) {
	m := withID(put("t", "r", "cf", "q", "v"), 0xfeed, 3, 1)
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMutation(b)
	if err != nil || got.Client != 0xfeed || got.Seq != 3 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	plain, _ := put("t", "r", "cf", "q", "v").Encode()
	if plain[0] != mutationFormat {
		t.Fatalf("a mutation without a request id encodes as format %d", plain[0])
	}
	for _, bad := range []*Mutation{withID(put("t", "r", "cf", "q", "v"), 1, 0, 1), withID(put("t", "r", "cf", "q", "v"), 0, 1, 1)} {
		if _, err := bad.Encode(); !errors.Is(err, ErrInvalid) {
			t.Fatalf("client %d seq %d encoded: %v", bad.Client, bad.Seq, err)
		}
	}
	// Format 2 with client 0 is not canonical: refused.
	b2 := append([]byte{mutationFormatDedupe}, plain[1:3]...)
	b2 = append(b2, 0, 0)
	b2 = append(b2, plain[3:]...)
	if _, err := DecodeMutation(b2); !errors.Is(err, ErrInvalid) {
		t.Fatalf("format 2 without a client decoded: %v", err)
	}
}
