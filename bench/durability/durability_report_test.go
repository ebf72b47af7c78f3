package durability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

// cannedDurabilityReport is a run of every configuration with made-up
// numbers: create throughput is 1000 × (configuration index + 1) per
// second, so diskless (index 2) is 3000/s, corral-sync 1000/s and
// zk-forcesync 4000/s.
func cannedDurabilityReport() *Report {
	cfg := DefaultConfig()
	cfg.CreateDuration, cfg.GetDuration, cfg.CPUDuration, cfg.QueueDuration = 3*time.Second, 2*time.Second, 2*time.Second, 2*time.Second
	rep := &Report{
		Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), End: time.Date(2026, 1, 2, 3, 9, 5, 0, time.UTC),
		CommandLine: "corral bench durability --create-duration 3s", Config: cfg,
		Env:        bench.Env{GOOS: "linux", GOARCH: "amd64", CPUs: 2, GOMAXPROCS: 2, LoadAvg: "0.50 0.40 0.30", WorkDir: "/tmp/w"},
		LoadAvgEnd: "1.50 1.00 0.80",
	}
	for i, tg := range DurabilityTargets() {
		rate := int64(1000 * (i + 1))
		rep.Servers = append(rep.Servers, DurabilityServer{Target: tg, ZooCfg: tg.Durability.Lines(), Info: bench.ServerInfo{
			Target: tg.Name, Argv: []string{"srv", tg.Name}, Leader: "server.3 (127.0.0.1:3)",
			Members: []bench.MemberInfo{{ID: 1, PID: 101 + 10*i}, {ID: 2, PID: 102 + 10*i}, {ID: 3, PID: 103 + 10*i}},
		}})
		lat := stats.Latency{Count: 10, P50: 1500, P99: 9000, Max: 12000}
		base := DurPhase{Config: tg.Name, Server: tg.Server, Clients: 60, Seconds: 3, Latency: lat,
			CPUUse: load.CPUUse{ServerCPU: durabilityF64(1.5), LoadgenCPU: 0.3, MachineCPU: durabilityF64(2.1)}, LoadAvg: "0.5 0.4 0.3"}
		create := base
		create.Phase, create.PerSecond = DurPhaseCreate, []int64{rate - 100, rate, rate + 100}
		create.Ops, create.OpsPerSec = 3*rate, float64(rate)
		create.Series = SummarizeSeries(create.PerSecond, 3*time.Second)
		get := base
		get.Phase, get.Seconds, get.PerSecond, get.Ops, get.OpsPerSec = DurPhaseGet, 2, []int64{50000, 52000}, 102000, 51000
		cpu := base
		cpu.Phase, cpu.Seconds, cpu.TargetRate, cpu.Ops, cpu.OpsPerSec = DurPhaseCPU, 2, 1000, 2000, 1000
		cpu.ServerCPUPerSecond = []float64{70 + float64(i), 72}
		cpu.ServerCPUEach = []load.ProcCPU{{Server: "server.1 follower", CPU: 0.4}, {Server: "server.2 follower", CPU: 0.4}, {Server: "server.3 leader", CPU: 0.7}}
		queue := base
		queue.Phase, queue.Seconds, queue.PerSecond, queue.Ops, queue.OpsPerSec = DurPhaseQueue, 2, []int64{400, 420}, 820, 410
		queue.Producers, queue.Consumers, queue.Produced, queue.ProducedPerSec = 1, 1, 900, 450
		queue.EndToEnd = &stats.Latency{Count: 820, P50: 200000, P99: 250000, Max: 260000}
		queue.LeftInQueue = 80
		rep.Phases = append(rep.Phases, cpu, queue, create, get)
	}
	return rep
}

