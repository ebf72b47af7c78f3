package kv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"

	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/zab"
)

func moveSampleMutations() []*Mutation {
	rec := encodeClientRecord(3, Result{Zxid: 9, Succeeded: true})
	half := ring.Range{Start: 0, End: math.MaxUint64 / 2}
	row := rowIn(half, 0)
	return []*Mutation{
		{Op: OpFence, Move: &MoveOp{ID: 1, Range: ring.Range{Start: 5, End: 3}, To: 2, RingVersion: 7}},
		{Op: OpIngest, ReqID: 4, Move: &MoveOp{ID: 1, Range: half,
			Cells:   []MovedCell{{Table: "t", Family: "cf", Row: row, Qualifier: []byte("q"), Version: 1 << 40, Value: []byte("v")}, {Table: "t", Family: "cf", Row: row, Version: 3}},
			Clients: []MovedClient{{Client: 77, Record: rec}}}},
		{Op: OpIngest, Move: &MoveOp{ID: 2, Range: half}},
		{Op: OpSeal, Move: &MoveOp{ID: 1, Range: half}},
		{Op: OpDropRange, Move: &MoveOp{ID: math.MaxUint64, Range: ring.Range{Start: 9, End: 9}}},
	}
}

// rowIn returns the n-th row key "rowN..." whose hash lies in r.
func rowIn(r ring.Range, n int) []byte {
	for i := 0; ; i++ {
		k := []byte(fmt.Sprintf("row%d", i))
		if r.Contains(ring.Hash(k)) {
			if n == 0 {
				return k
			}
			n--
		}
	}
}

func TestMoveMutationValidate(t *testing.T) {
	half := ring.Range{Start: 0, End: math.MaxUint64 / 2}
	outside := rowIn(ring.Range{Start: math.MaxUint64 / 2, End: 0}, 0)
	bad := []*Mutation{
		{Op: OpFence},
		{Op: OpFence, Move: &MoveOp{ID: 1, Range: half}},                                    // no target
		{Op: OpFence, Move: &MoveOp{ID: 0, Range: half, To: 2, RingVersion: 1}},             // id 0
		{Op: OpSeal, Move: &MoveOp{ID: 1, Range: half, To: 2}},                              // target on a seal
		{Op: OpFence, Table: "t", Move: &MoveOp{ID: 1, Range: half, To: 2, RingVersion: 1}}, // a table
		{Op: OpPut, Table: "t", Row: []byte("r"), Cells: []Cell{{"cf", nil, nil}}, Move: &MoveOp{ID: 1}},
		{Op: OpIngest, Move: &MoveOp{ID: 1, Range: half, Cells: []MovedCell{{Table: "t", Family: "cf", Row: outside, Version: 1}}}},
		{Op: OpIngest, Move: &MoveOp{ID: 1, Range: half, Cells: []MovedCell{{Table: "t", Family: "cf", Row: rowIn(half, 0), Version: 0}}}},
		{Op: OpIngest, Move: &MoveOp{ID: 1, Range: half, Clients: []MovedClient{{Client: 1, Record: []byte{1}}}}},
		{Op: OpSeal, Move: &MoveOp{ID: 1, Range: half, Cells: []MovedCell{{Table: "t", Family: "cf", Row: rowIn(half, 0), Version: 1}}}},
	}
	for i, m := range bad {
		if _, err := m.Encode(); !errors.Is(err, ErrInvalid) {
			t.Fatalf("case %d (%v): got %v, want ErrInvalid", i, m.Op, err)
		}
	}
}

// applyResult applies m at z and returns its result.
func moveApplyResult(t *testing.T, s *Store, z zab.Zxid, m *Mutation) Result {
	t.Helper()
	m.ReqID = uint64(z)<<8 | 1
	ch, cancel := s.Await(m.ReqID)
	defer cancel()
	mustApply(t, s, entry(t, z, m))
	select {
	case r := <-ch:
		return r
	default:
		t.Fatalf("no result for %v at %v", m.Op, z)
	}
	return Result{}
}

var moveHalf = ring.Range{Start: math.MaxUint64 / 4, End: math.MaxUint64/4 + math.MaxUint64/2}

