package cm

import "github.com/corral-db/corral/tests/harness"

// HarnessEnv gives the external test package (cm_test) the server harness
// TestMain set up.
func HarnessEnv() *harness.Env { return env }
