package durability

import (
	"fmt"
	"slices"
	"strings"

	"github.com/corral-db/corral/bench/launch"
)

// DurabilityTarget is one server configuration `corral bench durability`
// measures: a server and the durability lines of its zoo.cfg.
type DurabilityTarget struct {
	// Name labels the configuration in the report ("corral-diskless").
	Name string `json:"name"`
	// Server is TargetCorral or TargetZooKeeper.
	Server     string            `json:"server"`
	Durability launch.Durability `json:"-"`
}

// Names of the configurations.
const (
	DurCorralSync      = "corral-sync"
	DurCorralAsync     = "corral-async"
	DurCorralDiskless  = "corral-diskless"
	DurZKForceSync     = "zk-forcesync"
	DurZKNoForceSync   = "zk-noforcesync"
	DurTargetNamesHelp = DurCorralSync + "," + DurCorralAsync + "," + DurCorralDiskless + "," + DurZKForceSync + "," + DurZKNoForceSync
)

// DurabilityTargets are every configuration, in the order a run measures
// them by default: corral's three modes, then ZooKeeper with and without
// forceSync (its closest equivalents of sync and async; it has no diskless
// mode).
func DurabilityTargets() []DurabilityTarget {
	return []DurabilityTarget{
		// corral keeps forceSync=yes beside durability=: the durability key
		// decides, and the file stays what ZooKeeper would also accept.
		{Name: DurCorralSync, Server: launch.TargetCorral, Durability: launch.Durability{Mode: "sync"}},
		{Name: DurCorralAsync, Server: launch.TargetCorral, Durability: launch.Durability{Mode: "async"}},
		{Name: DurCorralDiskless, Server: launch.TargetCorral, Durability: launch.Durability{Mode: "diskless"}},
		{Name: DurZKForceSync, Server: launch.TargetZooKeeper, Durability: launch.Durability{}},
		{Name: DurZKNoForceSync, Server: launch.TargetZooKeeper, Durability: launch.Durability{NoForceSync: true}},
	}
}

// ParseDurabilityTargets reads a comma-separated list of configuration
// names; the configurations run in the order given, each at most once.
func ParseDurabilityTargets(s string) ([]DurabilityTarget, error) {
	all := DurabilityTargets()
	var out []DurabilityTarget
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.IndexFunc(all, func(t DurabilityTarget) bool { return t.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("bench: unknown configuration %q (want some of %s)", name, DurTargetNamesHelp)
		}
		if slices.ContainsFunc(out, func(t DurabilityTarget) bool { return t.Name == name }) {
			return nil, fmt.Errorf("bench: configuration %q named twice", name)
		}
		out = append(out, all[i])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: no configuration (want some of %s)", DurTargetNamesHelp)
	}
	return out, nil
}
