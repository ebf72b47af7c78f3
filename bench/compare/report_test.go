package compare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/floor"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

func f64(v float64) *float64 { return &v }

func sampleResults() []load.PhaseResult {
	return []load.PhaseResult{
		{Target: "corral", Phase: "create", Seconds: 10, Ops: 400000, OpsPerSec: 40000,
			Latency:    stats.Latency{Count: 400000, P50: 500, P99: 2000, P999: 4000, Max: 9000},
			CPUUse:     load.CPUUse{ServerCPU: f64(8), LoadgenCPU: 2, MachineCPU: f64(12)},
			FsyncsEach: []load.ServerFsyncs{{Server: "127.0.0.1:2181", Fsyncs: 2000}}},
		{Target: "zookeeper", Phase: "create", Seconds: 10, Ops: 160000, OpsPerSec: 16000,
			Latency: stats.Latency{Count: 160000, P50: 1000, P99: 2500, P999: 8000, Max: 45000},
			CPUUse:  load.CPUUse{ServerCPU: f64(12), LoadgenCPU: 1, MachineCPU: f64(13.5)}, Errors: 3,
			FsyncsEach: []load.ServerFsyncs{{Server: "127.0.0.1:2181", Fsyncs: 16000}}},
		// zookeeper's seqcreate failed before measuring anything.
		{Target: "corral", Phase: "seqcreate", Seconds: 5, Ops: 5000, OpsPerSec: 1000,
			Latency: stats.Latency{Count: 5000, P50: 900, P99: 1500, P999: 1800, Max: 2500}, CPUUse: load.CPUUse{LoadgenCPU: 0.25}},
		{Target: "zookeeper", Phase: "seqcreate", Err: "connection refused"},
	}
}

