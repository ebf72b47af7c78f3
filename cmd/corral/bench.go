package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/corral-db/corral/bench"
)

// runBench runs `corral bench ...`; see package bench. This binary is the
// default corral server under test, so compare measures exactly what runs.
func runBench(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	self, err := os.Executable()
	if err != nil {
		self = ""
	}
	return bench.Command(ctx, args, bench.CommandEnv{Stdout: os.Stdout, Stderr: os.Stderr, SelfBinary: self})
}
