package durability

import (
	"slices"
	"strings"
	"testing"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/config"
)

func TestParseDurabilityTargets(t *testing.T) {
	got, err := ParseDurabilityTargets(" zk-forcesync, corral-diskless ,")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != DurZKForceSync || got[1].Name != DurCorralDiskless {
		t.Errorf("got %+v", got)
	}
	for _, bad := range []string{"", ",", "corral-fast", "corral-sync,corral-sync"} {
		if _, err := ParseDurabilityTargets(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	all, err := ParseDurabilityTargets(DurTargetNamesHelp)
	if err != nil || len(all) != 5 {
		t.Errorf("the default list: %d targets, %v", len(all), err)
	}
}

// Each configuration's zoo.cfg says what it is meant to, and corral's own
// parser reads corral's three into the three durability modes.
func TestDurabilityZooCfg(t *testing.T) {
	peers := []launch.Peer{{ID: 1, QuorumPort: 1, ElectionPort: 2, ClientPort: 3}, {ID: 2, QuorumPort: 4, ElectionPort: 5, ClientPort: 6},
		{ID: 3, QuorumPort: 7, ElectionPort: 8, ClientPort: 9}}
	want := map[string]struct {
		lines []string
		mode  config.Durability
	}{
		DurCorralSync: {[]string{"forceSync=yes", "durability=sync"}, config.DurabilitySync},
		// config.WriteZooCfg writes forceSync=no beside async and
		// diskless; corral goes by the durability line.
		DurCorralAsync:    {[]string{"forceSync=no", "durability=async"}, config.DurabilityAsync},
		DurCorralDiskless: {[]string{"forceSync=no", "durability=diskless"}, config.DurabilityDiskless},
		DurZKForceSync:    {[]string{"forceSync=yes"}, config.DurabilitySync},
		DurZKNoForceSync:  {[]string{"forceSync=no"}, config.DurabilityAsync},
	}
	for _, tg := range DurabilityTargets() {
		w := want[tg.Name]
		cfg := launch.ServerConfig{DataDir: "/tmp/x", Peers: peers, Durability: tg.Durability}.ZooCfg()
		var got []string
		for _, l := range strings.Split(cfg, "\n") {
			if strings.HasPrefix(l, "forceSync=") || strings.HasPrefix(l, "durability=") {
				got = append(got, l)
			}
		}
		if !slices.Equal(got, w.lines) {
			t.Errorf("%s: durability lines %q, want %q", tg.Name, got, w.lines)
		}
		// ZooKeeper's files carry no corral-only key.
		if tg.Server == launch.TargetZooKeeper && strings.Contains(cfg, "durability") {
			t.Errorf("%s: zoo.cfg for ZooKeeper names durability:\n%s", tg.Name, cfg)
		}
		c, _, err := config.Parse(strings.NewReader(cfg), nil)
		if err != nil {
			t.Fatalf("%s: corral does not parse its zoo.cfg: %v\n%s", tg.Name, err, cfg)
		}
		if c.Durability != w.mode {
			t.Errorf("%s: corral reads durability %q, want %q", tg.Name, c.Durability, w.mode)
		}
	}
	// The zero value is what compare and failover have always written.
	if cfg := (launch.ServerConfig{DataDir: "/tmp/x", Port: 2181}).ZooCfg(); strings.Count(cfg, "forceSync=yes\n") != 1 ||
		strings.Contains(cfg, "durability") {
		t.Errorf("default zoo.cfg changed:\n%s", cfg)
	}
}