func TestMoveFenceRefusesWrites(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "a")
	defer s.Close()
	in, out := rowIn(moveHalf, 0), rowIn(ring.Range{Start: moveHalf.End, End: moveHalf.Start}, 0)
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 3})))
	if r := moveApplyResult(t, s, 2, put("t", string(in), "cf", "q", "1")); !r.Succeeded {
		t.Fatalf("put before the fence: %+v", r)
	}
	// The fence and a write after it in the same Apply: the write is
	// refused, ordered after the fence.
	fence := &Mutation{Op: OpFence, Move: &MoveOp{ID: 7, Range: moveHalf, To: 2, RingVersion: 5}}
	late := put("t", string(in), "cf", "q", "2")
	late.ReqID, late.Client, late.Seq = 99, 1234, 1
	ch, cancel := s.Await(99)
	defer cancel()
	mustApply(t, s, entry(t, 3, fence), entry(t, 4, late))
	r := <-ch
	var wr *WrongRangeError
	if !errors.As(r.Err, &wr) || wr.Group != 2 || wr.RingVersion != 5 {
		t.Fatalf("put after the fence: %+v, want WrongRange rg2 v5", r)
	}
	if _, ok := s.clientRecs[1234]; ok {
		t.Fatal("a refused write was recorded for deduplication")
	}
	for _, m := range []*Mutation{
		{Op: OpDelete, Table: "t", Row: in, Delete: Delete{Scope: ScopeRow}},
		{Op: OpCheckAndPut, Table: "t", Row: in, Cells: []Cell{{"cf", []byte("q"), []byte("3")}}, Cond: Condition{Family: "cf", Qualifier: []byte("q"), Value: []byte("1")}},
		{Op: OpCheckAndDelete, Table: "t", Row: in, Delete: Delete{Scope: ScopeRow}, Cond: Condition{Family: "cf", Absent: true}},
	} {
		if r := moveApplyResult(t, s, s.Applied()+1, m); !errors.As(r.Err, &wr) {
			t.Fatalf("%v after the fence: %+v", m.Op, r)
		}
	}
	if r := moveApplyResult(t, s, s.Applied()+1, put("t", string(out), "cf", "q", "x")); !r.Succeeded {
		t.Fatalf("put outside the fence: %+v", r)
	}
	if err := s.FencedRow(in); !errors.As(err, &wr) {
		t.Fatalf("FencedRow(in) = %v", err)
	}
	if err := s.FencedRow(out); err != nil {
		t.Fatalf("FencedRow(out) = %v", err)
	}
	got, _ := s.Get("t", in, ReadOptions{MaxVersions: 5})
	if want := "cf:q@2=1 "; cellsString(got) != want {
		t.Fatalf("fenced row: %q, want %q", cellsString(got), want)
	}
	// The fence survives a restart (it is in pebble).
	fs := vfs.NewMem()
	s2 := openMem(t, fs, "b")
	mustApply(t, s2, entry(t, 1, fence))
	s2.Close()
	s2 = openMem(t, fs, "b")
	defer s2.Close()
	if err := s2.FencedRow(in); err == nil {
		t.Fatal("fence lost over a restart")
	}
	// A seal of a later move into this RG lifts it.
	moveApplyResult(t, s, s.Applied()+1, &Mutation{Op: OpSeal, Move: &MoveOp{ID: 8, Range: moveHalf}})
	if r := moveApplyResult(t, s, s.Applied()+1, put("t", string(in), "cf", "q", "4")); !r.Succeeded {
		t.Fatalf("put after the range came back: %+v", r)
	}
}

