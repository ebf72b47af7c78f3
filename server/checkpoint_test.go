package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"slices"
	"testing"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/metric"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// disklessStore opens a diskless ensemble member's storage on fsys.
func disklessStore(t *testing.T, fsys vfs.FS) (*storage, *datatree.Tree) {
	t.Helper()
	o := &Options{FS: fsys, DataDir: "/data", DataLogDir: "/data", Durability: DurabilityDiskless,
		Ensemble: &Ensemble{ID: 1, Voters: []uint64{1, 2, 3}},
		Logger:   slog.New(slog.DiscardHandler)}
	st, tree, err := openStorage(o)
	if err != nil {
		t.Fatal(err)
	}
	return st, tree
}

// applyCreates applies creates of /n<zxid> for zxids from..to and returns
// them as log entries.
func applyCreates(t *testing.T, tree *datatree.Tree, from, to int64) []zab.Entry {
	t.Helper()
	var ents []zab.Entry
	var res datatree.Result
	for z := from; z <= to; z++ {
		h := txn.Header{SessionID: 1, Zxid: z, Time: z, Type: wire.OpCreate}
		tx := txn.Txn{Type: wire.OpCreate, Path: fmt.Sprintf("/n%d", z), ACL: wire.OpenACLUnsafe,
			ParentCVersion: tree.Get("/").Persisted().CVersion + 1}
		res.Events = res.Events[:0]
		tree.Apply(&h, &tx, &res)
		if res.Err != 0 {
			t.Fatalf("create zxid %d: %v", z, res.Err)
		}
		ents = append(ents, zab.Entry{Zxid: zab.Zxid(z), Data: txn.Append(nil, &h, &tx)})
	}
	return ents
}

func snapshotZxids(t *testing.T, fsys vfs.FS) []int64 {
	t.Helper()
	infos, err := snap.Newest(fsys, "/data/version-2")
	if err != nil {
		t.Fatal(err)
	}
	var z []int64
	for _, in := range infos {
		z = append(z, in.Zxid)
	}
	return z
}

// A checkpoint names the newest snapshot on disk and writes only the log
// after it when the log reaches back that far; a restart then loads that
// snapshot complete, with every entry after it to replay.
func TestCheckpointBesideNewestSnapshot(t *testing.T) {
	fsys := vfs.NewMem()
	st, tree := disklessStore(t, fsys)
	s := &Server{tree: tree}
	log := applyCreates(t, tree, 1, 10)
	if err := st.snapshot(s); err != nil { // a busy snapshot at zxid 10
		t.Fatal(err)
	}
	log = append(log, applyCreates(t, tree, 11, 15)...)
	log = append(log, zab.Entry{Zxid: 16, Data: []byte("an accepted proposal, not applied")})
	entriesAfter := func(z int64) ([]zab.Entry, error) {
		i := slices.IndexFunc(log, func(e zab.Entry) bool { return int64(e.Zxid) > z })
		return log[i:], nil
	}
	if err := st.writeCheckpoint(s, entriesAfter); err != nil {
		t.Fatal(err)
	}
	if got := snapshotZxids(t, fsys); !slices.Equal(got, []int64{10}) {
		t.Fatalf("snapshots after the checkpoint: %v, want only the busy one at 10", got)
	}
	st2, tree2 := disklessStore(t, fsys)
	if !st2.complete || tree2.LastZxid() != 10 {
		t.Fatalf("restart: complete %v at zxid %d; want complete at 10", st2.complete, tree2.LastZxid())
	}
	if len(st2.recovered) != 6 || st2.recovered[0].Zxid != 11 || st2.recovered[5].Zxid != 16 ||
		string(st2.recovered[5].Data) != string(log[15].Data) {
		t.Fatalf("restart recovered %d entries %v..., want zxids 11..16", len(st2.recovered), st2.recovered)
	}
}

