package failover

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
)

func sampleFailover() *Report {
	trial := func(n, killed, newLeader int, gap time.Duration) FailoverTrial {
		return FailoverTrial{Trial: n, Killed: killed, NewLeader: newLeader, WriterFrom: 1, WriterTo: 2,
			GapMs: MsOf(gap), KillToWriteMs: MsOf(gap) - 2, LastBeforeKillMs: 2, FailedWrites: 1, Reconnects: 1,
			RejoinMs: 1500, gap: gap, measure: true}
	}
	return &Report{
		Start: time.Unix(0, 0), Env: bench.Env{CPUs: 2}, Target: launch.TargetZooKeeper, Servers: 3,
		Timing: launch.DefaultTiming(), SessionTimeout: 10 * time.Second, Negotiated: 10 * time.Second,
		ValueSize: 128, Pre: time.Second, RecoveryTimeout: time.Minute, WholeTimeout: 2 * time.Minute,
		Trials: []FailoverTrial{
			trial(1, 3, 2, 700*time.Millisecond),
			trial(2, 2, 3, 550*time.Millisecond),
			trial(3, 3, 1, 900*time.Millisecond),
			{Trial: 4, Killed: 1, WriterFrom: 2, Err: "no write issued after the kill succeeded within 1m0s"},
		},
		Err: "trial 4: no write issued after the kill succeeded within 1m0s",
	}
}

func TestFailoverMarkdown(t *testing.T) {
	var b bytes.Buffer
	WriteFailoverMarkdown(&b, sampleFailover())
	out := b.String()
	for _, s := range []string{
		"## corral bench failover",
		"target: zookeeper, 3-server ensemble on 127.0.0.1",
		"tickTime=2000, initLimit=10, syncLimit=5",
		"session timeout asked 10s, granted 10s",
		"| 3 | 700.0 | 900.0 | 900.0 | 550.0 |", // nearest rank over 550, 700, 900
		"| 1 | server.3 | server.2 | server.1 | server.2 | 700.0 | 698.0 | 2.0 | 1 | 1 | 0 | 1500 |",
		"| 4 | server.1 | — | server.2 | — | — |",
		"trial 4 FAILED: no write issued",
		"run ended early: trial 4",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
}

func TestFailoverJSONLines(t *testing.T) {
	rep := sampleFailover()
	var b bytes.Buffer
	if err := WriteFailoverJSONLines(&b, rep); err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v", len(lines), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != len(rep.Trials)+1 {
		t.Fatalf("%d lines, want %d", len(lines), len(rep.Trials)+1)
	}
	for i, m := range lines[:len(rep.Trials)] {
		tr := rep.Trials[i]
		if m["kind"] != "trial" || m["trial"] != float64(tr.Trial) || m["gap_ms"] != tr.GapMs ||
			m["tick_time_ms"] != float64(2000) || m["sync_limit"] != float64(5) || m["session_timeout_ms"] != float64(10000) ||
			m["target"] != "zookeeper" {
			t.Errorf("line %d = %v", i, m)
		}
		if _, has := m["error"]; has != (tr.Err != "") {
			t.Errorf("line %d: error present %v", i, has)
		}
	}
	sum := lines[len(lines)-1]
	gaps, _ := sum["gaps_ms"].([]any)
	errText, _ := sum["error"].(string)
	if sum["kind"] != "summary" || sum["trials"] != float64(3) || sum["p50_ms"] != float64(700) ||
		sum["p90_ms"] != float64(900) || sum["max_ms"] != float64(900) || len(gaps) != 3 || gaps[1] != float64(550) ||
		!strings.HasPrefix(errText, "trial 4") {
		t.Errorf("summary = %v", sum)
	}
}