func TestMoveExportIngest(t *testing.T) {
	fs := vfs.NewMem()
	a, b := openMem(t, fs, "a"), openMem(t, fs, "b")
	defer a.Close()
	defer b.Close()
	// Different creation orders: the table ids differ between the RGs.
	mustApply(t, a, entry(t, 1<<32|1, createTable("t", FamilySpec{"cf", 3}, FamilySpec{"x", 1})))
	mustApply(t, b, entry(t, 1, createTable("other", FamilySpec{"cf", 1})), entry(t, 2, createTable("t", FamilySpec{"cf", 3}, FamilySpec{"x", 1})))
	var in, out [][]byte
	for i := range 20 {
		in = append(in, rowIn(moveHalf, i))
		out = append(out, rowIn(ring.Range{Start: moveHalf.End, End: moveHalf.Start}, i))
	}
	z := zab.Zxid(1<<32 | 1)
	for round := range 3 {
		for i := range in {
			z++
			mustApply(t, a, entry(t, z, put("t", string(in[i]), "cf", "q", fmt.Sprint("v", round), "x", "", "w")))
			z++
			mustApply(t, a, entry(t, z, put("t", string(out[i]), "cf", "q", "o")))
		}
	}
	// A write with a request id, to be answered (not applied) in b.
	dup := put("t", string(in[0]), "cf", "q", "dup")
	dup.Client, dup.Seq = 4242, 5
	z++
	mustApply(t, a, entry(t, z, dup))
	dupZ := z

	const move = 11
	if _, err := a.ExportRange(move, moveHalf, nil, 0); !errors.Is(err, ErrNotFenced) {
		t.Fatalf("export before the fence: %v", err)
	}
	z++
	moveApplyResult(t, a, z, &Mutation{Op: OpFence, Move: &MoveOp{ID: move, Range: moveHalf, To: 2, RingVersion: 3}})
	var chunks []MoveChunk
	var after []byte
	for range 1000 {
		c, err := a.ExportRange(move, moveHalf, after, 300)
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
		if c.Done {
			break
		}
		after = c.Next
	}
	if len(chunks) < 3 || !chunks[len(chunks)-1].Done {
		t.Fatalf("%d pages, last done %v: want several", len(chunks), chunks[len(chunks)-1].Done)
	}
	bz := zab.Zxid(2)
	ingestAll := func() {
		for _, c := range chunks {
			bz++
			r := moveApplyResult(t, b, bz, &Mutation{Op: OpIngest, Move: &MoveOp{ID: move, Range: moveHalf, Cells: c.Cells, Clients: c.Clients}})
			if !r.Succeeded {
				t.Fatalf("ingest: %+v", r)
			}
		}
	}
	ingestAll()
	ingestAll() // idempotent
	for _, row := range in {
		wa, _ := a.Get("t", row, ReadOptions{MaxVersions: 10})
		wb, _ := b.Get("t", row, ReadOptions{MaxVersions: 10})
		if cellsString(wa) != cellsString(wb) || len(wa) == 0 {
			t.Fatalf("row %q: source %q, target %q", row, cellsString(wa), cellsString(wb))
		}
	}
	for _, row := range out {
		if wb, _ := b.Get("t", row, ReadOptions{}); len(wb) != 0 {
			t.Fatalf("row %q outside the range ingested: %q", row, cellsString(wb))
		}
	}
	// The repeated request is answered from the copied record.
	bz++
	if r := moveApplyResult(t, b, bz, dup); r.Zxid != dupZ || !r.Succeeded {
		t.Fatalf("repeat in the target: %+v, want the source's answer at %v", r, dupZ)
	}
	// A put in the target is newer than every ingested version.
	bz++
	r := moveApplyResult(t, b, bz, put("t", string(in[0]), "cf", "q", "new"))
	if r.CellVersion() <= uint64(dupZ) {
		t.Fatalf("put in the target at version %d, not above the ingested %d", r.CellVersion(), dupZ)
	}
	got, _ := b.Get("t", in[0], ReadOptions{})
	if want := fmt.Sprintf("cf:q@%d=new x:@", r.CellVersion()); len(got) == 0 || cellsString(got)[:len(want)] != want {
		t.Fatalf("newest after the put: %q, want %q...", cellsString(got), want)
	}
	bz++
	moveApplyResult(t, b, bz, &Mutation{Op: OpSeal, Move: &MoveOp{ID: move, Range: moveHalf}})
	bz++
	if r := moveApplyResult(t, b, bz, &Mutation{Op: OpIngest, Move: &MoveOp{ID: move, Range: moveHalf, Cells: chunks[0].Cells}}); !errors.Is(r.Err, ErrMoveSealed) {
		t.Fatalf("ingest after the seal: %+v", r)
	}
	// The floor survives a restart.
	floor := b.VersionFloor()
	b.Close()
	b = openMem(t, fs, "b")
	if b.VersionFloor() != floor || floor < uint64(dupZ) {
		t.Fatalf("floor %d after restart, %d before", b.VersionFloor(), floor)
	}

	// The source drops the range: only with the move's fence.
	z++
	if r := moveApplyResult(t, a, z, &Mutation{Op: OpDropRange, Move: &MoveOp{ID: move + 1, Range: moveHalf}}); !errors.Is(r.Err, ErrNotFenced) {
		t.Fatalf("drop by another move: %+v", r)
	}
	z++
	if r := moveApplyResult(t, a, z, &Mutation{Op: OpDropRange, Move: &MoveOp{ID: move, Range: moveHalf}}); !r.Succeeded {
		t.Fatalf("drop: %+v", r)
	}
	for _, row := range in {
		if got, _ := a.Get("t", row, ReadOptions{}); len(got) != 0 {
			t.Fatalf("row %q left after the drop", row)
		}
	}
	for _, row := range out {
		if got, _ := a.Get("t", row, ReadOptions{}); len(got) == 0 {
			t.Fatalf("row %q outside the range dropped", row)
		}
	}
}

