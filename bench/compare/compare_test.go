package compare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/failover"
	"github.com/corral-db/corral/bench/floor"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/internal/fakezk"
)

// fakeServerEnv makes the test binary act as a server started as
// `BINARY server zoo.cfg`, so Compare can launch it like corral.
const fakeServerEnv = fakezk.ProcessEnv

func TestMain(m *testing.M) {
	if os.Getenv(fakezk.ProcessEnv) == "1" {
		os.Exit(fakezk.ServeMain(os.Args[1:], failover.FailoverPath))
	}
	os.Exit(m.Run())
}

// fakeCompare runs Compare on corral alone, the test binary standing in
// for the server (fakeServerEnv), with conns × inflight load for d per
// phase and no warm-up; edit adjusts the rest. It returns the report, the
// --out directory and the work directory.
func fakeCompare(t *testing.T, conns, inflight int, d time.Duration, edit func(*Config)) (rep *Report, out, work string) {
	t.Helper()
	t.Setenv(fakeServerEnv, "1")
	out, work = t.TempDir(), t.TempDir()
	cfg := DefaultConfig()
	cfg.Targets = []string{launch.TargetCorral}
	cfg.CorralBin = os.Args[0]
	cfg.Conns, cfg.Inflight = conns, inflight
	cfg.Warmup, cfg.Duration = 0, d
	cfg.SeqWarmup, cfg.SeqDuration = 0, d
	cfg.WorkDir, cfg.OutDir = work, out
	cfg.Floor = &floor.Config{Members: []int{1}, SyncRounds: 3, Pings: 20}
	if edit != nil {
		edit(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Compare(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep, out, work
}

func TestCompareLaunchesMeasuresAndStops(t *testing.T) {
	rep, out, work := fakeCompare(t, 3, 4, 500*time.Millisecond, nil)
	if len(rep.Servers) != 1 || rep.Servers[0].Version != "Zookeeper version: fake" {
		t.Errorf("servers %+v", rep.Servers)
	}
	var phases []string
	for _, r := range rep.Results {
		phases = append(phases, r.Phase)
		if r.Err != "" || r.Errors != 0 || r.Ops == 0 || r.ServerCPU == nil || r.Target != launch.TargetCorral {
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
	if ents, _ := os.ReadDir(work); len(ents) != 0 {
		t.Errorf("work dir left behind: %v", ents)
	}
}

func TestLaunchReportsAServerThatExits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := launch.Launch(ctx, launch.TargetCorral, launch.LaunchConfig{Dir: t.TempDir(), CorralBin: "/bin/false"})
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("err = %v, want an exit during start-up", err)
	}
}

func TestCompareEnsembleSpreadsConnectionsAndSumsCPU(t *testing.T) {
	rep, out, work := fakeCompare(t, 4, 2, 300*time.Millisecond, func(c *Config) { c.Servers = 3 })
	if len(rep.Servers) != 1 {
		t.Fatalf("servers %+v", rep.Servers)
	}
	info := rep.Servers[0]
	if len(info.Members) != 3 || !strings.HasPrefix(info.Leader, "server.3 ") || info.LeaderAfter != "" ||
		strings.Count(info.Addr, ",") != 2 {
		t.Errorf("server info %+v", info)
	}
	for _, r := range rep.Results {
		if r.Err != "" || r.Ops == 0 || r.ServerCPU == nil || len(r.ServerCPUEach) != 3 {
			t.Errorf("%s: %+v", r.Phase, r)
			continue
		}
		if r.ServerCPUEach[2].Server != "server.3 leader" || r.ServerCPUEach[0].Server != "server.1 follower" ||
			r.ServerCPUEach[1].PID != info.Members[1].PID {
			t.Errorf("%s: per-process CPU %+v", r.Phase, r.ServerCPUEach)
		}
	}
	// Every member served requests of every phase, and was started from
	// its own member's configuration, which was saved.
	for id := 1; id <= 3; id++ {
		base := filepath.Join(out, fmt.Sprintf("corral.s%d", id))
		logb, err := os.ReadFile(base + ".log")
		var creates, sets, gets int
		if i := strings.Index(string(logb), "served "); i >= 0 {
			fmt.Sscanf(string(logb[i:]), "served create %d setData %d getData %d", &creates, &sets, &gets)
		}
		if err != nil || !strings.Contains(string(logb), fmt.Sprintf("myid %d", id)) || creates == 0 || sets == 0 || gets == 0 {
			t.Errorf("server.%d log %q, %v", id, logb, err)
		}
		cfgb, err := os.ReadFile(base + ".zoo.cfg")
		if err != nil || !strings.Contains(string(cfgb), "server.3=127.0.0.1:") || strings.Contains(string(cfgb), "clientPort=") {
			t.Errorf("server.%d zoo.cfg %q, %v", id, cfgb, err)
		}
	}
	if ents, _ := os.ReadDir(work); len(ents) != 0 {
		t.Errorf("work dir left behind: %v", ents)
	}
}

// --durability reaches the launched server's zoo.cfg and the report.
func TestCompareDurability(t *testing.T) {
	rep, out, _ := fakeCompare(t, 1, 1, 100*time.Millisecond, func(c *Config) { c.Durability = "diskless" })
	zc, err := os.ReadFile(filepath.Join(out, "corral.zoo.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(zc), "durability=diskless\n") {
		t.Errorf("zoo.cfg lacks durability=diskless:\n%s", zc)
	}
	var b strings.Builder
	WriteMarkdown(&b, rep)
	if !strings.Contains(b.String(), "durability diskless (corral: durability=diskless; ZooKeeper: forceSync=yes)") {
		t.Errorf("report does not state the durability:\n%s", b.String())
	}
	if _, err := Compare(context.Background(), Config{Targets: []string{launch.TargetZooKeeper}, Durability: "diskless"}); err == nil {
		t.Error("diskless ZooKeeper accepted")
	}
}

func TestParsePhases(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" means an error
	}{
		{"create,set,get,seqcreate", "create,set,get,seqcreate"},
		{" seqcreate , create,get ", "seqcreate,create,get"},
		{"seqcreate", "seqcreate"},
		{"set,create", "set,create"},
		{"seqcreate/create/set,get", "seqcreate/create/set,get"},
		{"seqcreate / set ,get", "seqcreate/set,get"},
		{"create,get,get", ""},
		{"create/get/create", ""},
		{"create,delete", ""},
		{"create//get", ""},
		{",", ""},
	} {
		got, err := ParsePhases(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q: %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || FormatPhases(got) != tc.want {
			t.Errorf("%q: %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// Without a create phase before them, set and get address nodes created
// unmeasured, the same number for every target.
func TestCompareSetWithoutCreatePreloads(t *testing.T) {
	rep, _, _ := fakeCompare(t, 2, 2, 300*time.Millisecond, func(c *Config) {
		c.Phases, c.Keys = [][]string{{"set", "get"}}, 50
	})
	if len(rep.Results) != 2 {
		t.Fatalf("results %+v", rep.Results)
	}
	for _, r := range rep.Results {
		if r.Err != "" || r.Ops == 0 || r.Errors != 0 {
			t.Errorf("%s: %+v", r.Phase, r)
		}
	}
	var b strings.Builder
	WriteMarkdown(&b, rep)
	if !strings.Contains(b.String(), "set and get address 50 nodes created unmeasured before them") {
		t.Errorf("report does not say how many nodes were preloaded:\n%s", b.String())
	}
}

// Phases run in the order given; each group of them on a fresh start of
// the target, recorded as a server of its own.
func TestComparePhasesRunInTheOrderGiven(t *testing.T) {
	rep, out, _ := fakeCompare(t, 2, 2, 300*time.Millisecond, func(c *Config) {
		c.Phases = [][]string{{"seqcreate"}, {"create", "get"}}
	})
	var phases []string
	for _, r := range rep.Results {
		phases = append(phases, r.Phase)
		if r.Err != "" || r.Ops == 0 {
			t.Errorf("%s: %+v", r.Phase, r)
		}
	}
	if got := strings.Join(phases, ","); got != "seqcreate,create,get" {
		t.Errorf("phases %s", got)
	}
	if seq := rep.Results[0]; seq.Conns != 1 || seq.Inflight != 1 {
		t.Errorf("seqcreate ran %d × %d", seq.Conns, seq.Inflight)
	}
	if len(rep.Servers) != 2 || strings.Join(rep.Servers[0].Phases, ",") != "seqcreate" ||
		strings.Join(rep.Servers[1].Phases, ",") != "create,get" {
		t.Errorf("servers %+v, want one start per group", rep.Servers)
	}
	for _, f := range []string{"corral.seqcreate.log", "corral.create-get.log"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("each start's log kept apart: %v", err)
		}
	}
	var b strings.Builder
	WriteMarkdown(&b, rep)
	if !strings.Contains(b.String(), "(groups separated by /): seqcreate / create, get") {
		t.Errorf("report does not name the phases:\n%s", b.String())
	}
}

func TestCompareRunsTheFloorProbe(t *testing.T) {
	rep, _, _ := fakeCompare(t, 1, 1, 200*time.Millisecond, func(c *Config) { c.Phases = [][]string{{"seqcreate"}} })
	if rep.Floor == nil {
		t.Fatal("no floor report")
	}
	f, ok := rep.Floor.For(1)
	if !ok || f.Sync.Count != 3 || rep.Floor.Loopback.Count != 20 {
		t.Errorf("floor %+v (found %v), loopback %+v", f, ok, rep.Floor.Loopback)
	}
	var b strings.Builder
	WriteMarkdown(&b, rep)
	if !strings.Contains(b.String(), "corral seqcreate p50 = ") || !strings.Contains(b.String(), "× floor (1 server(s): ") {
		t.Errorf("report lacks the floor multiple:\n%s", b.String())
	}
}

func TestCompareRefusesAnUnknownClient(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Client = "kazoo"
	if _, err := Compare(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "unknown client") {
		t.Errorf("err = %v", err)
	}
	cfg.Client, cfg.Rate = ClientGozk, 100
	if _, err := Compare(context.Background(), cfg); err == nil {
		t.Error("gozk with a rate accepted")
	}
}
