package memory

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/failover"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/internal/fakezk"
)

func TestMain(m *testing.M) {
	if os.Getenv(fakezk.ProcessEnv) == "1" {
		os.Exit(fakezk.ServeMain(os.Args[1:], failover.FailoverPath))
	}
	os.Exit(m.Run())
}

// TestMemoryAgainstFakeEnsemble runs the experiment on fake members (this
// test binary): every znode is created and each member's resident size is
// read.
func TestMemoryAgainstFakeEnsemble(t *testing.T) {
	t.Setenv(fakezk.ProcessEnv, "1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.Targets, cfg.Shapes = []string{launch.TargetCorral}, []Shape{{Count: 50, Size: 10}}
	cfg.Conns, cfg.Inflight, cfg.Settle = 2, 2, 0
	cfg.CorralBin, cfg.WorkDir = os.Args[0], t.TempDir()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("results %+v", rep.Results)
	}
	r := rep.Results[0]
	if r.Created != 50 || len(r.Members) != 3 {
		t.Fatalf("result %+v: want 50 creates and 3 members", r)
	}
	for _, m := range r.Members {
		if m.RSS <= 0 || m.HWM < m.RSS || m.PID <= 0 {
			t.Errorf("member %+v", m)
		}
	}
	var md bytes.Buffer
	rep.Markdown(&md)
	if !strings.Contains(md.String(), "| corral | 50×10B | server.") {
		t.Errorf("report:\n%s", md.String())
	}
}

func TestParseStatus(t *testing.T) {
	rss, hwm, err := parseStatus("Name:\tcorral\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n")
	if err != nil || rss != 1<<20 || hwm != 2<<20 {
		t.Errorf("got %d %d %v", rss, hwm, err)
	}
	if _, _, err := parseStatus("VmRSS:\tx kB\nVmHWM:\t1 kB\n"); err == nil {
		t.Error("bad VmRSS accepted")
	}
	if _, _, err := parseStatus("VmRSS:\t1 kB\n"); err == nil {
		t.Error("missing VmHWM accepted")
	}
}

func TestValidate(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.Targets = nil },
		func(c *Config) { c.Servers = 0 },
		func(c *Config) { c.Shapes = []Shape{{Count: 0, Size: 1}} },
		func(c *Config) { c.Conns = 0 },
		func(c *Config) { c.Durability = "fast" },
		func(c *Config) { c.LoadLimit = 0 },
	} {
		c := DefaultConfig()
		mod(&c)
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Error(err)
	}
}

// TestIncompleteLoadIsMarked: a ZooKeeper that created fewer znodes than
// asked is named as such in its rows and gives no ratio; a complete pair
// gives corral's largest member ÷ ZooKeeper's.
func TestIncompleteLoadIsMarked(t *testing.T) {
	member := func(rss int64) []MemberResult {
		return []MemberResult{{Name: "server.1 leader", RSS: rss, HWM: rss, Znodes: 10, Raw: 50e6}, {Name: "server.2 follower", RSS: rss / 2, HWM: rss, Znodes: 10, Raw: 50e6}}
	}
	rep := &Report{Config: DefaultConfig(), Start: time.Unix(0, 0), Results: []Result{
		{Target: launch.TargetCorral, Shape: "10×100B", Count: 10, Created: 10, Members: member(100e6)},
		{Target: launch.TargetZooKeeper, Shape: "10×100B", JavaHeap: "1g", Count: 10, Created: 10, Members: member(400e6)},
		{Target: launch.TargetCorral, Shape: "20×1024B", Count: 20, Created: 20, Members: member(100e6)},
		{Target: launch.TargetZooKeeper, Shape: "20×1024B", JavaHeap: "256m", Count: 20, Created: 7, Members: member(250e6), Err: "connection lost"},
	}}
	var md bytes.Buffer
	rep.Markdown(&md)
	out := md.String()
	for _, want := range []string{
		"| 10×100B | 50.0 | 100.0 | 2.00× | 400.0 | 1g | 0.25× |",
		"| 20×1024B | 50.0 | 100.0 | 2.00× | 250.0 | 256m | – (ZooKeeper -Xmx256m did not complete its load: 7 of 20) |",
		"| **zookeeper -Xmx256m: load incomplete, 7 of 20 created** | 20×1024B | server.1 leader |",
		"| **zookeeper -Xmx256m: load incomplete, 7 of 20 created** | 20×1024B | error: connection lost |",
		"| zookeeper -Xmx1g | 10×100B | server.1 leader |",
		"- started: 1970-01-01T00:00:00Z",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !rep.Results[3].Incomplete() || rep.Results[1].Incomplete() {
		t.Error("Incomplete wrong")
	}
}
