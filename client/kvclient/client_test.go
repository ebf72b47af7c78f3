package kvclient_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/apisrv"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/kv"
)

func serve(t *testing.T, group func(addr string) kv.Group, store *kv.Store) string {
	t.Helper()
	srv, err := apisrv.Listen("127.0.0.1:0", apisrv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kvpb.RegisterKVServer(srv.Registrar(), kv.NewService(store, group(srv.Addr().String())))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Addr().String()
}

func openStore(t *testing.T) *kv.Store {
	t.Helper()
	s, err := kv.Open(kv.Options{FS: vfs.NewMem(), Dir: "db", PebbleWAL: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestClientAgainstLeaderViaFollower drives every call through a
// follower's endpoint: the client follows NotLeader to the leader.
func TestClientAgainstLeaderViaFollower(t *testing.T) {
	leaderStore := openStore(t)
	leaderAddr := serve(t, func(addr string) kv.Group { return kv.NewLocalGroup(leaderStore, addr) }, leaderStore)
	followerAddr := serve(t, func(string) kv.Group {
		return kv.FollowerGroup{LeaderInfo: kv.LeaderInfo{ID: 1, Addr: leaderAddr, Epoch: 1, Known: true}}
	}, openStore(t))

	ctx := context.Background()
	c, err := kvclient.New(kvclient.Config{Endpoints: []string{followerAddr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf", MaxVersions: 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("create twice: %v", err)
	}
	put := func(row, q, v string) uint64 {
		t.Helper()
		r, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte(row), Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte(q), Value: []byte(v)}}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Version
	}
	v1 := put("r1", "a", "1")
	v2 := put("r1", "a", "2")
	put("r2", "a", "x")
	if v2 <= v1 {
		t.Fatalf("versions %d then %d", v1, v2)
	}
	g, err := c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: []byte("r1"), Options: &kvpb.ReadOptions{MaxVersions: 2}})
	if err != nil || len(g.Cells) != 2 || string(g.Cells[0].Value) != "2" || g.Cells[0].Version != v2 || g.Cells[1].Version != v1 {
		t.Fatalf("get: %v %v", g, err)
	}
	if _, err := c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: []byte("nope")}); !kvclient.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
	sc, err := c.Scan(ctx, &kvpb.ScanRequest{Table: "t"})
	if err != nil || len(sc.Rows) != 2 || string(sc.Rows[1].Key) != "r2" {
		t.Fatalf("scan: %v %v", sc, err)
	}
	mg, err := c.MultiGet(ctx, &kvpb.MultiGetRequest{Table: "t", Rows: [][]byte{[]byte("r2"), []byte("zz")}})
	if err != nil || len(mg.Rows) != 1 {
		t.Fatalf("multiget: %v %v", mg, err)
	}
	cp := func(expect string) bool {
		r, err := c.CheckAndPut(ctx, &kvpb.CheckAndPutRequest{Table: "t", Row: []byte("r1"),
			Condition: &kvpb.Condition{Family: "cf", Qualifier: []byte("a"), Value: []byte(expect)},
			Cells:     []*kvpb.Cell{{Family: "cf", Qualifier: []byte("a"), Value: []byte("3")}}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Succeeded
	}
	if cp("1") || !cp("2") || cp("2") {
		t.Fatal("check-and-put outcomes")
	}
	if _, err := c.Delete(ctx, &kvpb.DeleteRequest{Table: "t", Row: []byte("r1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: []byte("r1")}); !kvclient.IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}

	// Bad input: clear InvalidArgument errors.
	for name, err := range map[string]error{
		"unknown table": func() error {
			_, err := c.Put(ctx, &kvpb.PutRequest{Table: "nope", Row: []byte("r"), Cells: []*kvpb.Cell{{Family: "cf"}}})
			return err
		}(),
		"unknown family": func() error {
			_, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte("r"), Cells: []*kvpb.Cell{{Family: "nope"}}})
			return err
		}(),
		"big row": func() error {
			_, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: make([]byte, kv.MaxRowLen+1), Cells: []*kvpb.Cell{{Family: "cf"}}})
			return err
		}(),
		"big value": func() error {
			_, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte("r"), Cells: []*kvpb.Cell{{Family: "cf", Value: make([]byte, kv.MaxValueLen+1)}}})
			return err
		}(),
		"no condition": func() error {
			_, err := c.CheckAndPut(ctx, &kvpb.CheckAndPutRequest{Table: "t", Row: []byte("r")})
			return err
		}(),
		"get no table": func() error { _, err := c.Get(ctx, &kvpb.GetRequest{Table: "nope", Row: []byte("r")}); return err }(),
		"get no row":   func() error { _, err := c.Get(ctx, &kvpb.GetRequest{Table: "t"}); return err }(),
	} {
		if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() == "" {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}

	// The follower's own answer carries the NotLeader detail.
	conn := kvpb.NewKVClient(mustConn(t, followerAddr))
	_, err = conn.Get(ctx, &kvpb.GetRequest{Table: "t", Row: []byte("r2")})
	nl, ok := kvclient.NotLeader(err)
	if status.Code(err) != codes.Unavailable || !ok || nl.LeaderAddress != leaderAddr || nl.Epoch != 1 || nl.LeaderId != 1 {
		t.Fatalf("follower's answer: %v %v", err, nl)
	}
	if !strings.Contains(err.Error(), "not the leader") {
		t.Fatalf("message: %v", err)
	}
}

// TestClientSkipsDeadEndpoint: an endpoint that refuses connections is
// passed over for the next one; a deadline bounds a call that finds no
// member at all.
func TestClientSkipsDeadEndpoint(t *testing.T) {
	store := openStore(t)
	addr := serve(t, func(a string) kv.Group { return kv.NewLocalGroup(store, a) }, store)
	dead := deadAddr(t)
	c, err := kvclient.New(kvclient.Config{Endpoints: []string{dead, addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}
	none, _ := kvclient.New(kvclient.Config{Endpoints: []string{dead}, RequestTimeout: 300 * time.Millisecond})
	defer none.Close()
	if _, err := none.ListTables(ctx); status.Code(err) != codes.Unavailable && status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("no member: %v", err)
	}
}
