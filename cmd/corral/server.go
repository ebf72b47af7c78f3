package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/corral-db/corral/admin"
	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/console"
	"github.com/corral-db/corral/internal/gcpace"
	"github.com/corral-db/corral/internal/zktls"
	"github.com/corral-db/corral/server"
	"github.com/corral-db/corral/server/flw"
	"github.com/corral-db/corral/transport"
)

func runServer(args []string) int {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	logLevel := fs.String("log-level", "info", "debug|info|warn|error")
	pprofAddr := fs.String("pprof", "", "serve Go's pprof on this loopback address (e.g. 127.0.0.1:6060)")
	forceRecover := fs.Bool("force-recover", false, "diskless ensemble only, after a crash of a majority: start as a voter "+
		"from the newest snapshot instead of recovering; run on every member, the newest snapshot among them wins and "+
		"later writes are lost; remove the flag once the ensemble serves (docs/design/diskless.md)")
	var sysProps sysPropFlag
	fs.Var(&sysProps, "D", "a ZooKeeper system property `key=value` (repeatable; zoo.cfg wins), as zkServer.sh passes -D flags")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *pprofAddr != "" {
		startPprof(*pprofAddr)
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: corral server [-log-level L] [-force-recover] [-D key=value ...] ZOO_CFG")
		return 2
	}
	logger := newLogger(*logLevel)
	cfg, warnings, err := config.LoadWithSystemProperties(fs.Arg(0), sysProps, logger)
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
	if gcpace.SetMemoryLimit(cfg.MemoryLimit) {
		logger.Info("memory limit set", "memory.limit", cfg.MemoryLimit)
	}
	if *forceRecover && (cfg.Store == "kv" || cfg.Durability != config.DurabilityDiskless || !cfg.Distributed()) {
		fmt.Fprintln(os.Stderr, "corral: -force-recover applies only to a member of a diskless ensemble (durability=diskless, server.N lines)")
		return 2
	}
	if cfg.Store == "kv" {
		return runKVServer(ctx, cfg, logger)
	}
	initial, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "corral: %v\n", err)
		return 1
	}
	if *forceRecover {
		if err := reportPeerZxids(ctx, os.Stderr, cfg); err != nil {
			fmt.Fprintf(os.Stderr, "corral: -force-recover refused: %v\n", err)
			return 1
		}
	}
	if cfg.ReconfigEnabled && cfg.DynamicConfigFile == "" && cfg.Distributed() {
		// The servers are still in zoo.cfg, which the first committed
		// reconfiguration rewrites: keep a copy, as ZooKeeper does.
		if err := config.BackupStaticConfig(fs.Arg(0)); err != nil {
			fmt.Fprintf(os.Stderr, "corral: backing up %s: %v\n", fs.Arg(0), err)
			return 1
		}
	}
	tweak := func(o *server.Options) {
		if o.Ensemble != nil {
			o.Ensemble.ForceRecover = *forceRecover
			if cfg.ReconfigEnabled {
				// A committed reconfiguration rewrites zoo.cfg to point at
				// its zoo.cfg.dynamic.<version>, as ZooKeeper does.
				if abs, err := filepath.Abs(fs.Arg(0)); err == nil {
					o.Ensemble.ConfigFile = abs
				}
			}
		}
	}
	if err := serve(ctx, cfg, string(initial), logger, nil, tweak); err != nil {
		logger.Error("server stopped", "err", err)
		return 1
	}
	return 0
}

// serve runs one server until ctx ends. initial is the zoo.cfg text it
// started from (the AdminServer's initial_configuration; "" writes cfg's).
// ready, if not nil, receives the client address and the API address
// ("" if none) once the server listens.
// tweak, if not nil, adjusts the options made from cfg (command-line
// flags such as -force-recover).
func serve(ctx context.Context, cfg *config.Config, initial string, logger *slog.Logger, ready func(addr, api string), tweak func(*server.Options)) error {
	opts, err := serverOptions(cfg, logger)
	if err != nil {
		return err
	}
	if tweak != nil {
		tweak(&opts)
	}
	srv, err := server.New(opts)
	if err != nil {
		return err
	}
	if err := srv.Listen(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // stop the HTTP servers before waiting for them
	if initial == "" {
		var b strings.Builder
		if err := cfg.WriteZooCfg(&b); err == nil {
			initial = b.String()
		}
	}
	if err := startHTTP(ctx, &wg, cfg, initial, srv, logger); err != nil {
		return err
	}
	api, err := startLogAPI(ctx, &wg, cfg, srv, logger)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(srv.Addr().String(), api)
	}
	return srv.Serve(ctx)
}

