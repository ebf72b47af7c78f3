package kvclient_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/kv"
)

// lossy is a leader whose writes apply but whose answers are lost: the
// first `lose` proposals report ErrRetry (ABORTED: the outcome unknown)
// after applying.
type lossy struct {
	*kv.LocalGroup
	lose atomic.Int32
}

func (g *lossy) Propose(ctx context.Context, data []byte) error {
	if err := g.LocalGroup.Propose(ctx, data); err != nil {
		return err
	}
	if g.lose.Add(-1) >= 0 {
		return fmt.Errorf("leadership lost: %w", kv.ErrRetry)
	}
	return nil
}

// TestWriteRetriedAfterUnknownOutcome: a write whose answer is lost is
// retried with the same request id and answered with the first result;
// it applies once.
func TestWriteRetriedAfterUnknownOutcome(t *testing.T) {
	store := openStore(t)
	g := &lossy{}
	addr := serve(t, func(a string) kv.Group { g.LocalGroup = kv.NewLocalGroup(store, a); return g }, store)
	c, err := kvclient.New(kvclient.Config{Endpoints: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	g.lose.Store(1)
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf", MaxVersions: 10}}}); err != nil {
		t.Fatalf("create table retried: %v (a repeat without dedupe is AlreadyExists)", err)
	}
	g.lose.Store(2)
	req := &kvpb.PutRequest{Table: "t", Row: []byte("r"), Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte("a")}}}
	p, err := c.Put(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if req.RequestId != nil {
		t.Fatal("Put changed the caller's request")
	}
	got, err := c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: []byte("r"), Options: &kvpb.ReadOptions{MaxVersions: 10}})
	if err != nil || len(got.Cells) != 1 || got.Cells[0].Version != p.Version {
		t.Fatalf("after a put retried twice: %v %v, want one version %d", got, err, p.Version)
	}

	// A check-and-put that succeeded on its first attempt reports success
	// (a blind repeat would find its own write and report failure).
	g.lose.Store(1)
	cp, err := c.CheckAndPut(ctx, &kvpb.CheckAndPutRequest{Table: "t", Row: []byte("r"),
		Condition: &kvpb.Condition{Family: "cf", Qualifier: []byte("q"), Value: []byte("a")},
		Cells:     []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte("b")}}})
	if err != nil || !cp.Succeeded {
		t.Fatalf("check-and-put retried: %v %v", cp, err)
	}

	// A request id the caller sets is used as is; a stale one is refused.
	id := &kvpb.RequestId{Client: 42, Sequence: 2}
	put := func(seq uint64, v string) (*kvpb.PutResponse, error) {
		id.Sequence = seq
		return c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte("s"), RequestId: id,
			Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte(v)}}})
	}
	first, err := put(2, "x")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := put(2, "y"); err != nil || again.Version != first.Version {
		t.Fatalf("repeat of sequence 2: %v %v, want version %d", again, err, first.Version)
	}
	if _, err := put(1, "z"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("sequence 1 after 2: %v, want FailedPrecondition", err)
	}
	got, err = c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: []byte("s"), Options: &kvpb.ReadOptions{MaxVersions: 10}})
	if err != nil || len(got.Cells) != 1 || string(got.Cells[0].Value) != "x" {
		t.Fatalf("row s: %v %v", got, err)
	}
	if _, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte("s"), RequestId: &kvpb.RequestId{Client: 42},
		Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte("v")}}}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("client without sequence: %v", err)
	}
}