// Without a snapshot the log reaches back to, a checkpoint writes a
// complete snapshot of the tree and the entries after it.
func TestCheckpointFullWhenLogCompacted(t *testing.T) {
	for _, name := range []string{"no snapshot yet", "log compacted past the newest snapshot"} {
		t.Run(name, func(t *testing.T) {
			fsys := vfs.NewMem()
			st, tree := disklessStore(t, fsys)
			st.opts.Metrics = metric.NewRegistry(nil)
			s := &Server{tree: tree}
			applyCreates(t, tree, 1, 5)
			floor := int64(0)
			if name != "no snapshot yet" {
				if err := st.snapshot(s); err != nil {
					t.Fatal(err)
				}
				floor = 8 // as after a SNAP sync to zxid 8
				applyCreates(t, tree, 6, 9)
			}
			pending := zab.Entry{Zxid: 10, Data: []byte("proposal")}
			entriesAfter := func(z int64) ([]zab.Entry, error) {
				if z < floor {
					return nil, zab.ErrCompacted
				}
				return []zab.Entry{pending}, nil
			}
			if err := st.writeCheckpoint(s, entriesAfter); err != nil {
				t.Fatal(err)
			}
			last := tree.LastZxid()
			if got := snapshotZxids(t, fsys); len(got) == 0 || got[0] != last {
				t.Fatalf("snapshots %v, want the newest at the tree's zxid %d", got, last)
			}
			// Counted as a checkpoint's snapshot, the busy one as busy.
			counts := map[string]int64{}
			st.opts.Metrics.CounterSet(metricSnapshots, "", "kind").Each(func(kind string, c *metric.Counter) {
				counts[kind] = c.Load()
			})
			wantBusy := int64(1)
			if name == "no snapshot yet" {
				wantBusy = 0
			}
			if counts[snapCheckpoint] != 1 || counts[snapBusy] != wantBusy || counts[snapIdle] != 0 {
				t.Errorf("%s by kind %v, want checkpoint 1, busy %d, idle 0", metricSnapshots, counts, wantBusy)
			}
			st2, tree2 := disklessStore(t, fsys)
			if !st2.complete || tree2.LastZxid() != last || tree2.NodeCount() != tree.NodeCount() {
				t.Fatalf("restart: complete %v, zxid %d, %d nodes; want complete at %d with %d nodes",
					st2.complete, tree2.LastZxid(), tree2.NodeCount(), last, tree.NodeCount())
			}
			if len(st2.recovered) != 1 || st2.recovered[0].Zxid != 10 {
				t.Fatalf("restart recovered %v, want the pending proposal", st2.recovered)
			}
		})
	}
}

