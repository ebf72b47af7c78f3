package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/kv/kvserver"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/transport"
)

// runKVServer runs one member of a key-value replica group from a zoo.cfg
// with store=kv: the server.N lines are the group, apiPort (and
// apiPortAddress) where this member serves the KV API, apiAddress.N every
// member's API address for NotLeader redirects.
func runKVServer(ctx context.Context, cfg *config.Config, logger *slog.Logger) int {
	kc, err := kvMemberConfig(cfg, logger)
	if err != nil {
		logger.Error("kv member cannot start", "err", err)
		return 1
	}
	err = kvserver.Run(ctx, kc, func(addr string) {
		logger.Info("kv member serving", "id", kc.ID, "api", addr, "durability", kc.Mode)
	})
	if err != nil {
		logger.Error("kv member stopped", "err", err)
		return 1
	}
	return 0
}

func kvMemberConfig(cfg *config.Config, logger *slog.Logger) (kvserver.Config, error) {
	if cfg.APIPort == 0 {
		return kvserver.Config{}, errors.New("store=kv needs apiPort")
	}
	kc := kvserver.Config{
		ID:        uint64(cfg.MyID),
		Peers:     make(map[uint64]transport.Peer),
		APIAddrs:  make(map[uint64]string),
		APIListen: cfg.APIListenAddr(),
		Dir:       cfg.DataDir,
		TickTime:  time.Duration(cfg.TickTime) * time.Millisecond,
		InitLimit: cfg.InitLimit,
		SyncLimit: cfg.SyncLimit,
		SnapCount: cfg.SnapCount,
		Logger:    logger,
	}
	if cfg.Metrics.Enabled() {
		// metricsProvider.* as a ZooKeeper server reads them: the
		// member's Prometheus endpoint (kv/kvserver/metrics.go).
		kc.MetricsListen, kc.MetricsRuntime = cfg.Metrics.ListenAddr(), cfg.Metrics.ExportJvmInfo
	}
	lc, err := kvLeaderChange(cfg.KVLeaderPolicy, cfg.KVLeaderChangeThreshold, time.Duration(cfg.KVLeaderChangeMinIntervalMs)*time.Millisecond)
	if err != nil {
		return kc, err
	}
	kc.LeaderChange, kc.MemTableSize = lc, uint64(cfg.KVMemTableSize)
	kc.RowCacheSize = cfg.KVRowCacheSize
	switch cfg.Durability {
	case config.DurabilityAsync:
		kc.Mode = replica.Async
	case config.DurabilityDiskless:
		kc.Mode = replica.Diskless
	default:
		kc.Mode = replica.Sync
	}
	if len(cfg.Servers) == 0 {
		// Standalone: a group of one.
		kc.ID = 1
		kc.Peers[1] = transport.Peer{QuorumAddr: "127.0.0.1:0", ElectionAddr: "127.0.0.1:0"}
	}
	for _, s := range cfg.Servers {
		if s.Observer {
			return kc, fmt.Errorf("server.%d: observers are not supported by the key-value store", s.ID)
		}
		kc.Peers[uint64(s.ID)] = transport.Peer{QuorumAddr: s.QuorumAddr(), ElectionAddr: s.ElectionAddr()}
	}
	if _, ok := kc.Peers[kc.ID]; !ok {
		return kc, fmt.Errorf("myid %d is not among the server.N lines", kc.ID)
	}
	for id, a := range cfg.APIAddrs {
		kc.APIAddrs[uint64(id)] = a
	}
	if _, ok := kc.APIAddrs[kc.ID]; !ok {
		kc.APIAddrs[kc.ID] = cfg.APIListenAddr()
	}
	return kc, nil
}

// kvLeaderChange is the compaction-aware leader change that the
// kv.leaderPolicy, kv.leaderChangeThreshold and
// kv.leaderChangeMinIntervalMs keys (or kv ensemble's flags) ask for; ""
// is the fixed leader.
func kvLeaderChange(policy string, threshold float64, minInterval time.Duration) (kv.LeaderChangeConfig, error) {
	lc := kv.LeaderChangeConfig{Threshold: threshold, MinInterval: minInterval}
	if policy != "" {
		p, err := kv.ParseLeaderPolicy(policy)
		if err != nil {
			return lc, err
		}
		lc.Policy = p
	}
	if threshold < 0 || minInterval < 0 {
		return lc, fmt.Errorf("leader change: threshold %v and minimum interval %v must not be negative", threshold, minInterval)
	}
	return lc, nil
}
