package zabtest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/corral-db/corral/zab"
)

func setTransferTicks(c *zab.Config, n int) {}

func (env *InteractionEnv) handleTransfer(t *testing.T, d *datadriven.TestData) error {
	t.Fatalf("%s: transfer-leadership is not implemented", d.Pos)
	return nil
}
