package kv

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/kv/ring"
)

func mpPut(table string, row []byte, v string) *kvpb.PutRequest {
	return &kvpb.PutRequest{Table: table, Row: row, Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte(v)}}}
}

// TestMultiPutOutcomes: each put of a MultiPut is answered as Put would
// answer it, in order; a follower answers the whole call NotLeader; too
// many puts are refused whole.
func TestMultiPutOutcomes(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	svc := NewService(s, NewLocalGroup(s, "127.0.0.1:7001"))
	if _, err := svc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}
	resp, err := svc.MultiPut(ctx, &kvpb.MultiPutRequest{Puts: []*kvpb.PutRequest{
		mpPut("t", []byte("a"), "1"), mpPut("nope", []byte("b"), "2"), mpPut("t", nil, "3"), mpPut("t", []byte("c"), "4"),
	}})
	if err != nil || len(resp.GetOutcomes()) != 4 {
		t.Fatalf("multi-put: %v %v", resp, err)
	}
	o := resp.GetOutcomes()
	if o[0].GetCode() != 0 || o[0].GetResponse().GetVersion() == 0 || o[3].GetCode() != 0 || o[3].GetResponse().GetVersion() == o[0].GetResponse().GetVersion() {
		t.Fatalf("applied puts: %v, %v", o[0], o[3])
	}
	for _, i := range []int{1, 2} {
		if codes.Code(o[i].GetCode()) != codes.InvalidArgument || o[i].GetMessage() == "" || o[i].GetResponse() != nil {
			t.Fatalf("bad put %d: %v", i, o[i])
		}
	}
	for row, want := range map[string]string{"a": "1", "c": "4"} {
		if cells, err := s.Get("t", []byte(row), ReadOptions{}); err != nil || string(cells[0].Value) != want {
			t.Fatalf("row %s: %v %v", row, cells, err)
		}
	}

	big := &kvpb.MultiPutRequest{}
	for range MaxMultiPut + 1 {
		big.Puts = append(big.Puts, mpPut("t", []byte("x"), "y"))
	}
	if _, err := svc.MultiPut(ctx, big); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("%d puts: %v", len(big.Puts), err)
	}
	if _, err := s.Get("t", []byte("x"), ReadOptions{}); err == nil {
		t.Fatal("a refused multi-put wrote")
	}

	leader := LeaderInfo{ID: 2, Addr: "127.0.0.1:7002", Epoch: 3, Known: true}
	follower := NewService(s, FollowerGroup{leader})
	_, err = follower.MultiPut(ctx, &kvpb.MultiPutRequest{Puts: []*kvpb.PutRequest{mpPut("t", []byte("a"), "5")}})
	var nl *kvpb.NotLeader
	for _, d := range status.Convert(err).Details() {
		nl, _ = d.(*kvpb.NotLeader)
	}
	if status.Code(err) != codes.Unavailable || nl.GetLeaderAddress() != leader.Addr {
		t.Fatalf("follower: %v (detail %v)", err, nl)
	}
}

// TestShardedMultiPut: a storage node's MultiPut routes each put to its
// row's owner, proposing the puts of an RG it leads together; a put of a
// row the node does not own, or whose RG it does not lead, gets that
// WrongRange or NotLeader as its own outcome.
func TestShardedMultiPut(t *testing.T) {
	ctx := context.Background()
	r, err := ring.Build([]ring.GroupID{1, 2, 3}, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := openMem(t, vfs.NewMem(), "rg1"), openMem(t, vfs.NewMem(), "rg2")
	defer s1.Close()
	defer s2.Close()
	leader2 := LeaderInfo{ID: 3, Addr: "127.0.0.1:7003", Epoch: 5, Known: true}
	g1 := &batchGroup{LocalGroup: NewLocalGroup(s1, "127.0.0.1:7001")}
	svc := NewShardedService(fixedRing{r}, nil, ClusterInfo{}, map[ring.GroupID]*Service{
		1: NewGroupService(s1, g1, 1),
		2: NewGroupService(s2, FollowerGroup{leader2}, 2),
	})
	if _, err := svc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}, Group: 1}); err != nil {
		t.Fatal(err)
	}
	row1, row2, row3 := rowOf(t, r, 1), rowOf(t, r, 2), rowOf(t, r, 3)
	resp, err := svc.MultiPut(ctx, &kvpb.MultiPutRequest{Puts: []*kvpb.PutRequest{mpPut("t", row1, "1"), mpPut("t", row2, "2"), mpPut("t", row3, "3"), mpPut("t", row1, "1")}})
	if err != nil {
		t.Fatal(err)
	}
	o := resp.GetOutcomes()
	if fmt.Sprint(g1.sizes) != "[2]" || o[3].GetCode() != 0 || o[3].GetResponse().GetVersion() <= o[0].GetResponse().GetVersion() {
		t.Fatalf("RG 1's puts: batches %v, outcomes %v and %v (want one batch of both, in order)", g1.sizes, o[0], o[3])
	}
	if o[0].GetCode() != 0 {
		t.Fatalf("RG 1's row: %v", o[0])
	}
	if codes.Code(o[1].GetCode()) != codes.Unavailable || o[1].GetNotLeader().GetLeaderAddress() != leader2.Addr || o[1].GetNotLeader().GetGroup() != 2 {
		t.Fatalf("RG 2's row: %v", o[1])
	}
	if codes.Code(o[2].GetCode()) != codes.OutOfRange || o[2].GetWrongRange().GetGroup() != 3 || o[2].GetWrongRange().GetRingVersion() != r.Version() {
		t.Fatalf("RG 3's row: %v", o[2])
	}
	if cells, err := s1.Get("t", row1, ReadOptions{}); err != nil || string(cells[0].Value) != "1" {
		t.Fatalf("RG 1's store: %v %v", cells, err)
	}
}

