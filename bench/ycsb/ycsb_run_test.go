package ycsb

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/internal/fakezk"
)

func ycsbTestConfig(addr string, workloads string) Config {
	cfg := DefaultConfig()
	cfg.Workloads, _ = ParseYCSBWorkloads(workloads, "", 0)
	cfg.Connect, cfg.Launch = []string{addr}, nil
	cfg.RecordCount, cfg.Threads, cfg.LoadInflight = 200, 4, 8
	cfg.Warmup, cfg.Duration = 0, 150*time.Millisecond
	cfg.Table = "t"
	return cfg
}

func runYCSBTest(t *testing.T, cfg Config) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func ycsbResult(t *testing.T, rep *Report, workload string) *YCSBResult {
	t.Helper()
	for i := range rep.Results {
		if rep.Results[i].Workload == workload {
			return &rep.Results[i]
		}
	}
	t.Fatalf("no result for %s", workload)
	return nil
}

func ycsbOpOf(t *testing.T, r *YCSBResult, op string) YCSBOpResult {
	t.Helper()
	for _, o := range r.PerOp {
		if o.Op == op {
			return o
		}
	}
	t.Fatalf("%s: no %s results in %+v", r.Workload, op, r.PerOp)
	return YCSBOpResult{}
}

// The load creates exactly recordcount 1000-byte records under YCSB's key
// names; every workload then does its operations without error, and every
// session ends with closeSession.
func TestYCSBLoadAndWorkloadsAgainstFake(t *testing.T) {
	f := fakezk.NewYCSB(t)
	cfg := ycsbTestConfig(f.Addr(), "A,B,C,D,E,F,S")
	rep := runYCSBTest(t, cfg)
	if len(rep.Results) != 8 {
		t.Fatalf("%d results, want the load and 7 workloads", len(rep.Results))
	}
	load := ycsbResult(t, rep, ycsbLoadPhase)
	if ins := ycsbOpOf(t, load, "insert"); ins.Ops != 200 || ins.Errors != 0 || ins.Latency.Count != 200 {
		t.Errorf("load: %+v", ins)
	}
	recs := f.Records("/ycsb/t")
	for k := range int64(200) {
		p := "/ycsb/t/user" + strconv.FormatInt(fnvhash64(k), 10)
		if d, ok := recs[p]; !ok || len(d) != ycsbRecordSize {
			t.Fatalf("record %d (%s): present %v, %d bytes", k, p, ok, len(d))
		}
	}
	var inserted int64
	for _, r := range rep.Results {
		if r.Err != "" || r.Errors != 0 || r.ConnErrors != 0 {
			t.Errorf("%s: err %q, %d errors, %d connection errors", r.Workload, r.Err, r.Errors, r.ConnErrors)
		}
		if r.Ops == 0 || r.Seconds <= 0 || r.OpsPerSec <= 0 {
			t.Errorf("%s: %d ops in %.3fs", r.Workload, r.Ops, r.Seconds)
		}
		// An operation with a small share (E's 5% inserts) may not come
		// up at all in a short phase on a slow machine: the mix is the
		// generator's tests' subject; here every operation done is timed.
		for _, o := range r.PerOp {
			if o.Latency.Count != o.Ops {
				t.Errorf("%s %s: %d ops, %d latencies", r.Workload, o.Op, o.Ops, o.Latency.Count)
			}
		}
		if r.Workload != ycsbLoadPhase {
			for _, o := range r.PerOp {
				if o.Op == "insert" {
					inserted += o.Ops
				}
			}
		}
	}
	if e := ycsbOpOf(t, ycsbResult(t, rep, "E"), "scan"); e.Records < e.Ops {
		t.Errorf("scans read %d records in %d scans", e.Records, e.Ops)
	}
	if got := int64(len(f.Records("/ycsb/t"))); got < 200+inserted {
		t.Errorf("%d records after %d measured inserts, want at least %d", got, inserted, 200+inserted)
	}
	// A, B and S update blindly; F's read-modify-writes name a version.
	f.Mu.Lock()
	blind, conditional := f.SetVersions[-1], 0
	for v, n := range f.SetVersions {
		if v >= 0 {
			conditional += n
		}
	}
	sessions, closed := f.Sessions, f.Closed
	f.Mu.Unlock()
	if blind == 0 || int64(conditional) < ycsbOpOf(t, ycsbResult(t, rep, "F"), "rmw").Ops {
		t.Errorf("setData: %d with version -1, %d with a version", blind, conditional)
	}
	if int64(closed) != sessions {
		t.Errorf("%d sessions, %d closed", sessions, closed)
	}
}

