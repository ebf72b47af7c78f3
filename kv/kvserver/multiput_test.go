package kvserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/kv"
)

// TestMultiPutProposesTogether: a MultiPut to a 3-member group's leader
// proposes its puts in one driver call (Group.ProposeAll),
// each answered with its own outcome in order, every applied put on
// every member.
func TestMultiPutProposesTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member group")
	}
	ms, g := startGroup(t)
	ctx := context.Background()
	l := leader(t, ms)
	cc, err := grpc.NewClient(g.Endpoints()[l], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	kc := kvpb.NewKVClient(cc)
	if _, err := kc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}
	req := &kvpb.MultiPutRequest{}
	for i := range kv.MaxMultiPut {
		table := "t"
		if i%100 == 7 {
			table = "nope"
		}
		req.Puts = append(req.Puts, &kvpb.PutRequest{Table: table, Row: fmt.Appendf(nil, "r%04d", i),
			Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: fmt.Appendf(nil, "v%d", i)}}})
	}
	resp, err := kc.MultiPut(ctx, req)
	if err != nil || len(resp.GetOutcomes()) != len(req.Puts) {
		t.Fatalf("multi-put: %d outcomes, %v", len(resp.GetOutcomes()), err)
	}
	var last uint64
	for i, o := range resp.GetOutcomes() {
		if i%100 == 7 {
			if codes.Code(o.GetCode()) != codes.InvalidArgument {
				t.Fatalf("put %d to a missing table: %v", i, o)
			}
			continue
		}
		v := o.GetResponse().GetVersion()
		if o.GetCode() != 0 || v <= last {
			t.Fatalf("put %d: %v after version %d (the puts are proposed in order)", i, o, last)
		}
		last = v
	}
	waitApplied(t, 20*time.Second, ms, zabZxid(last))
	for _, m := range ms {
		for _, i := range []int{0, 6, 8, 500, 999} {
			cells, err := m.store.Get("t", fmt.Appendf(nil, "r%04d", i), kv.ReadOptions{})
			if err != nil || string(cells[0].Value) != fmt.Sprint("v", i) {
				t.Fatalf("member %d row %d: %v %v", m.cfg.ID, i, cells, err)
			}
		}
		if _, err := m.store.Get("t", []byte("r0007"), kv.ReadOptions{}); err == nil {
			t.Fatalf("member %d holds a refused put", m.cfg.ID)
		}
	}
}
