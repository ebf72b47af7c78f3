package ops

import (
	"flag"
	"os"
	"testing"

	"github.com/corral-db/corral/tests/harness"
)

// env is the corral target, resolved once per test binary.
var env *harness.Env

func TestMain(m *testing.M) {
	flag.Parse()
	var cleanup func()
	env, cleanup = harness.NewEnv()
	code := m.Run()
	cleanup()
	os.Exit(code)
}
