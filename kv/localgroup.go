package kv

import (
	"context"
	"sync"

	"github.com/corral-db/corral/zab"
)

// LocalGroup is a group of one member with no replication and no log: it
// stamps each proposal with the next zxid and applies it to the Store at
// once. It serves unit tests and `corral kv ensemble -n 1`. Its Store
// must be opened with Options.PebbleWAL, since no replication log
// precedes it: pebble's own synced WAL makes each applied write durable.
type LocalGroup struct {
	s     *Store
	addr  string
	epoch uint32

	mu      sync.Mutex // serializes Propose: one zxid order
	counter uint32     // guarded by mu
}

// NewLocalGroup makes a single-member group on s whose API listens at
// addr. Its zxids continue above whatever s has applied, in a new epoch.
func NewLocalGroup(s *Store, addr string) *LocalGroup {
	return &LocalGroup{s: s, addr: addr, epoch: s.Applied().Epoch() + 1}
}

// Propose applies data as the next entry.
func (g *LocalGroup) Propose(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.counter++
	return g.s.Apply([]zab.Entry{{Zxid: zab.NewZxid(g.epoch, g.counter), Data: data}})
}

// Leader reports this member as the leader.
func (g *LocalGroup) Leader() (bool, LeaderInfo) {
	return true, LeaderInfo{ID: 1, Addr: g.addr, Epoch: g.epoch, Known: true}
}

// ConfirmLeadership succeeds at once: a group of one always leads, and
// Propose applies before it returns.
func (g *LocalGroup) ConfirmLeadership(ctx context.Context) error { return ctx.Err() }
