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

type fixedRing struct{ r *ring.Ring }

func (f fixedRing) Ring() *ring.Ring { return f.r }

func wrongRange(t *testing.T, err error) *kvpb.WrongRange {
	t.Helper()
	if status.Code(err) != codes.OutOfRange {
		t.Fatalf("want OUT_OF_RANGE, got %v", err)
	}
	for _, d := range status.Convert(err).Details() {
		if wr, ok := d.(*kvpb.WrongRange); ok {
			return wr
		}
	}
	t.Fatalf("OUT_OF_RANGE without a WrongRange detail: %v", err)
	return nil
}

// rowOf finds a row that r places in group g.
func rowOf(t *testing.T, r *ring.Ring, g ring.GroupID) []byte {
	for i := range 10000 {
		if row := []byte(fmt.Sprintf("row%d", i)); r.Owner(row) == g {
			return row
		}
	}
	t.Fatalf("no row of %v", g)
	return nil
}

// TestShardedServiceRouting: a node hosting RG 1 (leading) and RG 2 (a
// follower) of a three-RG ring serves RG 1's rows, answers NotLeader
// naming RG 2 and its leader for RG 2's rows, and WrongRange with the
// ring version for RG 3's rows and for RGs it does not host.
func TestShardedServiceRouting(t *testing.T) {
	ctx := context.Background()
	r, err := ring.Build([]ring.GroupID{1, 2, 3}, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	s1 := openMem(t, vfs.NewMem(), "rg1")
	s2 := openMem(t, vfs.NewMem(), "rg2")
	leader2 := LeaderInfo{ID: 3, Addr: "127.0.0.1:7003", Epoch: 5, Known: true}
	svc := NewShardedService(fixedRing{r}, nil, ClusterInfo{CMConnect: "127.0.0.1:2181", CMRoot: "/acazoo"}, map[ring.GroupID]*Service{
		1: NewGroupService(s1, NewLocalGroup(s1, "127.0.0.1:7001"), 1),
		2: NewGroupService(s2, FollowerGroup{leader2}, 2),
	})
	if _, err := svc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("create-table naming no RG on a node of two: %v", err)
	}
	if _, err := svc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}, Group: 1}); err != nil {
		t.Fatal(err)
	}
	put := func(row []byte) error {
		_, err := svc.Put(ctx, &kvpb.PutRequest{Table: "t", Row: row, Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte("v")}}})
		return err
	}
	row1, row2, row3 := rowOf(t, r, 1), rowOf(t, r, 2), rowOf(t, r, 3)
	if err := put(row1); err != nil {
		t.Fatalf("put of RG 1's row: %v", err)
	}
	if got, err := s1.Get("t", row1, ReadOptions{}); err != nil || len(got) != 1 {
		t.Fatalf("RG 1's store: %v %v", got, err)
	}
	err = put(row2)
	var nl *kvpb.NotLeader
	for _, d := range status.Convert(err).Details() {
		nl, _ = d.(*kvpb.NotLeader)
	}
	if status.Code(err) != codes.Unavailable || nl == nil || nl.GetGroup() != 2 || nl.GetLeaderAddress() != leader2.Addr || nl.GetEpoch() != 5 {
		t.Fatalf("put of RG 2's row: %v (detail %v)", err, nl)
	}
	if wr := wrongRange(t, put(row3)); wr.GetGroup() != 3 || wr.GetRingVersion() != r.Version() {
		t.Fatalf("put of RG 3's row: %v", wr)
	}
	_, err = svc.Scan(ctx, &kvpb.ScanRequest{Table: "t", Group: 3})
	if wr := wrongRange(t, err); wr.GetGroup() != 3 {
		t.Fatalf("scan of RG 3: %v", wr)
	}
	_, err = svc.MultiGet(ctx, &kvpb.MultiGetRequest{Table: "t", Rows: [][]byte{row1, row3}})
	if wr := wrongRange(t, err); wr.GetGroup() != 3 {
		t.Fatalf("multi-get across RGs: %v", wr)
	}
	if resp, err := svc.MultiGet(ctx, &kvpb.MultiGetRequest{Table: "t", Rows: [][]byte{row1}}); err != nil || len(resp.Rows) != 1 {
		t.Fatalf("multi-get of RG 1: %v %v", resp, err)
	}
	info, err := svc.Cluster(ctx, &kvpb.ClusterRequest{})
	if err != nil || info.GetCmConnect() != "127.0.0.1:2181" || info.GetRingVersion() != r.Version() || len(info.GetGroups()) != 2 {
		t.Fatalf("cluster: %v %v", info, err)
	}
	// Without a ring yet: retriable UNAVAILABLE, nothing written.
	empty := NewShardedService(fixedRing{}, nil, ClusterInfo{}, map[ring.GroupID]*Service{1: NewGroupService(s1, NewLocalGroup(s1, "x"), 1)})
	_, err = empty.Get(ctx, &kvpb.GetRequest{Table: "t", Row: row1})
	if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != ErrNoRing.Error() {
		t.Fatalf("get without a ring: %v", err)
	}
}