func TestRatioTable(t *testing.T) {
	var b bytes.Buffer
	WriteTable(&b, sampleResults())
	want := `| phase | metric | corral | zookeeper | corral/zookeeper |
|---|---|---:|---:|---:|
| create | ops/s | 40000 | 16000 | 2.50x |
| create | p50 ms | 0.500 | 1.000 | 0.50x |
| create | p99 ms | 2.000 | 2.500 | 0.80x |
| create | p99.9 ms | 4.000 | 8.000 | 0.50x |
| create | max ms | 9.000 | 45.000 | 0.20x |
| create | errors | 0 | 3 | 0.00x |
| create | server CPU s | 8.00 | 12.00 | 0.67x |
| create | server CPU µs/op | 20.0 | 75.0 | 0.27x |
| create | fsyncs per 1M ops | 5000 | 100000 | 0.05x |
| create | loadgen CPU s | 2.00 | 1.00 | 2.00x |
| create | loadgen CPU µs/op | 5.0 | 6.2 | 0.80x |
| create | other CPU s | 2.00 | 0.50 | 4.00x |
| seqcreate | ops/s | 1000 | — | — |
| seqcreate | p50 ms | 0.900 | — | — |
| seqcreate | p99 ms | 1.500 | — | — |
| seqcreate | p99.9 ms | 1.800 | — | — |
| seqcreate | max ms | 2.500 | — | — |
| seqcreate | errors | 0 | — | — |
| seqcreate | server CPU s | — | — | — |
| seqcreate | server CPU µs/op | — | — | — |
| seqcreate | fsyncs per 1M ops | — | — | — |
| seqcreate | loadgen CPU s | 0.25 | — | — |
| seqcreate | loadgen CPU µs/op | 50.0 | — | — |
| seqcreate | other CPU s | — | — | — |
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestTableWithoutBothTargetsHasNoRatio(t *testing.T) {
	var b bytes.Buffer
	WriteTable(&b, sampleResults()[:1])
	first, _, _ := strings.Cut(b.String(), "\n")
	if first != "| phase | metric | corral |" {
		t.Errorf("header %q", first)
	}
}

func TestMarkdownReportsFailuresAndLoadgenShare(t *testing.T) {
	rep := &Report{Mode: "compare", Start: time.Unix(0, 0), Env: bench.Env{CPUs: 2, Conns: 32, Inflight: 32, ValueSize: 1024},
		Servers: []bench.ServerInfo{{Target: "corral"}, {Target: "zookeeper", JavaHeap: "2g"}},
		Results: sampleResults()}
	var b bytes.Buffer
	WriteMarkdown(&b, rep)
	out := b.String()
	for _, s := range []string{
		"zookeeper seqcreate FAILED: connection refused",
		"zookeeper create: 3 error replies",
		"(JVM heap -Xmx2g)",
		"at most 10% of the machine's CPU", // corral create: 2s over 10s × 2 CPUs
		"Ratios are corral ÷ zookeeper",
		"WARNING: up to 10% of the machine's CPU in a phase was busy outside", // corral create: 2s over 10s × 2 CPUs
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
}

func TestJSONLines(t *testing.T) {
	rep := &Report{Start: time.Unix(0, 0), Env: bench.Env{CPUs: 2}, Results: sampleResults()}
	var b bytes.Buffer
	if err := WriteJSONLines(&b, rep); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&b)
	var n int
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		r := sampleResults()[n]
		if m["target"] != r.Target || m["phase"] != r.Phase || m["ops_per_sec"] != r.OpsPerSec ||
			m["p99_us"] != float64(r.P99) || m["cpus"] != float64(2) {
			t.Errorf("line %d = %v", n, m)
		}
		if _, has := m["server_cpu_s"]; has != (r.ServerCPU != nil) {
			t.Errorf("line %d: server_cpu_s present %v", n, has)
		}
		n++
	}
	if n != len(rep.Results) {
		t.Errorf("%d lines, want %d", n, len(rep.Results))
	}
}

func TestMarkdownDescribesAnEnsemble(t *testing.T) {
	res := sampleResults()[:2]
	res[1].ServerCPUEach = []load.ProcCPU{{Server: "server.1 follower", PID: 11, CPU: 3}, {Server: "server.2 follower", PID: 12, CPU: 4}, {Server: "server.3 leader", PID: 13, CPU: 5}}
	rep := &Report{Mode: "compare", Start: time.Unix(0, 0),
		Env: bench.Env{CPUs: 2, Servers: 3, Timing: launch.Timing{TickTimeMs: 2000, InitLimit: 10, SyncLimit: 5}},
		Servers: []bench.ServerInfo{
			{Target: "corral", Leader: "server.1 (127.0.0.1:1)", LeaderAfter: "server.2 (127.0.0.1:2)"},
			{Target: "zookeeper", Leader: "server.3 (127.0.0.1:3)", Members: []bench.MemberInfo{{ID: 1, PID: 11}, {ID: 2, PID: 12}, {ID: 3, PID: 13}}},
		},
		Results: res}
	var b bytes.Buffer
	WriteMarkdown(&b, rep)
	out := b.String()
	for _, s := range []string{
		"3-server ensemble on 127.0.0.1",
		"tickTime=2000, initLimit=10, syncLimit=5",
		"followers first",
		"leader: server.3 (127.0.0.1:3) (server.1 pid 11, server.2 pid 12, server.3 pid 13)",
		"WARNING: leader changed during the run, to server.2 (127.0.0.1:2)",
		"zookeeper create server CPU s by process: server.1 follower 3.00, server.2 follower 4.00, server.3 leader 5.00",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "standalone") {
		t.Errorf("ensemble report says standalone:\n%s", out)
	}
}

func TestShownArgvNamesNoMachineDirectory(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Skip(err)
	}
	got := bench.ShownArgv([]string{filepath.Join(wd, "bin", "corral"), "server", "/tmp/x/zoo.cfg"})
	if want := "bin/corral server /tmp/x/zoo.cfg"; got != want {
		t.Fatalf("shownArgv = %q, want %q", got, want)
	}
}

// TestOpenLoopRows: the table gains the latencies from the intended send
// times and the unsent count, after the latencies, only when a phase ran
// open loop.
func TestOpenLoopRows(t *testing.T) {
	closed := []load.PhaseResult{{Target: "corral", Phase: "set"}}
	if len(metricsFor(closed)) != len(metrics()) {
		t.Fatal("closed loop has open-loop rows")
	}
	open := []load.PhaseResult{{Target: "corral", Phase: "set", Seconds: 1, Ops: 10,
		OpenLoop: &load.OpenLoopResult{Rate: 10, Due: 12, Unsent: 2, FromIntended: stats.Latency{Count: 10, P50: 1500, P99: 2500, P999: 3000, Max: 4000}}}}
	rows := metricsFor(open)
	var names []string
	for _, m := range rows {
		names = append(names, m.name)
	}
	want := []string{"max ms", "p50 ms from intended", "p99 ms from intended", "p99.9 ms from intended", "max ms from intended", "unsent (open loop)"}
	at := -1
	for i, n := range names {
		if n == "max ms" {
			at = i
		}
	}
	if at < 0 || len(names) < at+len(want) {
		t.Fatalf("rows %v", names)
	}
	for i, w := range want {
		if names[at+i] != w {
			t.Fatalf("rows %v, want %v after max ms", names, want)
		}
	}
	if v, ok := rows[at+1].value(&open[0]); !ok || v != 1.5 {
		t.Errorf("p50 from intended = %v, %v; want 1.5 ms", v, ok)
	}
	if v, ok := rows[at+5].value(&open[0]); !ok || v != 2 {
		t.Errorf("unsent = %v, %v; want 2", v, ok)
	}
}

func TestFsyncsPerMillion(t *testing.T) {
	addrs := []string{"a:1", "b:2", "c:3"}
	each := load.FsyncDeltas(addrs, []int64{10, 20, 30}, []int64{110, 70, 29})
	want := []int64{100, 50, 0} // a count that went down (a restart) is 0
	for i, f := range each {
		if f.Server != addrs[i] || f.Fsyncs != want[i] {
			t.Fatalf("deltas %+v, want %v", each, want)
		}
	}
	if d := load.FsyncDeltas(addrs, nil, []int64{1, 2, 3}); d != nil {
		t.Fatalf("deltas without a before count: %+v, want nil", d)
	}
	r := &load.PhaseResult{Ops: 300_000, FsyncsEach: each}
	if v, ok := load.FsyncsPerMillion(r); !ok || v != 500 {
		t.Fatalf("fsyncsPerMillion = %v, %v; want 500 (150 fsyncs over 300k ops)", v, ok)
	}
	if _, ok := load.FsyncsPerMillion(&load.PhaseResult{Ops: 10}); ok {
		t.Fatal("a figure without measured fsyncs")
	}
	var b strings.Builder
	WriteTable(&b, []load.PhaseResult{{Target: "corral", Phase: "create", Seconds: 1, Ops: 300_000, OpsPerSec: 300_000, FsyncsEach: each}})
	if !strings.Contains(b.String(), "fsyncs per 1M ops") || !strings.Contains(b.String(), "500") {
		t.Fatalf("table lacks the fsyncs row:\n%s", b.String())
	}
}

func TestJSONLinesCarryCPUPerOpAndTheFloor(t *testing.T) {
	rep := &Report{Mode: "compare", Start: time.Unix(0, 0), Env: bench.Env{CPUs: 2, Servers: 1}, Client: ClientGozk,
		Results: sampleResults(),
		Floor:   &floor.Report{Results: []floor.Result{{Members: 1, Quorum: 1, P50: 300, P99: 900, IdleP50: 450, IdleP99: 1200}}}}
	var b bytes.Buffer
	if err := WriteJSONLines(&b, rep); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 1+len(rep.Results) {
		t.Fatalf("%d lines, want the floor's and one per result", len(lines))
	}
	var fl, create, seq map[string]any
	for _, p := range []struct {
		s  string
		to *map[string]any
	}{{lines[0], &fl}, {lines[1], &create}, {lines[3], &seq}} {
		if err := json.Unmarshal([]byte(p.s), p.to); err != nil {
			t.Fatal(err)
		}
	}
	if fl["floor"] != true || fl["floor_p50_us"] != float64(300) {
		t.Errorf("floor line %v", fl)
	}
	// corral create: 8 s server and 2 s loadgen CPU over 400000 ops.
	if create["server_cpu_us_per_op"] != float64(20) || create["loadgen_cpu_us_per_op"] != float64(5) || create["client"] != ClientGozk {
		t.Errorf("create line %v", create)
	}
	if _, has := create["p50_floor_multiple"]; has {
		t.Error("a loaded create phase got a floor multiple")
	}
	// corral seqcreate: p50 900 µs over a 300 µs floor.
	if seq["p50_floor_multiple"] != float64(3) || seq["floor_p50_us"] != float64(300) ||
		seq["p50_idle_floor_multiple"] != float64(2) || seq["idle_floor_p50_us"] != float64(450) {
		t.Errorf("seqcreate line %v", seq)
	}
	if _, has := create["p50_idle_floor_multiple"]; has {
		t.Error("a loaded create phase got an idle floor multiple")
	}
	if _, has := seq["server_cpu_us_per_op"]; has {
		t.Error("server CPU per op without server CPU")
	}
	var md bytes.Buffer
	WriteMarkdown(&md, rep)
	for _, s := range []string{"corral seqcreate p50 = 0.900 ms = 3.00× floor (1 server(s): 0.300 ms) = 2.00× idle floor (0.450 ms)",
		"The client (go-zookeeper, in the bench process) used at most", "loadgen CPU µs/op"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, md.String())
		}
	}
}

func TestTableWithOpsTargetHasItsCostColumn(t *testing.T) {
	rs := sampleResults()[:2]
	ops := rs[0]
	ops.Target, ops.OpsPerSec = launch.TargetCorralOps, 39000
	var b bytes.Buffer
	WriteTable(&b, append(rs, ops))
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "| phase | metric | corral | zookeeper | corral+ops | corral/zookeeper | corral+ops/corral |" {
		t.Errorf("header %q", lines[0])
	}
	if lines[2] != "| create | ops/s | 40000 | 16000 | 39000 | 2.50x | 0.97x |" {
		t.Errorf("ops/s row %q", lines[2])
	}
}

// TestCPUBound: a go-zookeeper run's report gives each phase's bound
// (CPUs ÷ server + client CPU per op) and the ratio of corral's to
// ZooKeeper's; a phase without server CPU or that failed has none, and
// a run of the built-in load generator has no such section.
func TestCPUBound(t *testing.T) {
	rep := &Report{Mode: "compare", Start: time.Unix(0, 0), Env: bench.Env{CPUs: 2, Servers: 1}, Client: ClientGozk,
		Results: sampleResults()}
	var b bytes.Buffer
	writeCPUBound(&b, rep)
	// corral: 20 + 5 µs an op, 2 CPUs: 80000 ops/s, 40000 measured.
	// zookeeper: 75 + 6.25 µs: 24615, 16000 measured.
	for _, s := range []string{
		"| create | corral | 20.0 | 5.0 | 80000 | 40000 | 50% |",
		"| create | zookeeper | 75.0 | 6.2 | 24615 | 16000 | 65% |",
		"| create | 3.25x |",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("section lacks %q:\n%s", s, b.String())
		}
	}
	if strings.Contains(b.String(), "| seqcreate |") {
		t.Errorf("a bound for a phase without server CPU or that failed:\n%s", b.String())
	}
	rep.Client = ClientLoad
	b.Reset()
	writeCPUBound(&b, rep)
	if b.Len() != 0 {
		t.Errorf("a bound section for the built-in load generator:\n%s", b.String())
	}
}
