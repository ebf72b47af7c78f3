package replica

import (
	"time"

	"github.com/corral-db/corral/zab"
)

// whileSyncing runs f, a long step of a sync with peer that moves no
// bytes over the link (the leader building a SNAP image, the learner
// installing one), and meanwhile tells peer every
// Config.SyncProgressEvery that the sync is moving (zab.MsgSyncProgress;
// zab/progress.go): either can take longer than InitLimit for a large
// state, and the peer would otherwise end the join. With
// SyncProgressEvery 0 (the simulator, whose steps take no time) it only
// runs f. The goroutine it starts ends before it returns.
func (d *Driver) whileSyncing(peer uint64, f func() error) error {
	every := d.cfg.SyncProgressEvery
	if every <= 0 || peer == 0 || peer == d.cfg.ID {
		return f()
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				d.env.Send([]zab.Message{{Type: zab.MsgSyncProgress, From: d.cfg.ID, To: peer}})
			}
		}
	}()
	err := f()
	close(stop)
	<-done
	return err
}
