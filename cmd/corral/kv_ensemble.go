package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/apisrv"
	"github.com/corral-db/corral/kv"
)

// runKVEnsemble starts one replica group on loopback in the foreground
// and prints "kv endpoints: HOST:PORT,..." once it serves.
func runKVEnsemble(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kv ensemble", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 3, "members of the replica group")
	dir := fs.String("dir", "", "data directory (default: a new temporary directory)")
	logLevel := fs.String("log-level", "warn", "debug|info|warn|error")
	durability := fs.String("durability", "sync", "sync|async|diskless (replicated groups)")
	tick := fs.Duration("tick", 500*time.Millisecond, "tickTime of a replicated group")
	tf := registerKVTuning(fs)
	metricsPort := fs.Int("metrics-port", 0, "serve member i's Prometheus metrics on 127.0.0.1:PORT+i-1 (0: none; replicated groups)")
	if err := fs.Parse(args); err != nil {
		return kvExitError
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: corral kv ensemble [-n 3] [-dir D]")
		return kvExitError
	}
	base := *dir
	if base == "" {
		d, err := os.MkdirTemp("", "corral-kv-")
		if err != nil {
			return kvFail(stderr, "ensemble", err)
		}
		base = d
	}
	logger := newLogger(*logLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *n == 1 && *metricsPort != 0 {
		fmt.Fprintln(stderr, "corral kv ensemble: -metrics-port needs a replicated group (-n 2 or more)")
		return kvExitError
	}
	if *n != 1 {
		mode, err := parseDurability(*durability)
		if err != nil {
			fmt.Fprintln(stderr, "corral kv ensemble:", err)
			return kvExitError
		}
		tune, err := tf.tuning()
		if err == nil && (*metricsPort < 0 || *metricsPort+*n-1 > 65535) {
			err = fmt.Errorf("-metrics-port %d: want 0, or a port with room for %d members", *metricsPort, *n)
		}
		if err != nil {
			fmt.Fprintln(stderr, "corral kv ensemble:", err)
			return kvExitError
		}
		tune.metricsPort = *metricsPort
		return runKVGroup(ctx, *n, base, mode, *tick, tune, logger, stdout, stderr)
	}
	// One member: no replication; the store keeps pebble's WAL.
	store, err := kv.Open(kv.Options{Dir: filepath.Join(base, "member1", "kv"), PebbleWAL: true, Logger: logger})
	if err != nil {
		return kvFail(stderr, "ensemble", err)
	}
	defer store.Close()
	srv, err := apisrv.Listen("127.0.0.1:0", apisrv.Options{})
	if err != nil {
		return kvFail(stderr, "ensemble", err)
	}
	kvpb.RegisterKVServer(srv.Registrar(), kv.NewService(store, kv.NewLocalGroup(store, srv.Addr().String())))
	fmt.Fprintf(stdout, "corral kv: one member, no replication, data in %s\nkv endpoints: %s\n", filepath.Clean(base), srv.Addr())
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	if err := srv.Serve(ctx); err != nil {
		return kvFail(stderr, "ensemble", err)
	}
	return kvExitOK
}
