package rlog

import (
	"flag"
	"os"
	"testing"

	"github.com/corral-db/corral/tests/harness"
)

// env is resolved once per test binary (harness.NewEnv builds corral
// unless CORRAL_BIN names a binary).
var env *harness.Env

// long runs the longer fault schedules.
var long = flag.Bool("rlog.long", false, "run more appends and more kill rounds")

func TestMain(m *testing.M) {
	flag.Parse()
	var cleanup func()
	env, cleanup = harness.NewEnv()
	code := m.Run()
	cleanup()
	os.Exit(code)
}