// startHTTP starts the Prometheus endpoint (metricsProvider.*) and the
// AdminServer (admin.*) of srv; both stop with ctx. A metrics port that
// cannot be bound stops start-up, as ZooKeeper's provider does; an
// AdminServer port only logs a warning, as ZooKeeper's does.
func startHTTP(ctx context.Context, wg *sync.WaitGroup, cfg *config.Config, initial string, srv *server.Server, logger *slog.Logger) error {
	run := func(h *admin.HTTPServer) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.Serve(ctx); err != nil {
				logger.Error("HTTP server stopped", "err", err)
			}
		}()
	}
	if cfg.Metrics.Enabled() {
		h := admin.NewHTTPServer("metrics", time.Duration(cfg.Admin.IdleTimeoutMs)*time.Millisecond, logger)
		h.Handle(admin.MetricsPath, admin.MetricsHandler(admin.NewMetricsRegistry(srv, cfg.Metrics.ExportJvmInfo)))
		if err := h.Listen(cfg.Metrics.ListenAddr()); err != nil {
			return fmt.Errorf("metricsProvider: %w", err)
		}
		run(h)
	}
	if cfg.Admin.EnableServer {
		h := admin.NewHTTPServer("AdminServer", time.Duration(cfg.Admin.IdleTimeoutMs)*time.Millisecond, logger)
		a := admin.NewAdminServer(srv, admin.AdminOptions{Config: cfg, InitialConfig: initial, SnapshotDir: cfg.DataDir, Logger: logger})
		a.Mount(h)
		if cfg.Admin.ConsoleEnabled {
			servers, ids, admins := consoleMembers(cfg)
			c, err := console.New(console.Config{
				Servers:    servers,
				IDs:        ids,
				AdminAddrs: admins,
				Writable:   cfg.Admin.ConsoleWritable,
				Durability: string(cfg.Durability),
				Logger:     logger,

				KVEndpoints:  cfg.Admin.ConsoleKVEndpoints,
				LogEndpoints: cfg.Admin.ConsoleLogEndpoints,
			})
			if err != nil {
				return fmt.Errorf("admin.console: %w", err)
			}
			context.AfterFunc(ctx, func() { c.Close() })
			h.Handle("/console/", http.StripPrefix("/console", c))
			h.Handle("/console", http.RedirectHandler("/console/", http.StatusFound))
		}
		if err := h.Listen(cfg.Admin.ListenAddr()); err != nil {
			logger.Warn("AdminServer not started; serving clients without it", "err", err)
		} else {
			run(h)
		}
	}
	return nil
}

// consoleMembers are the ensemble's members for the web console, in
// member order: client addresses, server ids and AdminServer addresses
// (this server's alone when standalone). A server line without a client
// part is reached at its host and this server's clientPort; a member
// without any client port is left out. Another member's AdminServer is
// admin.console.adminAddresses's entry for it, else its host at this
// server's admin.serverPort when it runs on another host, else unknown
// ("").
func consoleMembers(cfg *config.Config) (servers []string, ids []int64, admins []string) {
	self := consoleAdminAddr(cfg)
	if len(cfg.Servers) == 0 {
		return []string{cfg.ClientListenAddr()}, []int64{max(cfg.MyID, 1)}, []string{self}
	}
	selfHost := ""
	for _, m := range cfg.Servers {
		if m.ID == cfg.MyID {
			selfHost = m.Host
		}
	}
	for _, m := range cfg.Servers {
		var client, admin string
		if m.ID == cfg.MyID {
			client, admin = cfg.ClientListenAddr(), self
		} else {
			host, port := m.Host, m.ClientPort
			if m.ClientAddr != "" && m.ClientAddr != "0.0.0.0" && m.ClientAddr != "::" {
				host = m.ClientAddr
			}
			if port == 0 {
				port = cfg.ClientPort
			}
			if port == 0 {
				continue
			}
			client = net.JoinHostPort(host, strconv.Itoa(port))
			switch a, ok := cfg.Admin.ConsoleAdminAddrs[m.ID]; {
			case ok:
				admin = a
			case m.Host != selfHost:
				admin = net.JoinHostPort(m.Host, strconv.Itoa(cfg.Admin.ServerPort))
			}
		}
		servers, ids, admins = append(servers, client), append(ids, m.ID), append(admins, admin)
	}
	return servers, ids, admins
}

