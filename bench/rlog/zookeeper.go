package rlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/go-zookeeper/zk"
)

// zkPath is the parent of ZooKeeper's sequential znodes.
const zkPath = "/bench-rlog"

// quietLogger drops go-zookeeper's log lines.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// zookeeperPhase launches a ZooKeeper ensemble of cfg.Members (forceSync
// on) under dir and writes cfg.Size-byte sequential znodes from
// cfg.Outstanding sessions spread over the members, each with one create
// in flight (go-zookeeper's calls are synchronous). It returns the point
// and the ensemble's srvr version.
func zookeeperPhase(ctx context.Context, cfg *Config, dir string) (Point, string, error) {
	e, err := launch.LaunchEnsemble(ctx, launch.TargetZooKeeper, launch.EnsembleConfig{
		LaunchConfig: launch.LaunchConfig{Dir: dir, ZKLib: cfg.ZKLib, Java: cfg.Java, JavaHeap: cfg.JavaHeap,
			ReadyTimeout: cfg.StartTimeout, Log: cfg.Log},
		Servers: cfg.Members,
	})
	if err != nil {
		return Point{}, "", err
	}
	defer e.Stop()
	addrs := e.Addrs()
	conns := make([]*zk.Conn, cfg.Outstanding)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		c, _, err := zk.Connect([]string{addrs[i%len(addrs)]}, 30*time.Second, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
		if err != nil {
			return Point{}, e.Version, fmt.Errorf("bench: zookeeper session: %w", err)
		}
		conns[i] = c
	}
	acl := zk.WorldACL(zk.PermAll)
	if err := retryCreate(ctx, conns[0], zkPath, acl, cfg.StartTimeout); err != nil {
		return Point{}, e.Version, err
	}
	data := payload(cfg.Size, 'z')
	p := phase(ctx, cfg.Outstanding, cfg.Warmup, cfg.Duration, cfg.PhaseBytes, cfg.OpTimeout, func(ctx context.Context, w int) (int, error) {
		_, err := conns[w].Create(zkPath+"/e-", data, zk.FlagSequence, acl)
		return len(data), err
	})
	p.Figure, p.Setup, p.System, p.Members, p.Durability, p.Size = "zookeeper", "zookeeper", "zookeeper", cfg.Members, "forceSync=yes", cfg.Size
	return p, e.Version, ctx.Err()
}

// retryCreate creates path until it exists (the session may still be
// connecting).
func retryCreate(ctx context.Context, c *zk.Conn, path string, acl []zk.ACL, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := c.Create(path, nil, 0, acl)
		if err == nil || errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("bench: zookeeper create %s: %w", path, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
