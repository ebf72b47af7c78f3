package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/gcpace"
)

// runEnsemble starts a local ensemble of n servers on loopback, all in
// this process, prints its connect string and runs until interrupted.
// Each server has its own data directory and zoo.cfg under -dir, so any
// one of them can also be started alone with `corral server`.
func runEnsemble(args []string) int {
	fs := flag.NewFlagSet("ensemble", flag.ContinueOnError)
	n := fs.Int("n", 3, "number of servers (1 runs a standalone server)")
	dir := fs.String("dir", "", "data directory (default: a new temporary directory)")
	port := fs.Int("port", 2181, "client port of the first server; the n servers use 3n consecutive ports from it")
	logLevel := fs.String("log-level", "info", "debug|info|warn|error")
	rlogRoot := fs.String("rlog-root", "/logs", "make every znode under this path a replicated log (zoo.cfg rlog.root; "+
		"n > 1 only) and serve the log API on n more ports after the 3n (zoo.cfg apiPort); \"\" for neither")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rlog-root" })
	if *n == 1 && !explicit {
		*rlogRoot = "" // a standalone server has no logs
	}
	base := *dir
	if base == "" {
		d, err := os.MkdirTemp("", "corral-ensemble-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "corral:", err)
			return 1
		}
		base = d
	}
	cfgs := config.LocalEnsemble(*n, base, *port)
	if cfgs != nil && *rlogRoot != "" && *port+4**n-1 > 65535 {
		cfgs = nil
	}
	if cfgs == nil {
		fmt.Fprintf(os.Stderr, "corral: -n %d with -port %d does not fit (1 <= n <= %d, 3n ports below 65536)\n", *n, *port, config.MaxServerID)
		return 2
	}
	for _, cfg := range cfgs {
		cfg.RlogRoot = *rlogRoot
		if *rlogRoot != "" {
			// The log API of member i on the port after the 3n the
			// ensemble's client, quorum and election ports take.
			cfg.APIPort = *port + 3**n + int(cfg.MyID) - 1
			if cfg.MyID == 0 {
				cfg.APIPort = *port + 3
			}
		}
		// Each member gets its own AdminServer (and web console) port,
		// 8080, 8081, ... in member order.
		if cfg.Admin.ServerPort == config.DefaultAdminServerPort && cfg.MyID > 0 {
			cfg.Admin.ServerPort += int(cfg.MyID) - 1
		}
		if err := prepareDataDir(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "corral:", err)
			return 1
		}
	}
	// Every member's console knows every member's AdminServer, so it can
	// ask whichever leads for a leadership transfer.
	admins := make(map[int64]string, len(cfgs))
	for _, cfg := range cfgs {
		admins[cfg.MyID] = consoleAdminAddr(cfg)
	}
	var apiAddrs []string
	for _, cfg := range cfgs {
		if cfg.APIPort != 0 {
			apiAddrs = append(apiAddrs, cfg.APIListenAddr())
		}
	}
	for _, cfg := range cfgs {
		if cfg.Admin.ConsoleAdminAddrs == nil {
			cfg.Admin.ConsoleAdminAddrs = admins
		}
		// The console's Logs pages use the ensemble's own log API.
		if cfg.Admin.ConsoleLogEndpoints == nil {
			cfg.Admin.ConsoleLogEndpoints = apiAddrs
		}
	}
	logger := newLogger(*logLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go gcpace.Run(ctx, gcpace.DefaultHeadroom(), logger)
	// The members share this process: its limit is the sum of theirs,
	// if every member has one.
	var limit int64
	for _, cfg := range cfgs {
		if cfg.MemoryLimit <= 0 {
			limit = 0
			break
		}
		limit += cfg.MemoryLimit
	}
	if gcpace.SetMemoryLimit(limit) {
		logger.Info("memory limit set", "memory.limit", limit)
	}

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		addrs = make([]string, len(cfgs))
		apis  = make([]string, len(cfgs))
		ready = make(chan struct{}, len(cfgs))
		errs  = make([]error, len(cfgs))
	)
	for i, cfg := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := logger
			if len(cfgs) > 1 {
				l = logger.With("server", cfg.MyID)
			}
			err := serve(ctx, cfg, "", l, func(addr, api string) {
				mu.Lock()
				addrs[i], apis[i] = addr, api
				mu.Unlock()
				ready <- struct{}{}
			}, nil)
			if err != nil {
				errs[i] = fmt.Errorf("server %d: %w", cfg.MyID, err)
				cancel() // one server failing to start stops them all
			}
		}()
	}
	started := 0
	for started < len(cfgs) && ctx.Err() == nil {
		select {
		case <-ready:
			started++
		case <-ctx.Done():
		}
	}
	if started == len(cfgs) {
		mode := fmt.Sprintf("ensemble of %d", len(cfgs))
		if len(cfgs) == 1 {
			mode = "standalone server"
		}
		fmt.Printf("corral %s on loopback, data and zoo.cfg files in %s\nconnect string: %s\n",
			mode, filepath.Clean(base), strings.Join(addrs, ","))
		if *rlogRoot != "" {
			fmt.Printf("api endpoints: %s\n", strings.Join(apis, ","))
			fmt.Printf("logs: every znode under %s is a log; a sequential create under one appends; "+
				"corral log ... -endpoints <api endpoints> NAME\n", *rlogRoot)
		}
		if a := cfgs[0].Admin; a.EnableServer && a.ConsoleEnabled {
			fmt.Printf("web console: http://%s/console/\n", a.ListenAddr())
		}
		fmt.Println("(Ctrl-C to stop)")
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		logger.Error("ensemble stopped", "err", err)
		return 1
	}
	return 0
}

// prepareDataDir creates a server's data directory with its myid and a
// zoo.cfg that starts the same server with `corral server` (or ZooKeeper).
func prepareDataDir(cfg *config.Config) error {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return err
	}
	if len(cfg.Servers) > 0 {
		if err := cfg.WriteMyID(); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(cfg.DataDir, "zoo.cfg"))
	if err != nil {
		return err
	}
	if err := cfg.WriteZooCfg(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
