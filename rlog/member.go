package rlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/replica/snapstream"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/zab"
)

// Proposer runs requests against a State: Local alone, Member in a
// replica group.
type Proposer interface {
	// Do prepares, replicates and applies one request. A nil error with
	// Result.Err set is the operation's own failure (an *Error); an error
	// returned means the outcome is unknown or this member cannot serve
	// (not the leader: ErrNotLeader).
	Do(ctx context.Context, req Mutation) (Result, error)
	State() *State
}

// ErrNotLeader is returned by Member.Do on a member that is not the
// leader: the request must go to the leader.
var ErrNotLeader = errors.New("rlog: not the leader")

// ErrUnavailable is returned by a server that cannot serve a request now
// and did not execute it (rlog/zklogs: no session with its member): the
// request may go to another server.
var ErrUnavailable = errors.New("rlog: this server cannot serve now")

// ErrSessionLost is returned by a server whose way to the replicated
// state failed while a write was out (rlog/zklogs: its session with its
// member lost its connection or expired): the write may or may not have
// been applied, and this server cannot tell until it has a session again.
// The caller may go to another server, knowing that.
var ErrSessionLost = errors.New("rlog: this server lost its session while the write was out; it may or may not have been applied")

// Member is a State replicated by a replica.Driver: requests go through
// Prepare on the leader and are proposed; every member applies them.
type Member struct {
	s *State
	d *replica.Driver
	// mu orders Prepare and the proposal, so that the leader's view
	// assigns offsets in zxid order.
	mu sync.Mutex
	// store is the log store OpenMember opened (nil otherwise).
	store *Store
	// stopStreams stops the SNAP streams OpenMember's members run
	// (memberstream.go) and waits for them.
	stopStreams func()
}

// NewMember wires s to d. Call it before d runs; cfg is the Config the
// driver is built from: NewMember sets its OnSoftState to reset the
// leader's view on every change of role (chaining any already set).
func NewMember(s *State, cfg *replica.Config) *Member {
	prev := cfg.OnSoftState
	cfg.OnSoftState = func(p, c zab.SoftState) {
		if p.State != c.State || p.Phase != c.Phase || p.Leader != c.Leader || p.Epoch != c.Epoch {
			s.ResetPrepare()
		}
		if prev != nil {
			prev(p, c)
		}
	}
	return &Member{s: s}
}

// Attach sets the driver, once built.
func (mb *Member) Attach(d *replica.Driver) { mb.d = d }

// State returns the member's State.
func (mb *Member) State() *State { return mb.s }

// Do prepares req against the leader's view, proposes it and waits until
// this member has applied it.
func (mb *Member) Do(ctx context.Context, req Mutation) (Result, error) {
	mb.mu.Lock()
	if !mb.d.SoftState().Established() {
		mb.mu.Unlock()
		return Result{}, ErrNotLeader
	}
	prop, dup, err := mb.s.Prepare(req)
	if err != nil {
		mb.mu.Unlock()
		return Result{Offset: -1, Err: err}, nil
	}
	if dup != nil {
		mb.mu.Unlock()
		return *dup, nil
	}
	data := Encode(nil, &prop)
	var ch <-chan Result
	_, err = mb.d.ProposeWith(func(z zab.Zxid) ([]byte, error) {
		ch = mb.s.wait(z)
		return data, nil
	})
	if err != nil {
		mb.s.ResetPrepare()
		mb.mu.Unlock()
		if errors.Is(err, zab.ErrNotLeader) {
			return Result{}, ErrNotLeader
		}
		return Result{}, fmt.Errorf("rlog: proposing: %w", err)
	}
	mb.mu.Unlock()
	select {
	case res := <-ch:
		if _, ok := CodeOf(res.Err); !ok {
			return Result{}, res.Err
		}
		return res, nil
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// Driver returns the member's driver.
func (mb *Member) Driver() *replica.Driver { return mb.d }

// MemberConfig configures OpenMember.
type MemberConfig struct {
	ID     uint64
	Voters []uint64
	FS     vfs.FS
	Dir    string
	// Send hands messages to the transport (transport.Transport.Send).
	Send func([]zab.Message)
	// Backlog, if set, reports the bytes queued for a peer on the link
	// (transport.TCP.Backlog): a SNAP's streamed image paces itself by it.
	Backlog  func(uint64) int64
	Schedule replica.Schedule
	State    Options // FS and Dir are set from above
	WAL      wal.Options
	Logger   *slog.Logger
	// Zab timing in ticks, as replica.Config (0: zab's defaults).
	ElectionTick, HeartbeatTick, InitLimit, SyncLimit int
	// SyncProgressEvery is replica.Config.SyncProgressEvery.
	SyncProgressEvery time.Duration
}

// OpenMember opens a member's disk (State, WAL, epochs) in cfg.Dir and
// builds its sync-mode driver; Run runs it.
func OpenMember(cfg MemberConfig) (*Member, error) {
	so := cfg.State
	so.FS, so.Dir, so.Logger = cfg.FS, cfg.Dir, cfg.Logger
	s, err := Open(so)
	if err != nil {
		return nil, err
	}
	st, err := OpenStore(s, cfg.FS, cfg.Dir, cfg.WAL)
	if err != nil {
		s.Close()
		return nil, err
	}
	hsStore, hs, err := OpenHardState(cfg.FS, cfg.Dir)
	if err == nil {
		var ents []zab.Entry
		if ents, err = st.Load(); err == nil {
			sender, in, stop := streamSnapshots(cfg, s)
			rc := replica.Config{ID: cfg.ID, Voters: cfg.Voters, Mode: replica.Sync, SM: streamedState{State: s, in: in},
				HardState: hs, Log: ents, Schedule: cfg.Schedule, Logger: cfg.Logger,
				ElectionTick: cfg.ElectionTick, HeartbeatTick: cfg.HeartbeatTick,
				InitLimit: cfg.InitLimit, SyncLimit: cfg.SyncLimit,
				SyncProgressEvery: cfg.SyncProgressEvery,
				Intercept:         in.Intercept,
				Env: replica.Env{Log: st, HardState: hsStore,
					Send:          func(msgs []zab.Message) { cfg.Send(sender.Route(msgs)) },
					SnapshotImage: func(zab.Zxid) ([]byte, error) { return snapstream.Header(nil), nil }}}
			mb := NewMember(s, &rc)
			mb.stopStreams = stop
			var d *replica.Driver
			if d, err = replica.New(rc); err == nil {
				mb.Attach(d)
				mb.store = st
				return mb, nil
			}
		}
	}
	st.Close()
	s.Close()
	return nil, err
}

// Run runs the member's driver until ctx ends.
func (mb *Member) Run(ctx context.Context, recv <-chan zab.Message, tick time.Duration) error {
	return mb.d.Run(ctx, recv, tick)
}

// Close closes what OpenMember opened; call it after Run returned.
func (mb *Member) Close() error {
	if mb.stopStreams != nil {
		mb.stopStreams()
	}
	var err error
	if mb.store != nil {
		err = mb.store.Close()
	}
	return errors.Join(err, mb.s.Close())
}