// A busy snapshot that was running when a checkpoint was written is not
// published: the checkpoint's sidecar must stay beside the newest snapshot.
func TestBusySnapshotDroppedAfterCheckpoint(t *testing.T) {
	fsys := vfs.NewMem()
	st, tree := disklessStore(t, fsys)
	s := &Server{tree: tree}
	log := applyCreates(t, tree, 1, 4)
	if err := st.snapshot(s); err != nil {
		t.Fatal(err)
	}
	log = append(log, applyCreates(t, tree, 5, 2000)...)
	// The checkpoint lands after the next busy snapshot has written its
	// file and before it is published.
	st.beforePublish = func() {
		st.beforePublish = nil
		err := st.writeCheckpoint(s, func(z int64) ([]zab.Entry, error) {
			i := slices.IndexFunc(log, func(e zab.Entry) bool { return int64(e.Zxid) > z })
			return log[i:], nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	if err := st.snapshot(s); err != nil {
		t.Fatal(err)
	}
	if st.beforePublish != nil {
		t.Fatal("the hook did not run; the test did not interleave")
	}
	if got := snapshotZxids(t, fsys); !slices.Equal(got, []int64{4}) {
		t.Fatalf("snapshots %v, want only the one at 4 (the one at 2000 dropped)", got)
	}
	names, _ := fsys.List("/data/version-2")
	if !slices.Contains(names, checkpointName(4)) {
		t.Fatalf("no sidecar beside snapshot 4: %v", names)
	}
	st2, tree2 := disklessStore(t, fsys)
	if !st2.complete || tree2.LastZxid() != 4 || len(st2.recovered) != 1996 {
		t.Fatalf("restart: complete %v at %d with %d entries, want complete at 4 with 1996",
			st2.complete, tree2.LastZxid(), len(st2.recovered))
	}
}

// A sidecar decodes to what was encoded; a flipped byte or a cut tail is
// refused.
func TestCheckpointEncoding(t *testing.T) {
	// Small entries, an empty one, one larger than the encoder's 1 MiB
	// chunk, and enough after it to fill several chunks.
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	ents := []zab.Entry{{Zxid: 5, Data: []byte("a")}, {Zxid: 7, Data: nil}, {Zxid: 1 << 33, Data: big}}
	for i := range 20000 {
		ents = append(ents, zab.Entry{Zxid: 1<<33 + zab.Zxid(i+1), Data: bytes.Repeat([]byte{byte(i)}, 1+i%300)})
	}
	b := roundTripCheckpoint(t, ents)
	bad := bytes.Clone(b.Bytes())
	bad[len(bad)/2] ^= 1
	if _, err := decodeCheckpoint(bad); err == nil {
		t.Fatal("a flipped byte was accepted")
	}
	if _, err := decodeCheckpoint(b.Bytes()[:b.Len()-1]); err == nil {
		t.Fatal("a cut sidecar was accepted")
	}
	// Bytes after the checksum (a recycled spare's) are not part of it.
	tail := append(bytes.Clone(b.Bytes()), bytes.Repeat([]byte{0xff}, 4096)...)
	if got, err := decodeCheckpoint(tail); err != nil || len(got) != len(ents) {
		t.Fatalf("with a tail: %d entries, err %v", len(got), err)
	}
	// The first version: no length, the checksum last.
	v1 := []byte(checkpointMagicV1)
	v1 = binary.AppendUvarint(v1, 1)
	v1 = binary.AppendUvarint(v1, 9)
	v1 = binary.AppendUvarint(v1, 2)
	v1 = append(v1, "ok"...)
	v1 = binary.BigEndian.AppendUint32(v1, crc32.Checksum(v1, crcTable))
	if got, err := decodeCheckpoint(v1); err != nil || len(got) != 1 || got[0].Zxid != 9 || string(got[0].Data) != "ok" {
		t.Fatalf("first version: %v, %v", got, err)
	}
}

// A checkpoint is written over the spare and invalidating it makes it the
// spare again; a shorter checkpoint over a longer one's bytes reads back
// as itself, and a restart from it is complete.
func TestCheckpointRecyclesSpare(t *testing.T) {
	fsys := vfs.NewMem()
	st, tree := disklessStore(t, fsys)
	s := &Server{tree: tree}
	dir := "/data/version-2"
	if err := st.makeSpareCheckpoint(t.Context()); err != nil {
		t.Fatal(err)
	}
	spare := dir + "/" + spareCheckpointName
	if fi, err := fsys.Stat(spare); err != nil || fi.Size() != spareCheckpointSize {
		t.Fatalf("spare: %v, %v", fi, err)
	}
	log := applyCreates(t, tree, 1, 10)
	if err := st.snapshot(s); err != nil { // a busy snapshot at zxid 10
		t.Fatal(err)
	}
	entriesAfter := func(z int64) ([]zab.Entry, error) {
		i := slices.IndexFunc(log, func(e zab.Entry) bool { return int64(e.Zxid) > z })
		return log[i:], nil
	}
	// A long proposal first, then, after invalidation, a short one: the
	// second is written over the first's bytes.
	log = append(log, zab.Entry{Zxid: 11, Data: bytes.Repeat([]byte("long "), 1000)})
	if err := st.writeCheckpoint(s, entriesAfter); err != nil {
		t.Fatal(err)
	}
	if ok, _ := vfs.Exists(fsys, spare); ok {
		t.Fatal("the spare is still there after a checkpoint was written into it")
	}
	if err := st.invalidateCheckpoints(); err != nil {
		t.Fatal(err)
	}
	if got := listPrefix(t, fsys, dir, checkpointPrefix); len(got) != 0 {
		t.Fatalf("checkpoints after invalidation: %v", got)
	}
	if ok, _ := vfs.Exists(fsys, spare); !ok {
		t.Fatal("invalidation did not keep the checkpoint as the spare")
	}
	log[10] = zab.Entry{Zxid: 11, Data: []byte("short")}
	if err := st.writeCheckpoint(s, entriesAfter); err != nil {
		t.Fatal(err)
	}
	if fi, err := fsys.Stat(dir + "/" + checkpointName(10)); err != nil || fi.Size() != spareCheckpointSize {
		t.Fatalf("checkpoint written over the spare: %v, %v (want the spare's size, %d)", fi, err, spareCheckpointSize)
	}
	st2, tree2 := disklessStore(t, fsys)
	if !st2.complete || tree2.LastZxid() != 10 || len(st2.recovered) != 1 || string(st2.recovered[0].Data) != "short" {
		t.Fatalf("restart: complete %v at %d, recovered %v", st2.complete, tree2.LastZxid(), st2.recovered)
	}
	// A spare made while a recycled one is in place leaves it alone.
	if err := st.invalidateCheckpoints(); err != nil {
		t.Fatal(err)
	}
	if err := st.makeSpareCheckpoint(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := listPrefix(t, fsys, dir, "spare"); !slices.Equal(got, []string{spareCheckpointName}) {
		t.Fatalf("spare files: %v", got)
	}
}

// roundTripCheckpoint encodes ents, checks that they decode to the same
// entries and returns the encoding.
func roundTripCheckpoint(t *testing.T, ents []zab.Entry) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	if err := encodeCheckpoint(&b, ents); err != nil {
		t.Fatal(err)
	}
	got, err := decodeCheckpoint(b.Bytes())
	if err != nil || len(got) != len(ents) {
		t.Fatalf("decoded %d entries of %d, err %v", len(got), len(ents), err)
	}
	for i := range ents {
		if got[i].Zxid != ents[i].Zxid || !bytes.Equal(got[i].Data, ents[i].Data) {
			t.Fatalf("entry %d: got zxid %v and %d bytes, wrote %v and %d", i, got[i].Zxid, len(got[i].Data), ents[i].Zxid, len(ents[i].Data))
		}
	}
	return &b
}
