package cm

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/corral-db/corral/kv/ring"
)

// Announcer records a group member's leadership in the CM: the member's
// replication driver calls Leading with its zab epoch whenever it becomes
// leader, and Run (one goroutine, ending with its context) calls
// RecordLeader until it succeeds, is refused as stale, or a newer epoch
// supersedes it. A failed write (connection loss) is retried after
// retryDelay.
type Announcer struct {
	s    *Store
	g    ring.GroupID
	self Member
	kick chan struct{} // cap 1: want changed

	mu sync.Mutex
	// Guarded by mu.
	want     uint64 // the newest epoch this member leads in; 0 for none
	recorded uint64 // the newest epoch recorded (or refused) for this member
	err      error  // the outcome for recorded: nil, or ErrStaleEpoch
}

// NewAnnouncer returns an Announcer for member self of group g.
func NewAnnouncer(s *Store, g ring.GroupID, self Member) *Announcer {
	return &Announcer{s: s, g: g, self: self, kick: make(chan struct{}, 1)}
}

// Leading reports that this member leads g in epoch (from a zab
// SoftState change). Older epochs than one already reported are ignored.
// It never blocks.
func (a *Announcer) Leading(epoch uint64) {
	a.mu.Lock()
	if epoch > a.want {
		a.want = epoch
	}
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// Recorded is the newest epoch the Announcer has finished with, and its
// outcome: nil if recorded, ErrStaleEpoch if a newer leader was already
// recorded (this member has been deposed).
func (a *Announcer) Recorded() (uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.recorded, a.err
}

// Run records leadership as Leading reports it, until ctx ends.
func (a *Announcer) Run(ctx context.Context) {
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.kick:
		case <-retry:
		}
		retry = nil
		a.mu.Lock()
		epoch, done := a.want, a.recorded
		a.mu.Unlock()
		if epoch == 0 || epoch <= done {
			continue
		}
		err := a.s.RecordLeader(ctx, a.g, Leader{Epoch: epoch, ID: a.self.ID, Addr: a.self.Addr})
		if err != nil && !errors.Is(err, ErrStaleEpoch) {
			if ctx.Err() == nil {
				retry = time.After(retryDelay)
			}
			continue
		}
		a.mu.Lock()
		if epoch > a.recorded {
			a.recorded, a.err = epoch, err
		}
		a.mu.Unlock()
	}
}
