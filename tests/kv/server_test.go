package kv_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	kvpb "github.com/corral-db/corral/api/kv/v1"
)

// leaderOf returns the index of the member that answers a read itself
// (the others answer NotLeader).
func leaderOf(t *testing.T, eps []string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
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
				return i
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no leader")
	return -1
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// server is one `corral server zoo.cfg` process of a kv group.
type server struct {
	cfg    string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
}

func (s *server) start(t *testing.T) {
	t.Helper()
	s.stderr = new(bytes.Buffer)
	s.cmd = exec.Command(corralBin, "server", "-log-level", "warn", s.cfg)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

func (s *server) kill() {
	if s.cmd != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
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
// processes with store=kv; they are killed when the test ends.
func startServers(t *testing.T, n int) ([]string, []*server) {
	t.Helper()
	ports := freePorts(t, 3*n)
	var servers, apis []string
	for i := 1; i <= n; i++ {
		p := ports[3*(i-1):]
		servers = append(servers, fmt.Sprintf("server.%d=127.0.0.1:%d:%d", i, p[0], p[1]))
		apis = append(apis, fmt.Sprintf("apiAddress.%d=127.0.0.1:%d", i, p[2]))
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
		cfg := fmt.Sprintf("tickTime=100\ninitLimit=10\nsyncLimit=5\ndataDir=%s\nclientPort=%d\nstore=kv\napiPort=%d\n%s\n%s\n",
			dir, api, api, strings.Join(servers, "\n"), strings.Join(apis, "\n"))
		path := filepath.Join(dir, "zoo.cfg")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		eps = append(eps, fmt.Sprintf("127.0.0.1:%d", api))
		ss[i-1] = &server{cfg: path}
		ss[i-1].start(t)
	}
	t.Cleanup(func() {
		for _, s := range ss {
			s.kill()
			if t.Failed() {
				t.Logf("%s:\n%s", s.cfg, s.stderr)
			}
		}
	})
	return eps, ss
}
