package kvserver

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/replica"
)

// startGroup starts a 3-member group as members the test can stop.
func startGroup(t *testing.T) ([]*member, *LocalGroup) {
	t.Helper()
	g, err := NewLocalGroup(3, t.TempDir(), replica.Sync, 100*time.Millisecond, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]*member, len(g.Configs))
	for i, c := range g.Configs {
		ms[i] = &member{cfg: c}
		ms[i].start(t)
	}
	t.Cleanup(func() {
		for _, m := range ms {
			if m.running() {
				m.stop(t)
			}
		}
	})
	return ms, g
}

// TestReadsSeeAcknowledgedWrites: concurrent readers sharing
// confirmation rounds each see every write acknowledged before their
// read began: a worker reads back its own last write, and another
// worker's row at least at the value that worker had acknowledged.
func TestReadsSeeAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member group")
	}
	_, g := startGroup(t)
	c, err := kvclient.New(kvclient.Config{Endpoints: g.Endpoints(), RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	const workers, ops = 4, 60
	var acked [workers]atomic.Int64
	row := func(w int) []byte { return []byte("w" + strconv.Itoa(w)) }
	read := func(w int) (int64, error) {
		r, err := c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: row(w)})
		if status.Code(err) == codes.NotFound {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(string(r.Cells[0].Value), 10, 64)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(1); i <= ops; i++ {
				v := []byte(strconv.FormatInt(i, 10))
				if _, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: row(w), Cells: []*kvpb.Cell{{Family: "f", Qualifier: []byte("q"), Value: v}}}); err != nil {
					errs <- err
					return
				}
				acked[w].Store(i)
				if got, err := read(w); err != nil || got != i {
					errs <- fmt.Errorf("worker %d read its row at %d after writing %d (%v)", w, got, i, err)
					return
				}
				u := (w + int(i)) % workers
				lo := acked[u].Load()
				if got, err := read(u); err != nil || got < lo {
					errs <- fmt.Errorf("worker %d read row %d at %d, acknowledged at %d before the read (%v)", w, u, got, lo, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestReadNeedsQuorum: a leader whose followers are gone serves no read,
// though it still believes it leads until syncLimit passes: the read's
// confirmation round finds no quorum.
func TestReadNeedsQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member group")
	}
	ms, g := startGroup(t)
	c, err := kvclient.New(kvclient.Config{Endpoints: g.Endpoints(), RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte("r"), Cells: []*kvpb.Cell{{Family: "f", Qualifier: []byte("q"), Value: []byte("v")}}}); err != nil {
		t.Fatal(err)
	}
	l := leader(t, ms)
	cc, err := grpc.NewClient(ms[l].cfg.APIAddrs[ms[l].cfg.ID], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	api := kvpb.NewKVClient(cc)
	get := func() error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := api.Get(ctx, &kvpb.GetRequest{Table: "t", Row: []byte("r")})
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("a read on the leader of a whole group: %v", err)
	}
	for i, m := range ms {
		if i != l {
			m.stop(t)
		}
	}
	if err := get(); err == nil {
		t.Fatal("the leader served a read with no follower left")
	} else if c := status.Code(err); c != codes.Unavailable && c != codes.Aborted {
		t.Fatalf("a read with no quorum: %v, want UNAVAILABLE or ABORTED", err)
	}
}
