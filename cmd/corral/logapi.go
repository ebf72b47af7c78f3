package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/corral-db/corral/apisrv"
	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/rlog/rlogsvc"
	"github.com/corral-db/corral/rlog/zklogs"
	"github.com/corral-db/corral/server"
)

// startLogAPI serves the replicated-log API (corral.rlog.v1) of a
// ZooKeeper-protocol member with rlog.root on apiPortAddress:apiPort, the
// port the key-value store's members serve their API on: one gRPC server
// per process kind. Its operations run on the tree's logs through a
// session with this member (rlog/zklogs), so a follower serves them too.
// It returns "" when the member serves no API (no rlog.root or no
// apiPort), else the address it listens on; the server stops with ctx.
func startLogAPI(ctx context.Context, wg *sync.WaitGroup, cfg *config.Config, srv *server.Server, logger *slog.Logger) (string, error) {
	if cfg.APIPort == 0 {
		return "", nil
	}
	if cfg.RlogRoot == "" {
		return "", errors.New("apiPort is set but this member serves no API: the log API needs rlog.root (the key-value API needs store=kv)")
	}
	// The session is with this member, in process (server.DialLocal):
	// the API's appends reach the member without a loopback socket.
	logs, err := zklogs.New(zklogs.Options{Servers: []string{srv.Addr().String()}, Root: cfg.RlogRoot, Logger: logger.With("part", "rlog api"),
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) { return srv.DialLocal(ctx) }})
	if err != nil {
		return "", err
	}
	api, err := apisrv.Listen(cfg.APIListenAddr(), apisrv.Options{})
	if err != nil {
		return "", fmt.Errorf("apiPort: %w", err)
	}
	rlogsvc.NewBackend(logs).Register(api.Registrar())
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer logs.Close()
		if err := api.Serve(ctx); err != nil {
			logger.Error("log API server stopped", "err", err)
		}
	}()
	return api.Addr().String(), nil
}