func TestDurabilityMarkdown(t *testing.T) {
	rep := cannedDurabilityReport()
	rep.Plots = []string{"create.png", "cpu.png"}
	var b bytes.Buffer
	WriteDurabilityMarkdown(&b, rep)
	md := b.String()
	for _, want := range []string{
		"corral bench durability --create-duration 3s", // the exact command
		"load average at start 0.50 0.40 0.30, at end 1.50 1.00 0.80",
		"- corral-diskless: `forceSync=yes durability=diskless`",
		"- zk-noforcesync: `forceSync=no`",
		"| create | corral-sync | corral-async | corral-diskless | zk-forcesync | zk-noforcesync |",
		"| creates/s | 1000 | 2000 | 3000 | 4000 | 5000 |",
		"| per-second min – max | 900 – 1100 | 1900 – 2100 |",
		"| create p50 ms | 1.50 |",
		"| getData/s | 51000 |",
		"| creates/s achieved | 1000 |",
		"| server CPU % of one core | 75.0 |", // 1.5 s over 2 s
		"| server CPU % by member | 20 f, 20 f, 35 l |",
		"| messages consumed/s | 410 |",
		"| end-to-end p50 ms | 200.00 |",
		"| left in queue at end | 80 |",
		// other CPU: 2.1 - 1.5 - 0.3 = 0.3 s over 3 s × 2 CPUs = 5%
		"| other CPU % of the machine | 5 |",
		"| corral-diskless ÷ zk-forcesync | 0.75x | ≥ 4.0x | no |",
		"| corral-diskless ÷ corral-sync | 3.00x | ≥ 1.3x | yes |",
		"![create](create.png)", "![cpu](cpu.png)",
		"| 2 | 1000 | 2000 | 3000 | 4000 | 5000 |", // per-second create table, second 2
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}

func TestDurabilityMarkdownFailure(t *testing.T) {
	rep := cannedDurabilityReport()
	rep.Servers[3].Info.Err = "zookeeper ensemble not whole"
	var kept []DurPhase
	for _, p := range rep.Phases {
		if p.Config != DurZKForceSync {
			kept = append(kept, p)
		}
	}
	rep.Phases = kept
	rep.Phases[0].Err, rep.Phases[0].Seconds = "bench: corral-sync cpu: boom", 0
	var b bytes.Buffer
	WriteDurabilityMarkdown(&b, rep)
	md := b.String()
	for _, want := range []string{
		"FAILED: zookeeper ensemble not whole",
		"- corral-sync cpu FAILED: bench: corral-sync cpu: boom",
		"| creates/s | 1000 | 2000 | 3000 | — | 5000 |", // no numbers for the failed configuration
		"| creates/s achieved | — | 1000 |",             // nor for the failed phase
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "÷ zk-forcesync") {
		t.Error("a ratio against a configuration that did not run")
	}
	if t.Failed() {
		t.Log(md)
	}
}

func TestDurabilityJSONLines(t *testing.T) {
	rep := cannedDurabilityReport()
	var b bytes.Buffer
	if err := WriteDurabilityJSONLines(&b, rep); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&b)
	sc.Buffer(nil, 1<<20)
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 1+len(rep.Phases) {
		t.Fatalf("%d lines for %d phases", len(lines), len(rep.Phases))
	}
	run := lines[0]
	if run["record"] != "run" || run["command"] != rep.CommandLine || run["clients"] != float64(60) {
		t.Errorf("run line: %v", run)
	}
	configs, _ := run["configs"].([]any)
	if len(configs) != 5 {
		t.Fatalf("run line has %d configurations", len(configs))
	}
	if c := configs[2].(map[string]any); c["name"] != DurCorralDiskless || fmt.Sprint(c["zoo_cfg"]) != "[forceSync=yes durability=diskless]" {
		t.Errorf("diskless configuration: %v", c)
	}
	ratios, _ := run["create_ratios"].([]any)
	if len(ratios) != 2 || ratios[0].(map[string]any)["ratio"] != 0.75 {
		t.Errorf("ratios: %v", ratios)
	}
	create := lines[3]
	if create["record"] != "phase" || create["phase"] != DurPhaseCreate || create["config"] != DurCorralSync {
		t.Fatalf("third phase line: %v", create)
	}
	if fmt.Sprint(create["per_second"]) != "[900 1000 1100]" || create["ops_per_sec"] != float64(1000) {
		t.Errorf("create line: %v", create)
	}
	if q := lines[2]; q["phase"] != DurPhaseQueue || q["end_to_end"].(map[string]any)["p50_us"] != float64(200000) {
		t.Errorf("queue line: %v", q)
	}
}
