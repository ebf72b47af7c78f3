package kv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	kvpb "github.com/corral-db/corral/api/kv/v1"
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
func startServers(t *testing.T, n int) ([]string, []*server) {
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
