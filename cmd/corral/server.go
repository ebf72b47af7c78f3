package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/gcpace"
	"github.com/corral-db/corral/server"
	"github.com/corral-db/corral/server/flw"
	"github.com/corral-db/corral/transport"
)

func runServer(args []string) int {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	logLevel := fs.String("log-level", "info", "debug|info|warn|error")
	pprofAddr := fs.String("pprof", "", "serve Go's pprof on this loopback address (e.g. 127.0.0.1:6060)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *pprofAddr != "" {
		startPprof(*pprofAddr)
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: corral server [-log-level L] ZOO_CFG")
		return 2
	}
	logger := newLogger(*logLevel)
	cfg, warnings, err := config.Load(fs.Arg(0), logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "corral: %v\n", err)
		return 1
	}
	for _, w := range warnings {
		logger.Warn(w)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go gcpace.Run(ctx, gcpace.DefaultHeadroom(), logger)
	if cfg.Store == "kv" {
		return runKVServer(ctx, cfg, logger)
	}
	if err := serve(ctx, cfg, logger, nil); err != nil {
		logger.Error("server stopped", "err", err)
		return 1
	}
	return 0
}

// serve runs one server until ctx ends. ready, if not nil, receives the
// client address once the server listens.
func serve(ctx context.Context, cfg *config.Config, logger *slog.Logger, ready func(addr string)) error {
	opts, err := serverOptions(cfg, logger)
	if err != nil {
		return err
	}
	srv, err := server.New(opts)
	if err != nil {
		return err
	}
	if err := srv.Listen(); err != nil {
		return err
	}
	if ready != nil {
		ready(srv.Addr().String())
	}
	return srv.Serve(ctx)
}

func serverOptions(cfg *config.Config, logger *slog.Logger) (server.Options, error) {
	tick := time.Duration(cfg.TickTime) * time.Millisecond
	o := server.Options{
		ListenAddr:             cfg.ClientListenAddr(),
		DataDir:                cfg.DataDir,
		DataLogDir:             cfg.DataLogDir,
		ServerID:               1,
		TickTime:               tick,
		MinSessionTimeout:      time.Duration(cfg.MinSessionTimeout) * time.Millisecond,
		MaxSessionTimeout:      time.Duration(cfg.MaxSessionTimeout) * time.Millisecond,
		MaxClientCnxns:         cfg.MaxClientCnxns,
		GlobalOutstandingLimit: cfg.GlobalOutstandingLimit,
		MaxBuffer:              cfg.JuteMaxBuffer,
		SnapCount:              cfg.SnapCount,
		SnapRetainCount:        cfg.AutopurgeSnapRetainCount,
		PurgeInterval:          time.Duration(cfg.AutopurgePurgeInterval) * time.Hour,
		FourLetterWords:        map[string]bool{},
		ExtendedTypesEnabled:   cfg.ExtendedTypesEnabled,
		SuperDigest:            cfg.SuperDigest,
		ContainerCheckInterval: time.Duration(cfg.ContainerCheckIntervalMs) * time.Millisecond,
		ContainerMaxNeverUsed:  time.Duration(cfg.ContainerMaxNeverUsedIntervalMs) * time.Millisecond,
		Logger:                 logger,
	}
	if cfg.Distributed() {
		ens, err := ensembleOptions(cfg)
		if err != nil {
			return o, err
		}
		o.Ensemble = ens
		o.ServerID = cfg.MyID
	}
	switch cfg.Durability {
	case config.DurabilitySync, "":
		o.Durability = server.DurabilitySync
	case config.DurabilityAsync:
		o.Durability = server.DurabilityAsync
	case config.DurabilityDiskless:
		o.Durability = server.DurabilityDiskless
	default:
		return o, errors.New("durability " + string(cfg.Durability) + " is not implemented")
	}
	if cfg.PurgeTimeMs > 0 {
		// The diskless thesis's purger keys take over from autopurge.*.
		o.PurgeInterval = time.Duration(cfg.PurgeTimeMs) * time.Millisecond
		o.SnapRetainCount = cfg.NumberToRetain
	}
	for _, w := range cfg.FourLetterWordWhitelist {
		o.FourLetterWords[w] = true
	}
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	port := strconv.Itoa(cfg.ClientPort)
	o.ConfigLines = []flw.KV{
		{Key: "clientPort", Value: port},
		{Key: "secureClientPort", Value: "-1"},
		{Key: "dataDir", Value: filepath.Join(abs(cfg.DataDir), "version-2")},
		{Key: "dataDirSize", Value: "0"},
		{Key: "dataLogDir", Value: filepath.Join(abs(cfg.DataLogDir), "version-2")},
		{Key: "dataLogSize", Value: "0"},
		{Key: "tickTime", Value: strconv.Itoa(cfg.TickTime)},
		{Key: "maxClientCnxns", Value: strconv.Itoa(cfg.MaxClientCnxns)},
		{Key: "minSessionTimeout", Value: strconv.Itoa(cfg.MinSessionTimeout)},
		{Key: "maxSessionTimeout", Value: strconv.Itoa(cfg.MaxSessionTimeout)},
		{Key: "clientPortListenBacklog", Value: "-1"},
		{Key: "serverId", Value: strconv.FormatInt(max(cfg.MyID, 0), 10)},
	}
	return o, nil
}

// ensembleOptions turns the server.N lines and myid into the server's
// ensemble description.
func ensembleOptions(cfg *config.Config) (*server.Ensemble, error) {
	self := cfg.Self()
	if self == nil {
		return nil, fmt.Errorf("myid %d in %s has no server.%d line", cfg.MyID, cfg.DataDir, cfg.MyID)
	}
	ens := &server.Ensemble{
		ID:        uint64(cfg.MyID),
		Peers:     map[uint64]transport.Peer{},
		InitLimit: cfg.InitLimit,
		SyncLimit: cfg.SyncLimit,
		Config:    []byte(cfg.QuorumConfig()),
	}
	for _, sv := range cfg.Servers {
		id := uint64(sv.ID)
		if sv.Observer {
			ens.Observers = append(ens.Observers, id)
		} else {
			ens.Voters = append(ens.Voters, id)
		}
		ens.Peers[id] = transport.Peer{QuorumAddr: sv.QuorumAddr(), ElectionAddr: sv.ElectionAddr()}
	}
	return ens, nil
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}
