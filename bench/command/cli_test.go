package command

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/internal/fakezk"
	"github.com/corral-db/corral/wire"
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
		{"compare", "--client", "kazoo"},
		{"run", "--connect", "127.0.0.1:1", "--client", "kazoo"},
		{"compare", "--client", "gozk", "--rate", "100"},
		{"compare", "--floor-rounds", "0"},
		{"floor", "--rounds", "0"},
		{"floor", "--members", "x"},
		{"floor", "extra"},
		{"floor", "--idle-gap", "1h"},
		{"floor", "--idle-gap", "0s"},
		{"floor", "--idle-pings", "0"},
		{"floor-echo"},
		{"floor-echo", "x"},
		{"floor-echo", "0"},
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
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	code, out, errs := runCLI(t, "run", "--connect", s.Addr(), "--workload", "get", "--keys", "40",
		"--conns", "2", "--inflight", "4", "--warmup", "0s", "--duration", "200ms", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"## corral bench run", "| get | ops/s |", "```jsonl", `"phase":"get"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := len(s.Attempted); got != 40+1 { // the keys and the root
		t.Errorf("server saw %d distinct creates, want 41", got)
	}
	s.Check()
}

func TestCLIRunWritesOutDir(t *testing.T) {
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errs := runCLI(t, "run", "--connect", s.Addr(), "--workload", "seqcreate",
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

func TestRateFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	rate := load.RegisterRate(fs)
	if err := fs.Parse([]string{"--rate", "5000"}); err != nil || *rate != 5000 {
		t.Fatalf("--rate 5000: %v, %v", *rate, err)
	}
	for _, bad := range []float64{-1, math.NaN(), load.MaxRate + 1} {
		if load.ValidateRate(bad) == nil {
			t.Errorf("rate %v accepted", bad)
		}
	}
	if load.ValidateRate(0) != nil || load.ValidateRate(load.MaxRate) != nil {
		t.Error("a valid rate refused")
	}
}

func TestCLIRejectsBadRateAndRepeat(t *testing.T) {
	for _, args := range [][]string{
		{"compare", "--repeat", "0"},
		{"compare", "--durability", "diskless"}, // ZooKeeper has none
		{"compare", "--durability", "fast"},
		{"compare", "--repeat", "21"},
		{"compare", "--rate", "-5"},
		{"run", "--connect", "127.0.0.1:1", "--rate", "1e9"},
		{"run", "--connect", "127.0.0.1:1", "--workload", "seqcreate", "--rate", "100"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

// TestCLIRunOpenLoop: run --rate measures open loop and reports the
// latencies from the intended send times, with a latency plot in --out.
func TestCLIRunOpenLoop(t *testing.T) {
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	dir := filepath.Join(t.TempDir(), "out")
	code, _, errs := runCLI(t, "run", "--connect", s.Addr(), "--workload", "set", "--keys", "50", "--rate", "1000",
		"--conns", "2", "--inflight", "4", "--warmup", "0s", "--duration", "300ms", "--out", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s.Check()
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"open loop: 1000 requests/s in total", "| set | p99 ms from intended |", "| set | unsent (open loop) |",
		"![latency-set](latency-set.png)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	jl, err := os.ReadFile(filepath.Join(dir, "results.jsonl"))
	if err != nil || !strings.Contains(string(jl), `"open_loop":{"rate":1000,"due":300,`) {
		t.Errorf("results.jsonl %s, %v", jl, err)
	}
	if f, err := os.Open(filepath.Join(dir, "latency-set.png")); err != nil {
		t.Error(err)
	} else {
		_, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Error(err)
		}
	}
}

func TestReadRatioCommandRejectsBadInvocations(t *testing.T) {
	for _, args := range [][]string{
		{"--ratios", "0,150"},
		{"--ratios", ""},
		{"--launch", "etcd"},
		{"--servers", "0"},
		{"--servers", "3,x"},
		{"--duration", "0s"},
		{"--conns", "0"},
		{"--value", "-1"},
		{"--tick-time", "0"},
		{"extra"},
	} {
		var stderr bytes.Buffer
		if code := readRatioCommand(context.Background(), args, CommandEnv{Stderr: &stderr}); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}

// TestCommandDispatchesReadRatioAndFailures: both subcommands are reachable
// through `corral bench` and listed in its usage.
func TestCommandDispatchesReadRatioAndFailures(t *testing.T) {
	for _, sub := range []string{"readratio", "failures"} {
		var stdout, stderr bytes.Buffer
		if code := Command(context.Background(), []string{sub, "-h"}, CommandEnv{Stdout: &stdout, Stderr: &stderr}); code != 0 {
			t.Errorf("%s -h: exit %d (%s)", sub, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "-leader-only") && !strings.Contains(stderr.String(), "-schedule") {
			t.Errorf("%s -h printed no flags: %s", sub, stderr.String())
		}
		stdout.Reset()
		Command(context.Background(), []string{"help"}, CommandEnv{Stdout: &stdout})
		if !strings.Contains(stdout.String(), "corral bench "+sub+" ") {
			t.Errorf("usage does not list %s:\n%s", sub, stdout.String())
		}
	}
}

func TestPaperCommandRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-targets", "etcd"},
		{"-servers", "3,x"},
		{"-servers", "0"},
		{"-creates", "0"},
		{"-clients", "1000"},
		{"-cell-timeout", "0s"},
	} {
		var stderr bytes.Buffer
		if code := Command(t.Context(), append([]string{"paper"}, args...), CommandEnv{Stderr: &stderr}); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}

func TestScaleAndFactorialCLIRejectBadInvocations(t *testing.T) {
	for _, args := range [][]string{
		{"scale", "--launch", "etcd"},
		{"scale", "--max-servers", "2"},
		{"scale", "--max-servers", "10"},
		{"scale", "--servers", "1,x,3"},
		{"scale", "--servers", "1,2"},
		{"scale", "--workload", "seqcreate"},
		{"scale", "--durability", "diskless"}, // ZooKeeper has none
		{"scale", "--durability", "fast", "--launch", "corral"},
		{"scale", "--reps", "0"},
		{"scale", "--clients-per-server", "0"},
		{"scale", "--duration", "0s"},
		{"scale", "--keys", "0"},
		{"scale", "extra"},
		{"factorial", "--factors", "bogus"},
		{"factorial", "--factors", "servers,servers"},
		{"factorial", "--factors", ""},
		{"factorial", "--servers", "1"},
		{"factorial", "--servers", "3,3"},
		{"factorial", "--servers", "1,3,5"},
		{"factorial", "--servers", "1,99"},
		{"factorial", "--factors", "target,durability", "--target", "corral,zookeeper", "--durability", "sync,diskless"},
		{"factorial", "--response", "p999"},
		{"factorial", "--reps", "0"},
		{"factorial", "--workload", "seqcreate"},
		{"factorial", "--inflight", "0"},
		{"factorial", "extra"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	code, out, _ := runCLI(t, "help")
	if code != 0 || !strings.Contains(out, "corral bench scale") || !strings.Contains(out, "corral bench factorial") {
		t.Errorf("help: exit %d, %q", code, out)
	}
}

func TestYCSBCLI(t *testing.T) {
	f := fakezk.NewYCSB(t)
	code, out, errs := runCLI(t, "ycsb", "--connect", f.Addr(), "--workload", "a,f", "--recordcount", "50",
		"--threads", "2", "--warmup", "0s", "--duration", "100ms", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"## corral bench ycsb", "### server", "| A (zipfian) | read |", "| F (zipfian) | rmw |",
		"| load | insert |", "```jsonl", `"bench":"ycsb"`, "srvr: Zookeeper version: ycsb fake"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if f.Count(wire.OpCreate) < 50 {
		t.Errorf("%d creates, want the 50 records at least", f.Count(wire.OpCreate))
	}
	for _, args := range [][]string{
		{"ycsb", "--workload", "G"},
		{"ycsb", "--distribution", "hotspot"},
		{"ycsb", "--threads", "0"},
		{"ycsb", "--recordcount", "0"},
		{"ycsb", "--duration", "0s"},
		{"ycsb", "--maxscanlength", "0"},
		{"ycsb", "--launch", "etcd"},
		{"ycsb", "--launch", "zookeeper", "--durability", "diskless"},
		{"ycsb", "--durability", "eventually"},
		{"ycsb", "-n", "0"},
		{"ycsb", "--load-inflight", "0"},
		{"ycsb", "--target", "1", "--threads", "4"},
		{"ycsb", "--connect", "127.0.0.1:1", "--pids", "x"},
		{"ycsb", "--pids", "1"},
		{"ycsb", "--table", "a/b"},
		{"ycsb", "extra"},
	} {
		// Should a check be missing, fail fast rather than launch servers.
		args = append(args, "--corral-bin", "/nonexistent/corral", "--zk-lib", "/nonexistent", "--java", "/nonexistent/java")
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

func TestFailuresCommandRejectsBadInvocations(t *testing.T) {
	for _, args := range [][]string{
		{"--schedule", "1s:explode"},
		{"--schedule", "50s:kill-leader"}, // beyond the default duration
		{"--connect", "127.0.0.1:1", "--schedule", "1s:kill-leader"},
		{"--launch", "etcd"},
		{"--bucket", "0s"},
		{"--reads", "101"},
		{"--servers", "0"},
		{"--servers", "3", "--schedule", "1s:kill=4"},
		{"--keys", "0"},
		{"extra"},
	} {
		var stderr bytes.Buffer
		if code := failuresCommand(context.Background(), args, CommandEnv{Stderr: &stderr}); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}

func TestCLIFloor(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "floor", "-q", "--dir", dir, "--members", "1,3", "--rounds", "3", "--pings", "10", "--record", "512")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, s := range []string{"## corral bench floor", "| 1 | 1 | 512 |", "| 3 | 2 | 512 |", `"floor":true`} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("floor left %d files in --dir", len(left))
	}
}

func TestMemoryCLIRejectsBadInvocations(t *testing.T) {
	for _, args := range [][]string{
		{"memory", "--trees", "10"},
		{"memory", "--trees", "0x100"},
		{"memory", "--trees", "10x-1"},
		{"memory", "--trees", "10x2000000"},
		{"memory", "--trees", "10x100:"},
		{"memory", "--trees", "10x100:512q"},
		{"memory", "--trees", "10x100:mm"},
		{"memory", "--load-limit", "0s"},
		{"memory", "--servers", "0"},
		{"memory", "--launch", "etcd"},
		{"memory", "--durability", "fast"},
		{"memory", "extra"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if got, err := parseTrees("1000000x100, 100000x1024"); err != nil || len(got) != 2 || got[1].Count != 100000 || got[1].Size != 1024 {
		t.Errorf("parseTrees: %v %v", got, err)
	}
	if got, err := parseTrees("1000000x100:384m,100000x1024"); err != nil || len(got) != 2 || got[0].JavaHeap != "384m" || got[1].JavaHeap != "" {
		t.Errorf("parseTrees with -Xmx: %v %v", got, err)
	}
}
