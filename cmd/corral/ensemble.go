package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/corral-db/corral/config"
)

// runEnsemble starts a local ensemble on loopback and prints its connect
// string. Until replication lands it runs a single standalone server.
func runEnsemble(args []string) int {
	fs := flag.NewFlagSet("ensemble", flag.ContinueOnError)
	n := fs.Int("n", 1, "number of servers")
	dir := fs.String("dir", "", "data directory (default: a new temporary directory)")
	port := fs.Int("port", 2181, "client port of the first server")
	logLevel := fs.String("log-level", "info", "debug|info|warn|error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *n != 1 {
		fmt.Fprintln(os.Stderr, "corral: replicated ensembles are not implemented yet; use -n 1")
		return 1
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
	cfg := cfgs[0]
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "corral:", err)
		return 1
	}
	logger := newLogger(*logLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := serve(ctx, cfg, logger, func(addr string) {
		fmt.Printf("corral ensemble of %d on loopback, data in %s\nconnect string: %s\n(Ctrl-C to stop)\n", *n, filepath.Clean(base), addr)
	})
	if err != nil {
		logger.Error("ensemble stopped", "err", err)
		return 1
	}
	return 0
}
