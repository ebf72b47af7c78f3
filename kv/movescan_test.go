package kv

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/kv/ring"
)

// ringBox is a RingSource whose ring a test replaces.
type ringBox struct{ r atomic.Pointer[ring.Ring] }

func (b *ringBox) Ring() *ring.Ring { return b.r.Load() }

// TestShardedScanDuringMove: a node hosting RG 1 (the source) and RG 2
// (the target) of a move stopped after its copy: the moved rows are in
// both stores. A scan of both RGs under one ring version returns every
// row exactly once, before the switch (from the source) and after it
// (from the target); a scan naming a ring version the node does not hold
// is refused with the node's version; the limit counts returned rows.
// Version 0 shows each store as it is, copies included.
func TestShardedScanDuringMove(t *testing.T) {
	ctx := context.Background()
	// v1: RG 1 owns moveHalf, RG 2 the rest. v2: RG 2 owns everything.
	v1, err := ring.New(1, []ring.Token{{Token: moveHalf.Start, Group: 2}, {Token: moveHalf.End, Group: 1}})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := ring.New(2, []ring.Token{{Token: moveHalf.Start, Group: 2}, {Token: moveHalf.End, Group: 2}})
	if err != nil {
		t.Fatal(err)
	}
	box := &ringBox{}
	box.r.Store(v1)
	fs := vfs.NewMem()
	sa, sb := openMem(t, fs, "rg1"), openMem(t, fs, "rg2")
	defer sa.Close()
	defer sb.Close()
	a := NewGroupService(sa, NewLocalGroup(sa, "127.0.0.1:7001"), 1)
	b := NewGroupService(sb, NewLocalGroup(sb, "127.0.0.1:7002"), 2)
	svc := NewShardedService(box, nil, ClusterInfo{}, map[ring.GroupID]*Service{1: a, 2: b})
	for g := uint32(1); g <= 2; g++ {
		if _, err := svc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}, Group: g}); err != nil {
			t.Fatal(err)
		}
	}
	const n = 30
	want := map[string]bool{}
	for i := range n {
		for _, row := range [][]byte{rowIn(moveHalf, i), rowIn(ring.Range{Start: moveHalf.End, End: moveHalf.Start}, i)} {
			if _, err := svc.Put(ctx, &kvpb.PutRequest{Table: "t", Row: row, Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: row}}}); err != nil {
				t.Fatal(err)
			}
			want[string(row)] = true
		}
	}
	// The move, stopped after the copy: fence in RG 1, export, ingest
	// into RG 2.
	const move = 5
	if err := a.MoveStep(ctx, OpFence, &MoveOp{ID: move, Range: moveHalf, To: 2, RingVersion: 2}); err != nil {
		t.Fatal(err)
	}
	var after []byte
	for {
		page, err := a.ExportRange(ctx, move, moveHalf, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.MoveStep(ctx, OpIngest, &MoveOp{ID: move, Range: moveHalf, Cells: page.Cells, Clients: page.Clients}); err != nil {
			t.Fatal(err)
		}
		if page.Done {
			break
		}
		after = page.Next
	}
	if rows, _ := sb.Scan("t", nil, nil, 0, ReadOptions{}); len(rows) != 2*n {
		t.Fatalf("RG 2's store holds %d rows after the copy, want %d (its own and the copies)", len(rows), 2*n)
	}
	scanAll := func(v uint64, limit uint32) map[string]int {
		t.Helper()
		got := map[string]int{}
		for g := uint32(1); g <= 2; g++ {
			resp, err := svc.Scan(ctx, &kvpb.ScanRequest{Table: "t", Group: g, RingVersion: v, Limit: limit})
			if err != nil {
				t.Fatalf("scan of rg%d at ring v%d: %v", g, v, err)
			}
			for _, r := range resp.GetRows() {
				got[string(r.GetKey())]++
			}
		}
		return got
	}
	once := func(what string, got map[string]int) {
		t.Helper()
		for row := range want {
			if got[row] != 1 {
				t.Fatalf("%s: row %q returned %d times", what, row, got[row])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
		}
	}
	once("before the switch", scanAll(1, 0))
	if got := scanAll(0, 0); len(got) != len(want) || got[string(rowIn(moveHalf, 0))] != 2 {
		t.Fatalf("ring version 0 (unfiltered): %d rows, a moved row %d times; want %d, twice", len(got), got[string(rowIn(moveHalf, 0))], len(want))
	}
	// The limit counts the rows an RG returns, not the ones it skips.
	if resp, err := svc.Scan(ctx, &kvpb.ScanRequest{Table: "t", Group: 1, RingVersion: 1, Limit: 7}); err != nil || len(resp.GetRows()) != 7 {
		t.Fatalf("scan of rg1 with limit 7: %d rows, %v", len(resp.GetRows()), err)
	}
	for _, r := range func() []*kvpb.Row {
		resp, _ := svc.Scan(ctx, &kvpb.ScanRequest{Table: "t", Group: 2, RingVersion: 1})
		return resp.GetRows()
	}() {
		if moveHalf.Contains(ring.Hash(r.GetKey())) {
			t.Fatalf("rg2 returned %q, a row rg1 owns at v1", r.GetKey())
		}
	}

	box.r.Store(v2) // the switch
	_, err = svc.Scan(ctx, &kvpb.ScanRequest{Table: "t", Group: 1, RingVersion: 1})
	if wr := wrongRange(t, err); wr.GetRingVersion() != 2 {
		t.Fatalf("scan at v1 on a node at v2: %v", wr)
	}
	_, err = svc.Scan(ctx, &kvpb.ScanRequest{Table: "t", Group: 2, RingVersion: 3})
	if wr := wrongRange(t, err); wr.GetRingVersion() != 2 {
		t.Fatalf("scan at v3 on a node at v2: %v", wr)
	}
	once("after the switch, before the drop", scanAll(2, 0))
}
