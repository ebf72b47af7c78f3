// Command corral-bench measures corral and Apache ZooKeeper side by side; see
// package bench. It is a binary of its own so that the server binary links
// none of the benchmark's statistics and plotting. `corral bench ARGS` runs it.
//
// The corral server under test is, in order: --corral-bin; the binary named
// by CORRAL_BENCH_SERVER_BIN (set by `corral bench`, which passes itself);
// a `corral` beside this binary; else one built from ./cmd/corral.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/corral-db/corral/bench/command"
)

// serverBinEnv names the corral binary `corral bench` delegates from.
const serverBinEnv = "CORRAL_BENCH_SERVER_BIN"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := command.Command(ctx, os.Args[1:], command.CommandEnv{Stdout: os.Stdout, Stderr: os.Stderr, CorralBinary: corralBinary(), Self: self()})
	stop()
	os.Exit(code)
}

// corralBinary is the default corral server under test, or "" to build one.
func corralBinary() string {
	if p := os.Getenv(serverBinEnv); p != "" {
		return p
	}
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	sibling := filepath.Join(filepath.Dir(self), "corral")
	if fi, err := os.Stat(sibling); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return sibling
	}
	return ""
}

// self is this binary's path, for the floor probe's echo process; "" if
// unknown.
func self() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}
