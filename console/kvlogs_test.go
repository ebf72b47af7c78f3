package console

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	pvfs "github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/grpc"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/apisrv"
	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/rlog/rlogclient"
	"github.com/corral-db/corral/rlog/rlogsvc"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
)

// serveKV serves the KV API of store with the group group makes.
func serveKV(t *testing.T, store *kv.Store, group func(addr string) kv.Group) string {
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

func openKVStore(t *testing.T) *kv.Store {
	t.Helper()
	s, err := kv.Open(kv.Options{FS: pvfs.NewMem(), Dir: "db", PebbleWAL: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestKVPage drives the Key-value endpoints against a leader (an
// unreplicated member) and a follower that names it, plus an endpoint
// where nothing listens.
func TestKVPage(t *testing.T) {
	store := openKVStore(t)
	leader := serveKV(t, store, func(addr string) kv.Group { return kv.NewLocalGroup(store, addr) })
	follower := serveKV(t, openKVStore(t), func(string) kv.Group {
		return kv.FollowerGroup{LeaderInfo: kv.LeaderInfo{ID: 7, Addr: leader, Epoch: 3, Known: true}}
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()

	ctx := context.Background()
	svc := kv.NewService(store, kv.NewLocalGroup(store, leader))
	if _, err := svc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "users",
		Families: []*kvpb.Family{{Name: "info", MaxVersions: 3}, {Name: "x"}}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"alice", "bob", "carol"} {
		if _, err := svc.Put(ctx, &kvpb.PutRequest{Table: "users", Row: []byte(r),
			Cells: []*kvpb.Cell{{Family: "info", Qualifier: []byte("email"), Value: []byte(r + "@example.org")}}}); err != nil {
			t.Fatal(err)
		}
	}

	_, srv := newTestConsole(t, Config{KVEndpoints: []string{follower, leader, dead}})
	st, m := get(t, srv.URL+"/console/api/kv/group", true)
	if st != http.StatusOK || m["configured"] != true || m["leader"] != leader {
		t.Fatalf("group: %d %v", st, m)
	}
	members := m["members"].([]any)
	roles := make([]string, len(members))
	for i, x := range members {
		roles[i] = x.(map[string]any)["role"].(string)
	}
	if strings.Join(roles, ",") != "follower,leader,down" {
		t.Errorf("roles %v, want follower,leader,down", roles)
	}
	f := members[0].(map[string]any)
	if f["leaderAddr"] != leader || f["leaderId"] != float64(7) || f["epoch"] != float64(3) || f["reachable"] != true {
		t.Errorf("follower: %v", f)
	}
	if members[2].(map[string]any)["reachable"] != false {
		t.Errorf("dead endpoint reachable: %v", members[2])
	}
	tables := m["tables"].([]any)
	if len(tables) != 1 {
		t.Fatalf("tables: %v", tables)
	}
	fams := tables[0].(map[string]any)["families"].([]any)
	if tables[0].(map[string]any)["name"] != "users" || len(fams) != 2 ||
		fams[0].(map[string]any)["maxVersions"] != float64(3) || fams[1].(map[string]any)["maxVersions"] != float64(1) {
		t.Errorf("tables: %v", tables)
	}

	st, m = get(t, srv.URL+"/console/api/kv/get?table=users&row=bob", true)
	cells, _ := m["cells"].([]any)
	if st != http.StatusOK || len(cells) != 1 || cells[0].(map[string]any)["value"] != b64("bob@example.org") {
		t.Fatalf("get bob: %d %v", st, m)
	}
	// The same row by its key in hex.
	st, m = get(t, srv.URL+"/console/api/kv/get?table=users&enc=hex&row=626f62", true)
	if st != http.StatusOK || m["key"] != b64("bob") {
		t.Errorf("get hex: %d %v", st, m)
	}
	if st, m = get(t, srv.URL+"/console/api/kv/get?table=users&row=dave", true); st != http.StatusNotFound || errCode(m) != "NOTFOUND" {
		t.Errorf("get missing row: %d %v", st, m)
	}
	if st, m = get(t, srv.URL+"/console/api/kv/get?table=nope&row=a", true); st != http.StatusBadRequest {
		t.Errorf("get from unknown table: %d %v", st, m)
	}
	if st, m = get(t, srv.URL+"/console/api/kv/get?table=users&enc=hex&row=zz", true); st != http.StatusBadRequest || errCode(m) != "BADREQUEST" {
		t.Errorf("bad hex: %d %v", st, m)
	}

	st, m = get(t, srv.URL+"/console/api/kv/scan?table=users&limit=2", true)
	rows, _ := m["rows"].([]any)
	if st != http.StatusOK || len(rows) != 2 || m["more"] != true || rows[0].(map[string]any)["key"] != b64("alice") {
		t.Fatalf("scan limit 2: %d %v", st, m)
	}
	st, m = get(t, srv.URL+"/console/api/kv/scan?table=users&from=bob", true)
	rows, _ = m["rows"].([]any)
	if st != http.StatusOK || len(rows) != 2 || m["more"] != false || rows[1].(map[string]any)["key"] != b64("carol") {
		t.Fatalf("scan from bob: %d %v", st, m)
	}
	for _, q := range []string{"table=users&limit=0", "table=users&limit=1001", "limit=5"} {
		if st, m = get(t, srv.URL+"/console/api/kv/scan?"+q, true); st != http.StatusBadRequest {
			t.Errorf("scan %s: %d %v", q, st, m)
		}
	}
}

func TestKVAndLogsUnconfigured(t *testing.T) {
	_, srv := newTestConsole(t, Config{})
	st, m := get(t, srv.URL+"/console/api/kv/group", true)
	if st != http.StatusOK || m["configured"] != false {
		t.Errorf("kv group: %d %v", st, m)
	}
	if st, m = get(t, srv.URL+"/console/api/kv/get?table=t&row=r", true); st != http.StatusNotFound || errCode(m) != "NOTCONFIGURED" {
		t.Errorf("kv get: %d %v", st, m)
	}
	if st, m = get(t, srv.URL+"/console/api/logs/info", true); st != http.StatusOK || m["configured"] != false {
		t.Errorf("logs info: %d %v", st, m)
	}
	if st, m = get(t, srv.URL+"/console/api/logs/tail?name=a", true); st != http.StatusNotFound || errCode(m) != "NOTCONFIGURED" {
		t.Errorf("logs tail: %d %v", st, m)
	}
	if _, err := New(Config{Servers: []string{"h:1"}, KVEndpoints: []string{"nohost"}}); err == nil {
		t.Error("New took a KV endpoint without a port")
	}
}

// TestLogsPage drives the Logs endpoints against an unreplicated logs
// member.
func TestLogsPage(t *testing.T) {
	lc, err := rlog.OpenLocal(rlog.LocalOptions{
		State: rlog.Options{FS: vfs.NewMem(), Dir: "l", MaxAppend: 4096,
			DataLog: datalog.Options{SegmentSize: 1 << 16, PrepareInline: true}},
		WAL: wal.Options{SegmentSize: 1 << 16, PrepareInline: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	rlogsvc.New(lc).Register(gs)
	go gs.Serve(lis)
	defer gs.Stop()

	ctx := context.Background()
	cli, err := rlogclient.Dial([]string{lis.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Create(ctx, "events"); err != nil {
		t.Fatal(err)
	}
	// 3000 bytes of lines, then a trim: the tail is bounded by the start
	// and by the KiBs asked for.
	var all []byte
	for i := 0; i < 100; i++ {
		line := []byte(strings.Repeat("x", 25) + "-line-" + string(rune('a'+i%26)) + "\n")
		if _, err := cli.Append(ctx, "events", line, nil); err != nil {
			t.Fatal(err)
		}
		all = append(all, line...)
	}

	_, srv := newTestConsole(t, Config{LogEndpoints: []string{lis.Addr().String()}})
	st, m := get(t, srv.URL+"/console/api/logs/stat?names=events,missing", true)
	logs, _ := m["logs"].([]any)
	if st != http.StatusOK || len(logs) != 2 {
		t.Fatalf("stat: %d %v", st, m)
	}
	ev := logs[0].(map[string]any)
	if ev["committed"] != float64(len(all)) || ev["size"] != float64(len(all)) || ev["start"] != float64(0) || ev["sealed"] != false {
		t.Errorf("events: %v, want %d bytes", ev, len(all))
	}
	if miss := logs[1].(map[string]any); miss["code"] != "NOTFOUND" {
		t.Errorf("missing: %v", miss)
	}

	st, m = get(t, srv.URL+"/console/api/logs/tail?name=events&kib=1", true)
	data, _ := base64.StdEncoding.DecodeString(m["data"].(string))
	if st != http.StatusOK || string(data) != string(all[len(all)-1024:]) || m["offset"] != float64(len(all)-1024) {
		t.Fatalf("tail 1 KiB: %d offset %v, %d bytes", st, m["offset"], len(data))
	}
	if _, err := cli.Trim(ctx, "events", int64(len(all)-100)); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Seal(ctx, "events"); err != nil {
		t.Fatal(err)
	}
	st, m = get(t, srv.URL+"/console/api/logs/tail?name=events", true)
	data, _ = base64.StdEncoding.DecodeString(m["data"].(string))
	stat, _ := m["stat"].(map[string]any)
	if st != http.StatusOK || string(data) != string(all[len(all)-100:]) || stat["sealed"] != true || stat["size"] != float64(100) {
		t.Fatalf("tail after trim and seal: %d %v, %q", st, stat, data)
	}
	if st, m = get(t, srv.URL+"/console/api/logs/tail?name=missing", true); st != http.StatusNotFound || errCode(m) != "NOTFOUND" {
		t.Errorf("tail of a missing log: %d %v", st, m)
	}
	if st, m = get(t, srv.URL+"/console/api/logs/tail?name=events&kib=0", true); st != http.StatusBadRequest {
		t.Errorf("kib=0: %d %v", st, m)
	}
}

// TestLastSnapshot reads the AdminServer's last_snapshot answer: a
// snapshot, none yet (ZooKeeper's -1s), and a failure.
func TestLastSnapshot(t *testing.T) {
	answer := `{"command":"last_snapshot","error":null,"zxid":"100000005","timestamp":1700000000}`
	status := http.StatusOK
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/commands/last_snapshot" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	defer admin.Close()
	addr := strings.TrimPrefix(admin.URL, "http://")
	ctx := context.Background()
	z, ms, err := lastSnapshot(ctx, addr)
	if err != nil || z != "0x100000005" || ms != 1700000000000 {
		t.Errorf("snapshot: %q %d %v", z, ms, err)
	}
	answer = `{"command":"last_snapshot","error":null,"zxid":"ffffffffffffffff","timestamp":-1}`
	if z, ms, err = lastSnapshot(ctx, addr); err != nil || z != "" || ms != 0 {
		t.Errorf("none yet: %q %d %v", z, ms, err)
	}
	answer = `{"zxid":"xyz","timestamp":1}`
	if _, _, err = lastSnapshot(ctx, addr); err == nil {
		t.Error("a bad zxid was taken")
	}
	status = http.StatusInternalServerError
	if _, _, err = lastSnapshot(ctx, addr); err == nil {
		t.Error("a failed command was taken")
	}
}
