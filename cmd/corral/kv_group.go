package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// runKVGroup runs a replicated group of n members in this process.
func runKVGroup(ctx context.Context, n int, base string, logger *slog.Logger, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "corral kv ensemble: -n %d: a replicated group is not wired yet; use -n 1\n", n)
	return kvExitError
}
