// Command benchmain runs the bench command without the rest of corral, for
// trying the harness while cmd/corral is being assembled:
//
//	go run ./bench/internal/benchmain compare --targets zookeeper
//
// Without --corral-bin, compare builds ./cmd/corral for the corral target.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/corral-db/corral/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := bench.Command(ctx, os.Args[1:], bench.CommandEnv{Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
