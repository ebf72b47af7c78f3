package kv_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// leaderOf returns the index of the member that answers a read itself
// (the others answer NotLeader).
func leaderOf(t *testing.T, eps []string) int {
	t.Helper()
	at := -1
	testutil.Eventually(t, 30*time.Second, "a member answers as leader", func() bool {
		for i, ep := range eps {
			cc, err := grpc.NewClient(ep, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err = kvpb.NewKVClient(cc).ListTables(ctx, &kvpb.ListTablesRequest{})
			cancel()
			cc.Close()
			if err == nil {
				at = i
				return true
			}
		}
		return false
	})
	return at
}

// server is one `corral server zoo.cfg` process of a kv group, which
// the test may kill and start again.
type server struct {
	cfg string
	p   *harness.Command
}

func (s *server) start(t *testing.T) {
	t.Helper()
	s.p = startCorral(t, "server", "-log-level", "warn", s.cfg)
}

func (s *server) kill() { s.p.Kill() }

// startVerbose starts s logging at info level, so the test can read what
// it did.
func (s *server) startVerbose(t *testing.T) {
	t.Helper()
	s.p = startCorral(t, "server", "-log-level", "info", s.cfg)
}

// TestServerConfig runs a 3-member group as a deployment would, one
// `corral server zoo.cfg` process per member with store=kv, and SIGKILLs
// the leader under writes: every acknowledged put survives.
func TestServerConfig(t *testing.T) {
	eps, ss := startServers(t, 3)
	e := strings.Join(eps, ",")
	must := func(want int, args ...string) string {
		t.Helper()
		out, code := kv(t, args...)
		if code != want {
			t.Fatalf("corral kv %v: exit %d, want %d", args, code, want)
		}
		return out
	}
	must(0, "create-table", "-endpoints", e, "t", "cf")
	for i := 0; i < 5; i++ {
		must(0, "put", "-endpoints", e, "t", fmt.Sprintf("r%d", i), fmt.Sprintf("cf:q=%d", i))
	}
	// SIGKILL the leader, write, restart it; then the same to the next
	// leader.
	next := 5
	for round := 0; round < 2; round++ {
		l := leaderOf(t, eps)
		ss[l].kill()
		for i := 0; i < 5; i++ {
			must(0, "put", "-endpoints", e, "t", fmt.Sprintf("r%d", next), fmt.Sprintf("cf:q=%d", next))
			next++
		}
		ss[l].start(t)
	}
	out := must(0, "scan", "-endpoints", e, "t")
	if got := strings.Count(out, "\n"); got != 15 {
		t.Fatalf("scan after two kills: %d cells:\n%s", got, out)
	}
}

// startServers starts an n-member group of `corral server zoo.cfg`
// processes with store=kv; they are stopped when the test ends.
func startServers(t *testing.T, n int, mod ...func(*config.Config)) ([]string, []*server) {
	t.Helper()
	return startServersEach(t, n, nil, mod...)
}

// startServersRelayed is startServers with relays between the members
// (harness.Relays: member i reaches member j through a relay of the pair,
// which the test can cut).
func startServersRelayed(t *testing.T, n int, mod ...func(*config.Config)) ([]string, []*server, *harness.Relays) {
	t.Helper()
	r := harness.NewRelays(t)
	eps, ss := startServersEach(t, n, func(i int, z *config.Config) {
		servers := slices.Clone(z.Servers)
		for j := range servers {
			if j != i {
				servers[j].QuorumPort = r.Relay(i, j, servers[j].QuorumPort)
				servers[j].ElectionPort = r.Relay(i, j, servers[j].ElectionPort)
			}
		}
		z.Servers = servers
	}, mod...)
	return eps, ss, r
}

// startServersEach is startServers with each, if set, run on member i's
// configuration (0-based) after mod.
func startServersEach(t *testing.T, n int, each func(i int, z *config.Config), mod ...func(*config.Config)) ([]string, []*server) {
	t.Helper()
	ports := make([]int, 3*n)
	for i := range ports {
		ports[i] = testutil.FreePort(t)
	}
	var members []config.Server
	apis := map[int64]string{}
	for i := 1; i <= n; i++ {
		p := ports[3*(i-1):]
		members = append(members, config.Server{ID: int64(i), Host: "127.0.0.1", QuorumPort: p[0], ElectionPort: p[1]})
		apis[int64(i)] = fmt.Sprintf("127.0.0.1:%d", p[2])
	}
	var eps []string
	ss := make([]*server, n)
	for i := 1; i <= n; i++ {
		dir := filepath.Join(t.TempDir(), fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		api := ports[3*(i-1)+2]
		z := config.Default()
		z.TickTime, z.InitLimit, z.SyncLimit = 100, 10, 5
		z.MinSessionTimeout, z.MaxSessionTimeout = 2*z.TickTime, 20*z.TickTime
		z.DataDir, z.ClientPort, z.Store, z.APIPort = dir, api, "kv", api
		z.Servers, z.APIAddrs = members, apis
		for _, m := range mod {
			m(z)
		}
		if each != nil {
			each(i-1, z)
		}
		cfg := harness.ZooCfg(z)
		path := filepath.Join(dir, "zoo.cfg")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		eps = append(eps, fmt.Sprintf("127.0.0.1:%d", api))
		ss[i-1] = &server{cfg: path}
		ss[i-1].start(t)
	}
	return eps, ss
}

// TestServerSnapCatchUp: a member whose disk is wiped catches up by SNAP,
// its group's pebble checkpoint streamed to it in pieces ahead of the
// SNAP (kvserver/snapstream.go), and holds every row: it is made to lead
// and scans them back.
func TestServerSnapCatchUp(t *testing.T) {
	eps, ss := startServers(t, 3, func(z *config.Config) { z.SnapCount = 100 })
	kc, err := kvclient.New(kvclient.Config{Endpoints: eps, RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	ctx := context.Background()
	if _, err := kc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	// 3,000 rows of 4 KiB: a checkpoint of a few pieces.
	const rows = 3000
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8), 'v'}, 4096/3) }
	put := func(from, to int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := from + w; i < to; i += 16 {
					if _, err := kc.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte(fmt.Sprintf("r%05d", i)),
						Cells: []*kvpb.Cell{{Family: "f", Qualifier: []byte("q"), Value: value(i)}}}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	put(0, rows)
	l := leaderOf(t, eps)
	f := (l + 1) % len(ss)
	t.Logf("wipe member %d (the leader is %d) and restart it", f+1, l+1)
	ss[f].kill()
	dir := filepath.Dir(ss[f].cfg)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "myid" && e.Name() != "zoo.cfg" {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	ss[f].startVerbose(t)
	put(rows, rows+200)
	testutil.Eventually(t, 60*time.Second, "the wiped member installs the leader's snapshot", func() bool {
		return strings.Contains(ss[f].p.Output(), "installed the leader's snapshot")
	})
	if out := ss[f].p.Output(); !strings.Contains(out, "a streamed snapshot arrived whole") {
		t.Fatalf("the wiped member's snapshot was not streamed:\n%s", out)
	}
	// Make the wiped member lead: kill whoever else leads until it does.
	for round := 0; ; round++ {
		l := leaderOf(t, eps)
		if l == f {
			break
		}
		if round == 8 {
			t.Fatalf("member %d did not come to lead in %d rounds", f+1, round)
		}
		ss[l].kill()
		testutil.Eventually(t, 30*time.Second, "a new leader", func() bool { return leaderOf(t, eps) != l })
		ss[l].start(t)
	}
	cc, err := grpc.NewClient(eps[f], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	seen := 0
	var from []byte
	for {
		resp, err := kvpb.NewKVClient(cc).Scan(ctx, &kvpb.ScanRequest{Table: "t", From: from, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.GetRows() {
			var i int
			fmt.Sscanf(string(r.GetKey()), "r%05d", &i)
			if len(r.GetCells()) != 1 || !bytes.Equal(r.GetCells()[0].GetValue(), value(i)) {
				t.Fatalf("row %s on the wiped member: %d cells", r.GetKey(), len(r.GetCells()))
			}
			seen++
			from = append(append([]byte{}, r.GetKey()...), 0)
		}
		if len(resp.GetRows()) < 500 {
			break
		}
	}
	if seen != rows+200 {
		t.Fatalf("the wiped member holds %d rows, want %d", seen, rows+200)
	}
}
