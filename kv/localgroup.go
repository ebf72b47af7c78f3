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
	return g.ProposeAll(ctx, [][]byte{data})[0]
}

// ProposeAll applies datas as the next entries, in one Apply.
func (g *LocalGroup) ProposeAll(ctx context.Context, datas [][]byte) []error {
	errs := make([]error, len(datas))
	err := ctx.Err()
	if err == nil {
		g.mu.Lock()
		ents := make([]zab.Entry, len(datas))
		for i, d := range datas {
			g.counter++
			ents[i] = zab.Entry{Zxid: zab.NewZxid(g.epoch, g.counter), Data: d}
		}
		err = g.s.Apply(ents)
		g.mu.Unlock()
	}
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// Leader reports this member as the leader.
func (g *LocalGroup) Leader() (bool, LeaderInfo) {
	return true, LeaderInfo{ID: 1, Addr: g.addr, Epoch: g.epoch, Known: true}
}

// ConfirmLeadership succeeds at once: a group of one always leads, and
// Propose applies before it returns.
func (g *LocalGroup) ConfirmLeadership(ctx context.Context) error { return ctx.Err() }

// FollowerGroup is the Group of a member that knows another member leads:
// every proposal and confirmation answers NotLeader naming Leader.
type FollowerGroup struct{ LeaderInfo LeaderInfo }

func (f FollowerGroup) notLeader() error { return &NotLeaderError{Leader: f.LeaderInfo} }

func (f FollowerGroup) Propose(context.Context, []byte) error { return f.notLeader() }

func (f FollowerGroup) ProposeAll(_ context.Context, datas [][]byte) []error {
	errs := make([]error, len(datas))
	for i := range errs {
		errs[i] = f.notLeader()
	}
	return errs
}

func (f FollowerGroup) Leader() (bool, LeaderInfo)              { return false, f.LeaderInfo }
func (f FollowerGroup) ConfirmLeadership(context.Context) error { return f.notLeader() }
