package kvserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/replica/snapstream"
	"github.com/corral-db/corral/zab"
)

// notifier wakes waiters whenever something they wait on may have
// changed (an Apply, an installed snapshot, a change of role).
type notifier struct {
	mu sync.Mutex
	ch chan struct{} // guarded by mu; closed and replaced by broadcast
}

func newNotifier() *notifier { return &notifier{ch: make(chan struct{})} }

func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

func (n *notifier) broadcast() {
	n.mu.Lock()
	close(n.ch)
	n.ch = make(chan struct{})
	n.mu.Unlock()
}

// notifyingSM is the store as the driver sees it: every Apply wakes the
// requests waiting for the entries it applied, an InstallSnapshot all of
// them.
type notifyingSM struct {
	*kv.Store
	w *appliedWaiters
	// in gives a streamed SNAP's image (snapstream.go).
	in *snapstream.Learner
}

func (s notifyingSM) Apply(ents []zab.Entry) error {
	err := s.Store.Apply(ents)
	s.w.advance(s.Store.Applied())
	return err
}

func (s notifyingSM) InstallSnapshot(ctx context.Context, r io.Reader) (zab.Zxid, error) {
	img, done, err := s.in.Image(r)
	if err != nil {
		return 0, err
	}
	defer done()
	z, err := s.Store.InstallSnapshot(ctx, img)
	s.w.wakeAll()
	return z, err
}

// Group is a kv.Group on a replica.Driver.
type Group struct {
	ctx      context.Context // the member's: ends confirmation rounds
	d        *replica.Driver
	store    *kv.Store
	applied  *appliedWaiters
	apiAddrs map[uint64]string
	// confirmed is broadcast when the driver's Confirmed advances
	// (replica.Config.OnConfirmed) and when the role changes: a round's
	// waiter wakes on it.
	confirmed *notifier
	// roundTimeout bounds one confirmation round (syncLimit: a leader
	// that hears no quorum that long steps down anyway).
	roundTimeout time.Duration

	// rounds counts the confirmation rounds run, roundReads the reads
	// they confirmed (the metrics' reads per round).
	rounds, roundReads atomic.Int64

	cmu        sync.Mutex
	waiting    []chan error // guarded by cmu: callers for the next round
	confirming bool         // guarded by cmu: confirmLoop runs
}

func (g *Group) leaderInfo(ss zab.SoftState) kv.LeaderInfo {
	return kv.LeaderInfo{ID: ss.Leader, Addr: g.apiAddrs[ss.Leader], Epoch: ss.Epoch, Known: ss.Leader != 0}
}

// Leader reports whether this member is the established leader.
func (g *Group) Leader() (bool, kv.LeaderInfo) {
	ss := g.d.SoftState()
	return ss.Established(), g.leaderInfo(ss)
}

var errLost = fmt.Errorf("%w: leadership lost after the write was proposed", kv.ErrRetry)

// Propose proposes data and waits until this member has applied it. If
// leadership moves first, the entry may still commit under the next
// leader: the error says so (kv.ErrRetry).
func (g *Group) Propose(ctx context.Context, data []byte) error {
	z, err := g.d.Propose(data)
	if errors.Is(err, zab.ErrNotLeader) {
		_, l := g.Leader()
		return &kv.NotLeaderError{Leader: l}
	}
	if err != nil {
		return fmt.Errorf("%w: %v", kv.ErrRetry, err)
	}
	return g.awaitApplied(ctx, z)
}

// ProposeAll proposes datas in one driver call (kv.Group) and
// waits until this member has applied the last proposed: each entry's
// error is Propose's for it.
func (g *Group) ProposeAll(ctx context.Context, datas [][]byte) []error {
	errs := make([]error, len(datas))
	zs, err := g.d.ProposeAll(datas)
	if err != nil {
		// The entries after the proposed ones were not proposed.
		refused := fmt.Errorf("%w: %v", kv.ErrRetry, err)
		if errors.Is(err, zab.ErrNotLeader) {
			_, l := g.Leader()
			refused = &kv.NotLeaderError{Leader: l}
		}
		for i := len(zs); i < len(datas); i++ {
			errs[i] = refused
		}
	}
	if len(zs) == 0 {
		return errs
	}
	if err := g.awaitApplied(ctx, zs[len(zs)-1]); err != nil {
		for i := range zs {
			errs[i] = err
		}
	}
	return errs
}

// awaitApplied waits until this member has applied z, the zxid of an
// entry it proposed: errLost if leadership moves first.
func (g *Group) awaitApplied(ctx context.Context, z zab.Zxid) error {
	for {
		ch := g.applied.wait(z)
		if g.store.Applied() >= z {
			return nil
		}
		if ss := g.d.SoftState(); !ss.Established() || ss.Epoch != z.Epoch() {
			return errLost
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ConfirmLeadership returns once a quorum has confirmed that this member
// led at a moment after the call began and the member has applied
// everything committed at that moment (zab/confirm.go: ReadIndex).
// Concurrent calls share rounds: the callers that arrive while a round
// runs are confirmed together by the next one.
func (g *Group) ConfirmLeadership(ctx context.Context) error {
	ch := make(chan error, 1)
	g.cmu.Lock()
	g.waiting = append(g.waiting, ch)
	if !g.confirming {
		g.confirming = true
		go g.confirmLoop()
	}
	g.cmu.Unlock()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// confirmLoop runs rounds while callers wait, each round for the callers
// that arrived before it began. It ends when none waits; each round is
// bounded by roundTimeout and by the member's context.
func (g *Group) confirmLoop() {
	for {
		g.cmu.Lock()
		batch := g.waiting
		g.waiting = nil
		if len(batch) == 0 {
			g.confirming = false
			g.cmu.Unlock()
			return
		}
		g.cmu.Unlock()
		ctx, cancel := context.WithTimeout(g.ctx, g.roundTimeout)
		err := g.confirmRound(ctx)
		cancel()
		g.rounds.Add(1)
		g.roundReads.Add(int64(len(batch)))
		for _, ch := range batch {
			ch <- err // buffered: one send per caller
		}
	}
}

func (g *Group) confirmRound(ctx context.Context) error {
	commit := g.d.Status().Commit
	ss := g.d.SoftState()
	round, err := g.d.ConfirmLeadership()
	if err != nil {
		return &kv.NotLeaderError{Leader: g.leaderInfo(ss)}
	}
	for {
		ch := g.confirmed.wait()
		if g.d.Confirmed() >= round {
			break
		}
		if cur := g.d.SoftState(); !cur.Established() || cur.Epoch != ss.Epoch {
			return &kv.NotLeaderError{Leader: g.leaderInfo(cur)}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%w: leadership not confirmed in %v", kv.ErrRetry, g.roundTimeout)
		}
	}
	for {
		ch := g.applied.wait(commit)
		if g.store.Applied() >= commit {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%w: the confirmed commit point was not applied in %v", kv.ErrRetry, g.roundTimeout)
		}
	}
}

var _ kv.Group = (*Group)(nil)

type (
	zabSoftState = zab.SoftState
	zabZxid      = zab.Zxid
)
