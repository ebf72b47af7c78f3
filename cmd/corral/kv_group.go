package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/kv/kvserver"
	"github.com/corral-db/corral/replica"
)

// runKVGroup runs a replicated group of n members in this process, each
// with its own directory, zab log and pebble database under base, and a
// zoo.cfg there that runs the same member with `corral server`.
func runKVGroup(ctx context.Context, n int, base string, mode replica.Mode, tick time.Duration, tune kvGroupTuning, logger *slog.Logger, stdout, stderr io.Writer) int {
	g, err := kvserver.NewLocalGroup(n, base, mode, tick, logger)
	if err != nil {
		return kvFail(stderr, "ensemble", err)
	}
	var metrics []string
	for i := range g.Configs {
		g.Configs[i].LeaderChange, g.Configs[i].MemTableSize = tune.leaderChange, tune.memTableSize
		if tune.metricsPort != 0 {
			a := net.JoinHostPort("127.0.0.1", strconv.Itoa(tune.metricsPort+i))
			g.Configs[i].MetricsListen, g.Configs[i].MetricsRuntime = a, true
			metrics = append(metrics, a)
		}
	}
	for _, c := range g.Configs {
		if err := writeKVZooCfg(c); err != nil {
			return kvFail(stderr, "ensemble", err)
		}
	}
	err = g.Run(ctx, func() {
		fmt.Fprintf(stdout, "corral kv: replica group of %d (%s), data and zoo.cfg files in %s\nkv endpoints: %s\n",
			n, mode, filepath.Clean(base), strings.Join(g.Endpoints(), ","))
		if len(metrics) > 0 {
			fmt.Fprintf(stdout, "kv metrics: %s\n", strings.Join(metrics, ","))
		}
		if f, ok := stdout.(*os.File); ok {
			f.Sync()
		}
	})
	if err != nil {
		return kvFail(stderr, "ensemble", err)
	}
	return kvExitOK
}

// kvGroupTuning is what `corral kv ensemble` and `corral kv cluster`
// set on every member of every replica group beyond the group's shape.
type kvGroupTuning struct {
	leaderChange kv.LeaderChangeConfig
	memTableSize uint64
	// metricsPort, if set, is member 1's metrics port, member i's
	// metricsPort+i-1 (kv/kvserver/metrics.go).
	metricsPort int
}

// kvTuningFlags are the flags that set a kvGroupTuning.
type kvTuningFlags struct {
	policy      *string
	threshold   *float64
	minInterval *time.Duration
	memtable    *int64
}

func registerKVTuning(fs *flag.FlagSet) kvTuningFlags {
	return kvTuningFlags{
		policy:      fs.String("leader-policy", "fixed", "compaction-aware leader change of every replicated group: fixed|random|roundrobin|coolest"),
		threshold:   fs.Float64("leader-threshold", 0, "heat at which a leader hands over before compacting (0: 1, a compaction due)"),
		minInterval: fs.Duration("leader-min-interval", 0, "least time between two leader changes of a group, a cluster's leader balancer's too (0: 30s)"),
		memtable:    fs.Int64("memtable-size", 0, "pebble memtable size in bytes (0: 16 MiB and a quarter more per member id, kvserver.DefaultMemTableSize)"),
	}
}

// tuning checks the flags' values.
func (f kvTuningFlags) tuning() (kvGroupTuning, error) {
	lc, err := kvLeaderChange(*f.policy, *f.threshold, *f.minInterval)
	if err != nil {
		return kvGroupTuning{}, err
	}
	if *f.memtable < 0 || *f.memtable >= 4<<30 {
		return kvGroupTuning{}, fmt.Errorf("-memtable-size %d: want 0 up to 4 GiB", *f.memtable)
	}
	return kvGroupTuning{leaderChange: lc, memTableSize: uint64(*f.memtable)}, nil
}

// writeKVZooCfg writes a member's myid and zoo.cfg (store=kv) into its
// directory.
func writeKVZooCfg(m kvserver.Config) error {
	c := config.Default()
	c.DataDir = m.Dir
	c.TickTime = int(m.TickTime / time.Millisecond)
	c.InitLimit, c.SyncLimit = 10, 5
	c.MyID = int64(m.ID)
	c.Store = "kv"
	c.APIAddrs = make(map[int64]string)
	if lc := m.LeaderChange; lc.Policy != kv.PolicyFixed {
		c.KVLeaderPolicy = lc.Policy.String()
		c.KVLeaderChangeThreshold = lc.Threshold
		c.KVLeaderChangeMinIntervalMs = lc.MinInterval.Milliseconds()
	}
	c.KVMemTableSize = int64(m.MemTableSize)
	if m.MetricsListen != "" {
		host, port, err := splitHostPort(m.MetricsListen)
		if err != nil {
			return err
		}
		c.Metrics.ClassName, c.Metrics.HTTPHost, c.Metrics.HTTPPort = config.PrometheusMetricsProvider, host, port
	}
	switch m.Mode {
	case replica.Async:
		c.Durability = config.DurabilityAsync
	case replica.Diskless:
		c.Durability = config.DurabilityDiskless
	default:
		c.Durability = config.DurabilitySync
	}
	for id, p := range m.Peers {
		qh, qp, err := splitHostPort(p.QuorumAddr)
		if err != nil {
			return err
		}
		_, ep, err := splitHostPort(p.ElectionAddr)
		if err != nil {
			return err
		}
		c.Servers = append(c.Servers, config.Server{ID: int64(id), Host: qh, QuorumPort: qp, ElectionPort: ep})
	}
	sortServers(c.Servers)
	for id, a := range m.APIAddrs {
		c.APIAddrs[int64(id)] = a
	}
	host, port, err := splitHostPort(m.APIAddrs[m.ID])
	if err != nil {
		return err
	}
	c.APIPortAddress, c.APIPort = host, port
	// The ZooKeeper client port is unused by a kv member; the API port
	// stands in so the file also passes ZooKeeper-style validation.
	c.ClientPort, c.ClientPortAddress = port, host
	if err := c.WriteMyID(); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(m.Dir, "zoo.cfg"))
	if err != nil {
		return err
	}
	if err := c.WriteZooCfg(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func splitHostPort(a string) (string, int, error) {
	h, p, err := net.SplitHostPort(a)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	return h, n, err
}

func sortServers(s []config.Server) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].ID < s[j-1].ID; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
