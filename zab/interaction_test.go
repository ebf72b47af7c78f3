package zab_test

import (
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/corral-db/corral/zab/zabtest"
)

// TestInteraction runs the scripts in testdata: each is a protocol trace
// (see package zabtest). After a deliberate change of protocol, inspect
// the diff and accept it with go test ./zab -run TestInteraction -rewrite.
func TestInteraction(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		env := zabtest.NewInteractionEnv()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return env.Handle(t, d)
		})
	})
}
