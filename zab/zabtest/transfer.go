package zabtest

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/corral-db/corral/zab"
)

func setTransferTicks(c *zab.Config, n int) { c.TransferTicks = n }

// handleTransfer: transfer-leadership from=ID to=ID.
func (env *InteractionEnv) handleTransfer(t *testing.T, d *datadriven.TestData) error {
	var from, to uint64
	d.ScanArgs(t, "from", &from)
	d.ScanArgs(t, "to", &to)
	n, err := env.running(from)
	if err != nil {
		return err
	}
	if err := n.Node.TransferLeadership(to); err != nil {
		return err
	}
	if tr := n.Node.Status().Transferee; tr != 0 {
		fmt.Fprintf(env.Output, "%d transferring to %d\n", from, tr)
	}
	return nil
}