// A read-modify-write whose setData meets BadVersion is a conflict: not an
// error, and the run goes on.
func TestYCSBRMWConflictIsAnOutcome(t *testing.T) {
	f := fakezk.NewYCSB(t)
	f.ConflictAll = true
	rep := runYCSBTest(t, ycsbTestConfig(f.Addr(), "F"))
	r := ycsbResult(t, rep, "F")
	rmw := ycsbOpOf(t, r, "rmw")
	if r.Err != "" || r.Errors != 0 || rmw.Ops != 0 || rmw.Conflicts == 0 || r.Conflicts != rmw.Conflicts {
		t.Errorf("err %q, errors %d, rmw %+v, conflicts %d", r.Err, r.Errors, rmw, r.Conflicts)
	}
	if read := ycsbOpOf(t, r, "read"); read.Ops == 0 {
		t.Error("reads stopped after the conflicts")
	}
}

// Threads whose server closes their connections reconnect and carry on:
// the lost operations are reported, the run does not fail.
func TestYCSBThreadsSurviveLostConnections(t *testing.T) {
	f := fakezk.NewYCSB(t)
	cfg := ycsbTestConfig(f.Addr(), "C")
	// Session 1 creates the table, 2..5 load, 6..9 run workload C.
	f.Drop = func(sid int64) bool { return sid >= 6 && sid <= 9 }
	rep := runYCSBTest(t, cfg)
	r := ycsbResult(t, rep, "C")
	if r.Err != "" || r.Reconnects == 0 || r.ConnErrors == 0 || r.FirstConnError == "" {
		t.Errorf("err %q, %d reconnects, %d connection errors (%q)", r.Err, r.Reconnects, r.ConnErrors, r.FirstConnError)
	}
	if read := ycsbOpOf(t, r, "read"); read.Ops == 0 || read.Errors != 0 {
		t.Errorf("reads after reconnecting: %+v", read)
	}
	var md bytes.Buffer
	WriteYCSBMarkdown(&md, rep)
	if !strings.Contains(md.String(), "operations lost to failed connections") {
		t.Errorf("report does not mention the lost connections:\n%s", md.String())
	}
}

// With a target rate the threads follow a schedule: no more operations
// than it has starts, and latencies from the intended start as well.
func TestYCSBTargetRatePacesThreads(t *testing.T) {
	f := fakezk.NewYCSB(t)
	cfg := ycsbTestConfig(f.Addr(), "C")
	cfg.Threads, cfg.TargetOps, cfg.Duration = 2, 200, 300*time.Millisecond
	rep := runYCSBTest(t, cfg)
	r := ycsbResult(t, rep, "C")
	read := ycsbOpOf(t, r, "read")
	// 2 threads at 100/s each: a start every 10ms, at most 31 in 300ms.
	if read.Ops == 0 || read.Ops > 62 {
		t.Errorf("%d reads, want 1 to 62", read.Ops)
	}
	if read.Intended == nil || read.Intended.Count != read.Ops {
		t.Errorf("intended latencies %+v for %d reads", read.Intended, read.Ops)
	}
}

func TestYCSBReportRatios(t *testing.T) {
	lat := func(p50 int64) stats.Latency {
		return stats.Latency{Count: 10, P50: p50, P99: 2 * p50, P999: 3 * p50, Max: 4 * p50}
	}
	cpu := func(v float64) *float64 { return &v }
	rep := &Report{Start: time.Unix(0, 0), Config: DefaultConfig(), Results: []YCSBResult{
		{Target: launch.TargetCorral, Workload: "A", Distribution: "zipfian", Seconds: 1, Ops: 2000, OpsPerSec: 2000, CPUUse: load.CPUUse{ServerCPU: cpu(1)},
			PerOp: []YCSBOpResult{{Op: "read", Ops: 1000, OpsPerSec: 1000, Latency: lat(100), Intended: &stats.Latency{Count: 1, P50: 500}}}},
		{Target: launch.TargetZooKeeper, Workload: "A", Distribution: "zipfian", Seconds: 1, Ops: 1000, OpsPerSec: 1000, CPUUse: load.CPUUse{ServerCPU: cpu(1)},
			PerOp: []YCSBOpResult{{Op: "read", Ops: 500, OpsPerSec: 500, Latency: lat(400)}}},
	}}
	var b bytes.Buffer
	WriteYCSBMarkdown(&b, rep)
	md := b.String()
	for _, want := range []string{
		"### corral\n", "### zookeeper\n", "### corral / zookeeper\n",
		"| A (zipfian) | read | 1000 | 0.100 | 0.200 | 0.300 | 0.400 | 0 |",
		"| A (zipfian) | read from intended start |  | 0.500 |",
		"| A | all | 2.00x | — | — | — | — | 0.50x |",
		"| A | read | 2.00x | 0.25x | 0.25x | 0.25x | 0.25x |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	var jl bytes.Buffer
	if err := WriteYCSBJSONLines(&jl, rep); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(jl.String(), "\n"); n != 2 || !strings.Contains(jl.String(), `"bench":"ycsb"`) || !strings.Contains(jl.String(), `"intended_latency"`) {
		t.Errorf("JSON lines:\n%s", jl.String())
	}
}
