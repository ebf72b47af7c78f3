package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := Command(ctx, args, CommandEnv{Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestCLIRejectsBadInvocations(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"run"}, // no --connect
		{"run", "--connect", "127.0.0.1:1", "--workload", "delete"},
		{"run", "--connect", "127.0.0.1:1", "--conns", "0"},
		{"run", "--connect", "127.0.0.1:1", "--duration", "1h"},
		{"compare", "--inflight", "0"},
		{"compare", "--seq-duration", "0s"},
		{"compare", "extra"},
		{"compare", "--servers", "0"},
		{"compare", "--tick-time", "0"},
		{"failover", "--target", "etcd"},
		{"failover", "--trials", "0"},
		{"failover", "--servers", "2"},
		{"failover", "--session-timeout", "0s"},
		{"failover", "--init-limit", "0"},
		{"failover", "extra"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code, out, _ := runCLI(t, "help"); code != 0 || !strings.Contains(out, "corral bench compare") || !strings.Contains(out, "corral bench failover") {
		t.Errorf("help: exit %d, %q", code, out)
	}
}

func TestCLIRunAgainstServer(t *testing.T) {
	s := newFakeServer(t, inOrder, 0)
	code, out, errs := runCLI(t, "run", "--connect", s.addr(), "--workload", "get", "--keys", "40",
		"--conns", "2", "--inflight", "4", "--warmup", "0s", "--duration", "200ms", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"## corral bench run", "| get | ops/s |", "```jsonl", `"phase":"get"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := len(s.attempted); got != 40+1 { // the keys and the root
		t.Errorf("server saw %d distinct creates, want 41", got)
	}
	s.check()
}

func TestCLIRunWritesOutDir(t *testing.T) {
	s := newFakeServer(t, inOrder, 0)
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errs := runCLI(t, "run", "--connect", s.addr(), "--workload", "seqcreate",
		"--warmup", "0s", "--duration", "100ms", "--out", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "```jsonl") {
		t.Error("JSON lines on stdout despite --out")
	}
	for _, f := range []string{"report.md", "results.jsonl"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !strings.Contains(string(b), "seqcreate") {
			t.Errorf("%s: %v %q", f, err, b)
		}
	}
}
