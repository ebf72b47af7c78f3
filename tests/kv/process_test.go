package kv_test

import (
	"strings"
	"testing"

	"github.com/corral-db/corral/tests/harness"
)

// startCorral starts `corral args...` (harness.StartCommand: stopped by
// its PID when the test ends, its output logged if the test failed) and
// returns at once.
func startCorral(t *testing.T, args ...string) *harness.Command {
	t.Helper()
	name := "corral " + strings.Join(args[:min(2, len(args))], " ")
	return harness.StartCommand(t, name, append([]string{corralBin}, args...)...)
}
