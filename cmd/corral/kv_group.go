package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/corral-db/corral/kv/kvserver"
	"github.com/corral-db/corral/replica"
)

// runKVGroup runs a replicated group of n members in this process, each
// with its own directory, zab log and pebble database under base.
func runKVGroup(ctx context.Context, n int, base string, mode replica.Mode, tick time.Duration, logger *slog.Logger, stdout, stderr io.Writer) int {
	g, err := kvserver.NewLocalGroup(n, base, mode, tick, logger)
	if err != nil {
		return kvFail(stderr, "ensemble", err)
	}
	err = g.Run(ctx, func() {
		fmt.Fprintf(stdout, "corral kv: replica group of %d (%s), data in %s\nkv endpoints: %s\n",
			n, mode, filepath.Clean(base), strings.Join(g.Endpoints(), ","))
		if f, ok := stdout.(*os.File); ok {
			f.Sync()
		}
	})
	if err != nil {
		return kvFail(stderr, "ensemble", err)
	}
	return kvExitOK
}