// consoleAdminAddr is where the console reaches this server's own
// AdminServer: its listen address, loopback for a wildcard one.
func consoleAdminAddr(cfg *config.Config) string {
	switch cfg.Admin.ServerAddress {
	case "0.0.0.0", "::":
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Admin.ServerPort))
	}
	return cfg.Admin.ListenAddr()
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
		SnapBytes:              cfg.SnapSizeLimitKB << 10,
		SnapRetainCount:        cfg.AutopurgeSnapRetainCount,
		PurgeInterval:          time.Duration(cfg.AutopurgePurgeInterval) * time.Hour,
		FourLetterWords:        map[string]bool{},
		ExtendedTypesEnabled:   cfg.ExtendedTypesEnabled,
		EnforceQuota:           cfg.EnforceQuota,
		SuperDigest:            cfg.SuperDigest,
		ContainerCheckInterval: time.Duration(cfg.ContainerCheckIntervalMs) * time.Millisecond,
		ContainerMaxNeverUsed:  time.Duration(cfg.ContainerMaxNeverUsedIntervalMs) * time.Millisecond,
		RlogRoot:               cfg.RlogRoot,
		RlogCoupled:            cfg.RlogGroupCommit == config.RlogGroupCommitCoupled,
		RlogSegmentSize:        cfg.RlogSegmentSize,
		Logger:                 logger,
	}
	if err := tlsOptions(cfg, &o); err != nil {
		return o, err
	}
	if cfg.Distributed() {
		ens, err := ensembleOptions(cfg)
		if err != nil {
			return o, err
		}
		if cfg.SSLQuorum {
			l, err := zktls.Load(cfg.QuorumSSL)
			if err != nil {
				return o, fmt.Errorf("ssl.quorum: %w", err)
			}
			sc, err := l.ServerConfig(cfg.QuorumSSL.HostnameVerification)
			if err != nil {
				return o, fmt.Errorf("ssl.quorum: %w", err)
			}
			ens.QuorumTLS = &transport.TLS{Server: sc, Client: l.ClientConfig}
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
	o.AuditLog = auditLogPath(cfg)
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	port := strconv.Itoa(cfg.ClientPort)
	o.ConfigLines = []flw.KV{
		{Key: "clientPort", Value: port},
		{Key: "secureClientPort", Value: secureClientPort(cfg)},
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

// tlsOptions loads the ssl.* stores for the TLS client ports.
func tlsOptions(cfg *config.Config, o *server.Options) error {
	o.SecureListenAddr = cfg.SecureClientListenAddr()
	o.PortUnification = cfg.PortUnification
	o.X509SuperUser = cfg.X509SuperUser
	o.HandshakeDetectionTimeout = time.Duration(cfg.SSL.HandshakeDetectionTimeoutMs) * time.Millisecond
	if o.SecureListenAddr == "" && !o.PortUnification {
		return nil
	}
	l, err := zktls.Load(cfg.SSL)
	if err != nil {
		return fmt.Errorf("ssl: %w", err)
	}
	// ClientX509Util never verifies a client's host name.
	if o.TLS, err = l.ServerConfig(false); err != nil {
		return fmt.Errorf("ssl: %w", err)
	}
	return nil
}

func secureClientPort(cfg *config.Config) string {
	if cfg.SecureClientPort == 0 {
		return "-1"
	}
	return strconv.Itoa(cfg.SecureClientPort)
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

		ReconfigEnabled:   cfg.ReconfigEnabled,
		Servers:           slices.Clone(cfg.Servers),
		ConfigVersion:     cfg.ConfigVersion,
		StandaloneEnabled: cfg.StandaloneEnabled,
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
	if cfg.NextConfigVersion > cfg.ConfigVersion {
		// A reconfig proposal accepted before a stop (zoo.cfg.dynamic.next):
		// its servers are reachable, as ZooKeeper connects to the members
		// of its last seen configuration.
		ens.NextConfigVersion = cfg.NextConfigVersion
		for _, sv := range cfg.NextServers {
			if _, ok := ens.Peers[uint64(sv.ID)]; !ok && sv.ID != cfg.MyID {
				ens.Peers[uint64(sv.ID)] = transport.Peer{QuorumAddr: sv.QuorumAddr(), ElectionAddr: sv.ElectionAddr()}
			}
		}
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
