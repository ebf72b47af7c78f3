package launch

import (
	"context"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/internal/fakezk"
)

func TestSrvrMode(t *testing.T) {
	for out, want := range map[string]string{
		"Zookeeper version: 3.9.3\nLatency min/avg/max: 0/0.0/0\nZxid: 0x0\nMode: follower\nNode count: 5\n": ModeFollower,
		"Zookeeper version: 3.9.3\nMode: leader\nNode count: 5\nProposal sizes last/min/max: -1/-1/-1\n":     ModeLeader,
		"Zookeeper version: x\nMode: standalone\n":                                                           ModeStandalone,
		"This ZooKeeper instance is not currently serving requests\n":                                        "",
	} {
		if got := SrvrMode(out); got != want {
			t.Errorf("srvrMode(%q) = %q, want %q", out, got, want)
		}
	}
}

func TestWholeLeader(t *testing.T) {
	st := func(modes ...string) []MemberState {
		var s []MemberState
		for i, m := range modes {
			s = append(s, MemberState{ID: i + 1, Mode: m})
		}
		return s
	}
	for _, c := range []struct {
		st   []MemberState
		want int
	}{
		{st(ModeFollower, ModeFollower, ModeLeader), 3},
		{st(ModeLeader, ModeFollower, ModeFollower), 1},
		{st(ModeFollower, "", ModeLeader), 0},                   // one not answering
		{st(ModeFollower, ModeFollower, ModeFollower), 0},       // no leader
		{st(ModeLeader, ModeFollower, ModeLeader), 0},           // two leaders
		{st(ModeStandalone, ModeStandalone, ModeStandalone), 0}, // not an ensemble
	} {
		if got := wholeLeader(c.st); got != c.want {
			t.Errorf("wholeLeader(%v) = %d, want %d", c.st, got, c.want)
		}
	}
}

func TestClientOrderPutsTheLeaderLast(t *testing.T) {
	e := &Ensemble{Members: []*Member{{ID: 1, Addr: "a"}, {ID: 2, Addr: "b"}, {ID: 3, Addr: "c"}}}
	for leader, want := range map[int][]string{1: {"b", "c", "a"}, 2: {"a", "c", "b"}, 3: {"a", "b", "c"}} {
		if got := e.ClientOrder(leader); !slices.Equal(got, want) {
			t.Errorf("leader %d: %v, want %v", leader, got, want)
		}
	}
	if got := e.Addrs(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Addrs %v", got)
	}
	if e.Member(0) != nil || e.Member(4) != nil || e.Member(2).Addr != "b" {
		t.Error("Member lookup")
	}
}

func TestPhaseSumsTheCPUOfEveryServerProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	cfg := launchBudgetPhase(s, load.WorkloadCreate, 2, 4, 200)
	cfg.Duration = 300 * time.Millisecond
	cfg.MaxOps = 0
	// This process stands in for two members: the fake server runs in it.
	cfg.ServerProcs = []load.ServerProc{{Name: "server.1 follower", PID: os.Getpid()}, {Name: "server.2 leader", PID: os.Getpid()}}
	r, err := load.RunPhase(launchTestCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.ServerCPU == nil || len(r.ServerCPUEach) != 2 {
		t.Fatalf("server CPU %v, each %+v", r.ServerCPU, r.ServerCPUEach)
	}
	each := r.ServerCPUEach
	if each[0].Server != "server.1 follower" || each[1].Server != "server.2 leader" || each[1].PID != os.Getpid() {
		t.Errorf("each %+v", each)
	}
	if sum := each[0].CPU + each[1].CPU; math.Abs(*r.ServerCPU-sum) > 1e-9 {
		t.Errorf("server CPU %v, sum of processes %v", *r.ServerCPU, sum)
	}
}

func launchTestCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// launchBudgetPhase is a phase bounded by count: no warm-up and a duration far
// longer than the work, so every reply is measured.
func launchBudgetPhase(s *fakezk.Server, w load.Workload, conns, inflight int, ops int64) load.PhaseConfig {
	return load.PhaseConfig{
		Target: "fake", Addrs: []string{s.Addr()}, Workload: w,
		Conns: conns, Inflight: inflight, ValueSize: 1024,
		Duration: time.Minute, MaxOps: ops, Prefix: "k",
	}
}
