package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeServerEnv makes the test binary act as a server started as
// `BINARY server zoo.cfg`, so Compare can launch it like corral.
const fakeServerEnv = "CORRAL_BENCH_TEST_FAKE_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeServerEnv) == "1" {
		os.Exit(fakeServerMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeServerMain serves the fake server on the zoo.cfg's client address
// until SIGTERM.
func fakeServerMain(args []string) int {
	if len(args) != 2 || args[0] != "server" {
		fmt.Fprintln(os.Stderr, "usage: server zoo.cfg")
		return 2
	}
	b, err := os.ReadFile(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	ln, err := net.Listen("tcp", net.JoinHostPort(kv["clientPortAddress"], kv["clientPort"]))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := startFake(ln, inOrder, 0)
	fmt.Println("fake server on", ln.Addr(), "forceSync", kv["forceSync"])
	<-term
	s.stop()
	return 0
}

func TestCompareLaunchesMeasuresAndStops(t *testing.T) {
	t.Setenv(fakeServerEnv, "1")
	out := t.TempDir()
	cfg := DefaultCompareConfig()
	cfg.Targets = []string{TargetCorral}
	cfg.CorralBin = os.Args[0]
	cfg.Conns, cfg.Inflight = 3, 4
	cfg.Warmup, cfg.Duration = 0, 500*time.Millisecond
	cfg.SeqWarmup, cfg.SeqDuration = 0, 500*time.Millisecond
	cfg.WorkDir, cfg.OutDir = t.TempDir(), out
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	rep, err := Compare(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != 1 || rep.Servers[0].Version != "Zookeeper version: fake" {
		t.Errorf("servers %+v", rep.Servers)
	}
	var phases []string
	for _, r := range rep.Results {
		phases = append(phases, r.Phase)
		if r.Err != "" || r.Errors != 0 || r.Ops == 0 || r.ServerCPU == nil || r.Target != TargetCorral {
			t.Errorf("%s: %+v", r.Phase, r)
		}
	}
	if got := strings.Join(phases, ","); got != "create,set,get,seqcreate" {
		t.Errorf("phases %s", got)
	}
	if seq := rep.Results[3]; seq.Conns != 1 || seq.Inflight != 1 {
		t.Errorf("seqcreate ran %d × %d", seq.Conns, seq.Inflight)
	}
	logb, err := os.ReadFile(filepath.Join(out, "corral.log"))
	if err != nil || !strings.Contains(string(logb), "forceSync yes") {
		t.Errorf("server log %q, %v", logb, err)
	}
	if _, err := os.Stat(filepath.Join(out, "corral.zoo.cfg")); err != nil {
		t.Error(err)
	}
	// The work directory is gone and so is the server.
	if ents, _ := os.ReadDir(cfg.WorkDir); len(ents) != 0 {
		t.Errorf("work dir left behind: %v", ents)
	}
}

func TestLaunchReportsAServerThatExits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Launch(ctx, TargetCorral, LaunchConfig{Dir: t.TempDir(), CorralBin: "/bin/false"})
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("err = %v, want an exit during start-up", err)
	}
}
