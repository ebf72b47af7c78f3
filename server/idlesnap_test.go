package server

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/vfs"
)

// idleStore is a diskless storage with snapCount 1000 (so 10 writes make
// an idle snapshot worth taking) whose idle checks run
// every millisecond, and its snapshotter running until the test ends.
func idleStore(t *testing.T) (*storage, *Server, vfs.FS) {
	t.Helper()
	fsys := vfs.NewMem()
	o := &Options{FS: fsys, DataDir: "/data", DataLogDir: "/data", Durability: DurabilityDiskless,
		Ensemble: &Ensemble{ID: 1, Voters: []uint64{1, 2, 3}}, SnapCount: 1000,
		Logger: slog.New(slog.DiscardHandler)}
	st, tree, err := openStorage(o)
	if err != nil {
		t.Fatal(err)
	}
	st.idleCheck, st.idleQuiet = time.Millisecond, 5*time.Millisecond
	s := &Server{tree: tree}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); st.snapshotLoop(ctx, s) }()
	t.Cleanup(func() { cancel(); <-done })
	return st, s, fsys
}

// applyQuietly applies creates from..to and counts them as noteApplied
// does, holding the tree's lock as apply does.
func applyQuietly(t *testing.T, st *storage, s *Server, from, to int64) {
	t.Helper()
	s.mu.Lock()
	applyCreates(t, s.tree, from, to)
	s.mu.Unlock()
	st.noteApplied(int(to-from+1), s)
}

// After a burst of writes too short for snapCount's cadence, a lull makes
// the snapshotter take a snapshot of everything applied, so a checkpoint
// at a leader failure has little to write.
func TestDisklessIdleSnapshotAfterBurst(t *testing.T) {
	st, s, fsys := idleStore(t)
	if st.snapAt <= 300 {
		t.Fatalf("snapAt %d: the busy cadence would snapshot the burst itself", st.snapAt)
	}
	applyQuietly(t, st, s, 1, 300)
	waitSnapshotAt(t, fsys, 300)
	if w := st.busyWrites.Load(); w != 0 {
		t.Fatalf("busyWrites %d after the idle snapshot, want 0", w)
	}
}

// Fewer writes than idleSnapMin are not worth a snapshot of the tree: the
// lull leaves them to the checkpoint.
func TestDisklessNoIdleSnapshotForATrickle(t *testing.T) {
	st, s, fsys := idleStore(t)
	few := st.idleSnapMin() - 1
	applyQuietly(t, st, s, 1, few)
	waitIdleDeclined(t, st, fsys)
	if got := snapshotZxids(t, fsys); len(got) != 0 {
		t.Fatalf("snapshots %v after %d writes and a lull; want none (idle minimum %d)", got, few, st.idleSnapMin())
	}
	if w := st.busyWrites.Load(); w != few {
		t.Fatalf("busyWrites %d, want the %d writes still counted", w, few)
	}
	// More writes reach the minimum, and the next lull snapshots them all.
	applyQuietly(t, st, s, few+1, 300)
	waitSnapshotAt(t, fsys, 300)
}

// An idle snapshot waits out the spacing after the last snapshot (four
// times its duration), which bounds what bursts and lulls in turn cost.
func TestDisklessIdleSnapshotWaitsOutSpacing(t *testing.T) {
	st, s, fsys := idleStore(t)
	st.snapBusyUntil.Store(time.Now().Add(time.Hour).UnixNano())
	applyQuietly(t, st, s, 1, 300)
	waitIdleDeclined(t, st, fsys)
	if got := snapshotZxids(t, fsys); len(got) != 0 {
		t.Fatalf("snapshots %v during the spacing; want none", got)
	}
	if w := st.busyWrites.Load(); w != 300 {
		t.Fatalf("busyWrites %d, want the 300 writes still counted", w)
	}
	// The spacing over, the lull that still lasts takes the snapshot.
	st.snapBusyUntil.Store(0)
	waitSnapshotAt(t, fsys, 300)
}

// waitIdleDeclined waits until the snapshotter has seen the lull after
// the writes just applied and declined a snapshot three times. It fails
// at once if a snapshot is taken meanwhile, and if the declines have not
// come within 30 s (a check is a millisecond here).
func waitIdleDeclined(t *testing.T, st *storage, fsys vfs.FS) {
	t.Helper()
	from := st.idleDeclined.Load()
	testutil.Eventually(t, 30*time.Second, "three idle snapshots declined", func() bool {
		if got := snapshotZxids(t, fsys); len(got) != 0 {
			t.Fatalf("snapshots %v in the lull; want none", got)
		}
		return st.idleDeclined.Load() >= from+3
	})
}

// waitSnapshotAt waits until a snapshot at zxid z is on disk; the test
// fails if none comes within 30 s (the lull is 5 ms here).
func waitSnapshotAt(t *testing.T, fsys vfs.FS, z int64) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, fmt.Sprintf("a snapshot at zxid %d after a lull", z), func() bool {
		return slices.Contains(snapshotZxids(t, fsys), z)
	})
}
