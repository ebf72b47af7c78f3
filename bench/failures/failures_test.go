package failures

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/internal/fakezk"
)

// TestFailuresKillsRestartsAndKeepsCounting runs the harness against fake
// members (this test binary): the highest-numbered live member leads and
// the members share no state (reads of nodes another member holds fail,
// and are counted as errors). What is checked is the harness: who is
// killed and restarted, that the clients carry on and count, and that no
// server process outlives the run.
func TestFailuresKillsRestartsAndKeepsCounting(t *testing.T) {
	t.Setenv(fakezk.ProcessEnv, "1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	steps, err := ParseSchedule("300ms:kill-follower,600ms:restart,900ms:kill-leader,1200ms:restart")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cfg := DefaultConfig()
	cfg.Targets, cfg.Servers, cfg.Schedule = []string{launch.TargetCorral}, 3, steps
	cfg.Conns, cfg.Inflight, cfg.Keys, cfg.ValueSize = 3, 2, 30, 16
	cfg.Warmup, cfg.Duration, cfg.Bucket = 0, 3*time.Second, 100*time.Millisecond
	cfg.CorralBin, cfg.WorkDir, cfg.OutDir = os.Args[0], t.TempDir(), out
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 {
		t.Fatalf("runs %+v", rep.Runs)
	}
	run := rep.Runs[0]
	// server.3 leads; server.1 is the first follower.
	want := []struct {
		action string
		server int
	}{{ActionKillFollower, 1}, {ActionRestart, 1}, {ActionKillLeader, 3}, {ActionRestart, 3}}
	if len(run.Events) != len(want) {
		t.Fatalf("events %+v", run.Events)
	}
	var pids []int
	for i, ev := range run.Events {
		if ev.Action != want[i].action || ev.Server != want[i].server || ev.PID == 0 || ev.Err != "" || ev.Step != i+1 || ev.At < ev.Planned {
			t.Errorf("event %d = %+v, want %s of server.%d", i, ev, want[i].action, want[i].server)
		}
		pids = append(pids, ev.PID)
	}
	if pids[0] == pids[1] || pids[2] == pids[3] {
		t.Errorf("restarted servers kept their pids: %v", pids)
	}
	if len(run.Buckets) != 30 || run.Ops+run.Errors == 0 {
		t.Errorf("%d buckets, %d replies, %d errors", len(run.Buckets), run.Ops, run.Errors)
	}
	// The clients of server.1 and server.3 lost their connections and
	// opened sessions elsewhere.
	if run.Sessions < 5 || run.Reconnects < 2 {
		t.Errorf("%d sessions, %d reconnects", run.Sessions, run.Reconnects)
	}
	// Every process the run started is gone.
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d still exists after the run (%v)", pid, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "corral-3.s3.log")); err != nil {
		t.Error(err)
	}
	if ents, _ := os.ReadDir(cfg.WorkDir); len(ents) != 0 {
		t.Errorf("work dir left behind: %v", ents)
	}
}

// syntheticFailuresReport has two targets with a dip after an event.
func syntheticFailuresReport() *Report {
	rep := &Report{
		Start: time.Unix(0, 0), Servers: 5, ReadPct: 70, Keys: 100, Bucket: 100 * time.Millisecond,
		SessionTimeout: 10 * time.Second,
	}
	rep.Env.CPUs, rep.Env.Conns, rep.Env.Inflight, rep.Env.ValueSize = 2, 30, 32, 1024
	rep.Env.Duration = 3 * time.Second
	rep.Schedule, _ = ParseSchedule("1s:kill-leader,2s:restart")
	for k, target := range []string{launch.TargetCorral, launch.TargetZooKeeper} {
		tl := NewTimeline(time.Unix(0, 0), 3*time.Second, 100*time.Millisecond)
		for i := range 30 {
			at := time.Unix(0, 0).Add(time.Duration(i)*100*time.Millisecond + time.Millisecond)
			if i < 10 || i > 12 {
				tl.Add(SeriesReads, at, int64(700*(k+1)))
				tl.Add(SeriesWrites, at, int64(300*(k+1)))
			}
		}
		tl.Add(SeriesLost, time.Unix(1, 0), 32)
		tl.Add(SeriesReconnects, time.Unix(1, 200e6), 6)
		run := FailuresRun{Target: target, Servers: 5, Buckets: tl.Buckets(), Events: []FailureEvent{
			{Step: 1, Planned: 1, At: 1.001, Action: ActionKillLeader, Server: 5, PID: 100},
			{Step: 2, Planned: 2, At: 2.0, Action: ActionRestart, Server: 5, PID: 101},
		}}
		for _, b := range run.Buckets {
			run.Ops += b.Reads + b.Writes
			run.Lost += b.Lost
			run.Reconnects += b.Reconnects
		}
		rep.Runs = append(rep.Runs, run)
	}
	return rep
}

func TestFailuresMarkdown(t *testing.T) {
	var b bytes.Buffer
	WriteFailuresMarkdown(&b, syntheticFailuresReport())
	md := b.String()
	for _, want := range []string{
		"| corral | 1 | 1.0 | 1.001 | kill-leader | server.5 | 100 | 10000 | 0 | 0.3 |",
		"| zookeeper | 1 | 1.0 | 1.001 | kill-leader | server.5 | 100 | 20000 | 0 | 0.3 |",
		"| t s | corral ops/s | errors | lost | reconnects | zookeeper ops/s | errors | lost | reconnects | events |",
		"| 1 | 7000 | 0 | 32 | 6 | 14000 | 0 | 32 | 6 | corral: 1 kill-leader s5; zookeeper: 1 kill-leader s5 |",
		"| 0 | 10000 | 0 | 0 | 0 | 20000 |",
		"schedule (from the start of the measured interval): `1s:kill-leader,2s:restart`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestFailuresJSONLines(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFailuresJSONLines(&b, syntheticFailuresReport()); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		k, _ := m["kind"].(string)
		kinds[k]++
		if m["target"] == nil || m["servers"] != 5.0 {
			t.Errorf("line without its target: %s", sc.Text())
		}
		if k == "bucket" && m["t_s"] == 1.0 && (m["lost"] != 32.0 || m["ops_per_sec"] == nil) {
			t.Errorf("bucket %s", sc.Text())
		}
	}
	if kinds["run"] != 2 || kinds["event"] != 4 || kinds["bucket"] != 60 {
		t.Errorf("kinds %v", kinds)
	}
}

// TestFailuresRecordsARunningServer records the timeline of a server it
// did not start: no schedule, the clients and the buckets only.
func TestFailuresRecordsARunningServer(t *testing.T) {
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	cfg := DefaultConfig()
	cfg.Connect, cfg.Schedule = []string{s.Addr()}, nil
	cfg.Conns, cfg.Inflight, cfg.Keys, cfg.ValueSize = 2, 2, 20, 8
	cfg.Warmup, cfg.Duration, cfg.Bucket = 0, 500*time.Millisecond, 100*time.Millisecond
	rep, err := Run(failuresBenchTestCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || len(rep.Runs[0].Buckets) != 5 || rep.Runs[0].Events != nil || rep.Runs[0].Sessions != 2 ||
		rep.Runs[0].Errors != 0 || rep.Runs[0].Lost != 0 {
		t.Fatalf("report %+v", rep.Runs)
	}
	cfg.Schedule, _ = ParseSchedule("100ms:kill-leader")
	if _, err := Run(failuresBenchTestCtx(t), cfg); err == nil {
		t.Error("a schedule was accepted for servers the benchmark did not start")
	}
	s.Check()
}