// TestFenceSet compares the fence set with a model over random ranges
// on a tiny hash space scaled up.
func TestFenceSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const slots = 16
	scale := uint64(math.MaxUint64 / slots)
	pt := func(i uint64) uint64 { return i * scale }
	for iter := range 500 {
		var fs fenceSet
		model := make([]uint64, slots) // slot i holds hash pt(i)+1: move id or 0
		for step := range 8 {
			r := ring.Range{Start: pt(rng.Uint64N(slots)), End: pt(rng.Uint64N(slots))}
			move := uint64(step + 1)
			lift := rng.IntN(3) == 0
			if lift {
				fs = fs.lift(r)
			} else {
				var err error
				if fs, err = fs.add(r, Fence{Move: move, To: 1, RingVersion: 1}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range uint64(slots) {
				if r.Contains(pt(i) + 1) {
					if lift {
						model[i] = 0
					} else {
						model[i] = move
					}
				}
			}
			for i := range uint64(slots) {
				for _, h := range []uint64{pt(i) + 1, pt(i) + scale/2} {
					f, ok := fs.find(h)
					if ok != (model[i] != 0) || ok && f.Move != model[i] {
						t.Fatalf("iter %d step %d: find(%x) = %v %v, model %d", iter, step, h, f, ok, model[i])
					}
				}
			}
			got, err := decodeFences(fs.encode())
			if err != nil || len(got) != len(fs) {
				t.Fatalf("round trip: %v", err)
			}
			if !lift && !fs.covers(r, move) {
				t.Fatalf("covers(%v, %d) false right after adding it", r, move)
			}
		}
	}
	// The whole ring, and ranges touching the top.
	full, _ := fenceSet(nil).add(ring.Range{Start: 5, End: 5}, Fence{Move: 1})
	for _, h := range []uint64{0, 5, 6, math.MaxUint64} {
		if _, ok := full.find(h); !ok {
			t.Fatalf("whole-ring fence misses %x", h)
		}
	}
	top, _ := fenceSet(nil).add(ring.Range{Start: math.MaxUint64, End: 3}, Fence{Move: 1})
	if _, ok := top.find(math.MaxUint64); ok {
		t.Fatal("(max, 3] holds max")
	}
	if _, ok := top.find(0); !ok {
		t.Fatal("(max, 3] misses 0")
	}
}

// TestShardedServiceFence: through a node's service, a fenced row's
// reads and writes answer WrongRange naming the target and the ring
// version of the move; other rows are served. The move steps go through
// the group (Service.MoveStep) and answer their typed statuses.
func TestShardedServiceFence(t *testing.T) {
	ctx := context.Background()
	r, err := ring.Build([]ring.GroupID{1}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	st := openMem(t, vfs.NewMem(), "rg1")
	defer st.Close()
	g := NewGroupService(st, NewLocalGroup(st, "127.0.0.1:7001"), 1)
	svc := NewShardedService(fixedRing{r}, nil, ClusterInfo{}, map[ring.GroupID]*Service{1: g})
	if _, err := svc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}, Group: 1}); err != nil {
		t.Fatal(err)
	}
	in, out := rowIn(moveHalf, 0), rowIn(ring.Range{Start: moveHalf.End, End: moveHalf.Start}, 0)
	put := func(row []byte) error {
		_, err := svc.Put(ctx, &kvpb.PutRequest{Table: "t", Row: row, Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte("v")}}})
		return err
	}
	for _, row := range [][]byte{in, out} {
		if err := put(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.MoveStep(ctx, OpPut, &MoveOp{ID: 1}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a put as a move step: %v", err)
	}
	if _, err := g.ExportRange(ctx, 3, moveHalf, nil, 0); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("export before the fence: %v", err)
	}
	if err := g.MoveStep(ctx, OpFence, &MoveOp{ID: 3, Range: moveHalf, To: 2, RingVersion: 9}); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		if wr := wrongRange(t, err); wr.Group != 2 || wr.RingVersion != 9 {
			t.Fatalf("%s: WrongRange %v, want rg2 v9", what, wr)
		}
	}
	check("put", put(in))
	_, err = svc.Get(ctx, &kvpb.GetRequest{Table: "t", Row: in})
	check("get", err)
	_, err = svc.MultiGet(ctx, &kvpb.MultiGetRequest{Table: "t", Rows: [][]byte{out, in}})
	check("multi-get", err)
	if err := put(out); err != nil {
		t.Fatalf("put outside the range: %v", err)
	}
	if resp, err := svc.Get(ctx, &kvpb.GetRequest{Table: "t", Row: out}); err != nil || len(resp.Cells) != 1 {
		t.Fatalf("get outside the range: %v %v", resp, err)
	}
	page, err := g.ExportRange(ctx, 3, moveHalf, nil, 0)
	if err != nil || !page.Done || len(page.Cells) != 1 || string(page.Cells[0].Row) != string(in) {
		t.Fatalf("export: %+v %v", page, err)
	}
	if err := g.MoveStep(ctx, OpSeal, &MoveOp{ID: 4, Range: moveHalf}); err != nil {
		t.Fatal(err)
	}
	if err := g.MoveStep(ctx, OpIngest, &MoveOp{ID: 4, Range: moveHalf, Cells: page.Cells}); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("ingest after the seal: %v", err)
	}
	if err := g.MoveStep(ctx, OpDropRange, &MoveOp{ID: 4, Range: moveHalf}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("drop without the fence: %v", err)
	}
	// A move sealed here (an aborted one) cannot fence again.
	if err := g.MoveStep(ctx, OpFence, &MoveOp{ID: 4, Range: moveHalf, To: 2, RingVersion: 10}); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("fence of a sealed move: %v", err)
	}
	if err := put(in); err != nil {
		t.Fatalf("put after a refused fence: %v", err)
	}
}

