package kv

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/zab"
)

// fillL0 applies n rounds of puts over the same rows, flushing after
// each, so that every flush adds an overlapping L0 table.
func fillL0(t *testing.T, s *Store, z *zab.Zxid, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		var ents []zab.Entry
		for r := 0; r < 20; r++ {
			*z++
			ents = append(ents, entry(t, *z, put("t", fmt.Sprintf("r%02d", r), "cf", "q", fmt.Sprintf("v%d", i))))
		}
		mustApply(t, s, ents...)
		if _, err := s.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func temperature(t *testing.T, s *Store) Temperature {
	t.Helper()
	tp, err := s.Temperature(0)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestCompactionGateHolds: held, the store's L0 grows past pebble's
// compaction threshold with no compaction run and one waiting; released,
// the waiting compactions run and L0 shrinks. The hold survives a
// snapshot install, which reopens the database.
func TestCompactionGateHolds(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open(Options{FS: fs, Dir: "db", Logger: slog.New(slog.DiscardHandler), GateCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.HoldCompactions(true) {
		t.Fatal("HoldCompactions refused on a gated store")
	}
	z := zab.Zxid(1)
	mustApply(t, s, entry(t, z, createTable("t", FamilySpec{"cf", 1})))
	fillL0(t, s, &z, 8)
	tp := temperature(t, s)
	if tp.L0Sublevels < 5 || tp.Heat < 1 {
		t.Fatalf("held: L0 has %d sublevels, heat %.2f; want more than the compaction threshold", tp.L0Sublevels, tp.Heat)
	}
	if tp.Compactions != 0 || tp.GrantedCompactions != 0 {
		t.Fatalf("held: %d compactions ran (%d granted)", tp.Compactions, tp.GrantedCompactions)
	}
	if !tp.Held || !tp.Pending || tp.HeldCompactions == 0 {
		t.Fatalf("held: %+v, want a compaction waiting on the hold", tp)
	}

	// A snapshot install reopens pebble under the same gate, still held.
	var snap bytes.Buffer
	if _, err := s.WriteSnapshot(context.Background(), &snap); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InstallSnapshot(context.Background(), &snap); err != nil {
		t.Fatal(err)
	}
	fillL0(t, s, &z, 1)
	if tp := temperature(t, s); tp.Compactions != 0 || !tp.Held {
		t.Fatalf("after an install: %+v, want still held", tp)
	}

	s.HoldCompactions(false)
	testutil.Eventually(t, 20*time.Second, "released: compactions run and L0 below the threshold", func() bool {
		tp = temperature(t, s)
		return tp.Compactions > 0 && tp.L0Sublevels < 4 && !tp.Pending
	})
	if tp.GrantedCompactions == 0 {
		t.Fatalf("released: compactions ran without the gate granting them: %+v", tp)
	}
	got, err := s.Get("t", []byte("r07"), ReadOptions{})
	if err != nil || len(got) != 1 || string(got[0].Value) != "v0" {
		t.Fatalf("r07 after compactions: %q, %v", cellsString(got), err)
	}
}

// TestHoldCompactionsUngated: a store opened without the gate refuses a
// hold, and pebble compacts as it likes.
func TestHoldCompactionsUngated(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	if s.HoldCompactions(true) {
		t.Fatal("HoldCompactions accepted on a store opened without GateCompactions")
	}
	z := zab.Zxid(1)
	mustApply(t, s, entry(t, z, createTable("t", FamilySpec{"cf", 1})))
	fillL0(t, s, &z, 8)
	testutil.Eventually(t, 20*time.Second, "ungated: compactions run", func() bool {
		tp := temperature(t, s)
		return tp.Compactions > 0 && !tp.Held
	})
}

// TestHoldNeverStallsAFlush: with compactions held, flushes pile L0 up to
// pebble's write stall; the store releases the hold before the flush
// that would wait for a compaction nobody lets run (found by the
// simulator, whose flushes and decisions share one goroutine), so the
// flushes go on and held compactions run.
func TestHoldNeverStallsAFlush(t *testing.T) {
	s, err := Open(Options{FS: vfs.NewMem(), Dir: "db", Logger: slog.New(slog.DiscardHandler), GateCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.HoldCompactions(true)
	z := zab.Zxid(1)
	mustApply(t, s, entry(t, z, createTable("t", FamilySpec{"cf", 1})))
	// pebble's default L0StopWritesThreshold is 12: twice as many flushes.
	for range 24 {
		fillL0(t, s, &z, 1)
		s.HoldCompactions(true) // the leader change holds again at once
	}
	if tp := temperature(t, s); tp.StallReleases == 0 || tp.Flushes != 24 {
		t.Fatalf("after 24 held flushes: %+v, want every flush done and releases near the stall", tp)
	}
}