// batchGroup is a LocalGroup that records the sizes of its batches.
type batchGroup struct {
	*LocalGroup
	sizes []int
}

func (g *batchGroup) ProposeAll(ctx context.Context, datas [][]byte) []error {
	g.sizes = append(g.sizes, len(datas))
	return g.LocalGroup.ProposeAll(ctx, datas)
}

// TestMultiPutChunks: the group gets a MultiPut's puts together, in
// chunks no larger than the free in-flight slots (a MultiPut never holds
// slots while it waits for more); a put refused before proposing is
// answered alone.
func TestMultiPutChunks(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, vfs.NewMem(), "db")
	defer s.Close()
	g := &batchGroup{LocalGroup: NewLocalGroup(s, "127.0.0.1:7001")}
	svc := NewService(s, g)
	svc.inflight = make(chan struct{}, 4)
	if _, err := svc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}
	req := &kvpb.MultiPutRequest{}
	for i := range 11 {
		row := fmt.Appendf(nil, "r%d", i)
		if i == 5 {
			row = nil // refused by its validation, never proposed
		}
		req.Puts = append(req.Puts, mpPut("t", row, fmt.Sprint(i)))
	}
	resp, err := svc.MultiPut(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(g.sizes) != "[4 4 2]" {
		t.Fatalf("batches %v, want [4 4 2]", g.sizes)
	}
	for i, o := range resp.GetOutcomes() {
		if i == 5 {
			if codes.Code(o.GetCode()) != codes.InvalidArgument {
				t.Fatalf("put %d: %v", i, o)
			}
			continue
		}
		if o.GetCode() != 0 {
			t.Fatalf("put %d: %v", i, o)
		}
		if cells, err := s.Get("t", fmt.Appendf(nil, "r%d", i), ReadOptions{}); err != nil || string(cells[0].Value) != fmt.Sprint(i) {
			t.Fatalf("row %d: %v %v", i, cells, err)
		}
	}
	if n := len(svc.inflight); n != 0 {
		t.Fatalf("%d in-flight slots still held", n)
	}
}

// okStatusError is an error whose gRPC status reads OK.
type okStatusError struct{}

func (okStatusError) Error() string              { return "failed, but says OK" }
func (okStatusError) GRPCStatus() *status.Status { return status.New(codes.OK, "") }

// TestPutOutcomeOfErrors: an error becomes its status's code, message
// and details; one whose status reads OK becomes Unknown, never an
// outcome that reads as success.
func TestPutOutcomeOfErrors(t *testing.T) {
	o := putOutcome(nil, status.Error(codes.InvalidArgument, "bad row"))
	if codes.Code(o.GetCode()) != codes.InvalidArgument || o.GetMessage() != "bad row" || o.GetResponse() != nil {
		t.Fatalf("status error: %v", o)
	}
	o = putOutcome(nil, fmt.Errorf("plain"))
	if codes.Code(o.GetCode()) != codes.Unknown || o.GetMessage() != "plain" {
		t.Fatalf("plain error: %v", o)
	}
	o = putOutcome(nil, okStatusError{})
	if codes.Code(o.GetCode()) != codes.Unknown || o.GetResponse() != nil {
		t.Fatalf("an error whose status reads OK: %v", o)
	}
	resp := &kvpb.PutResponse{Version: 7}
	if o = putOutcome(resp, nil); o.GetCode() != 0 || o.GetResponse() != resp {
		t.Fatalf("success: %v", o)
	}
}