// TestIngestTrimsToMaxVersions: chunks of a move read at different times
// can bring a column more versions than its family keeps; ingest trims
// each column written, as a put does, and a later put (which stops at
// the first version beyond the family's) leaves the family's count.
func TestIngestTrimsToMaxVersions(t *testing.T) {
	s := openMem(t, vfs.NewMem(), "b")
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{"cf", 2})))
	row := rowIn(moveHalf, 0)
	cell := func(v uint64) MovedCell {
		return MovedCell{Table: "t", Family: "cf", Row: row, Qualifier: []byte("q"), Version: v, Value: []byte(fmt.Sprint("v", v))}
	}
	z := zab.Zxid(1)
	for _, cells := range [][]MovedCell{{cell(10), cell(9)}, {cell(12), cell(11)}, {cell(9)}} {
		z++
		if r := moveApplyResult(t, s, z, &Mutation{Op: OpIngest, Move: &MoveOp{ID: 3, Range: moveHalf, Cells: cells}}); r.Err != nil {
			t.Fatalf("ingest at %v: %v", z, r.Err)
		}
	}
	got, err := s.Get("t", row, ReadOptions{MaxVersions: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := "cf:q@12=v12 cf:q@11=v11 "; cellsString(got) != want {
		t.Fatalf("after the ingests got %q, want %q", cellsString(got), want)
	}
	z = 1<<32 | 1 // versions above the ingested ones, as a move's floor makes them
	mustApply(t, s, entry(t, z, put("t", string(row), "cf", "q", "new")))
	got, _ = s.Get("t", row, ReadOptions{MaxVersions: 10})
	if want := fmt.Sprintf("cf:q@%d=new cf:q@12=v12 ", uint64(z)); cellsString(got) != want {
		t.Fatalf("after a put got %q, want %q", cellsString(got), want)
	}
}
