package kvserver

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
)

// Mover runs range moves (docs/design/kv-sharding.md, "Range moves"):
// record the move in the CM, fence the range in the source RG, copy it
// into the target RG and seal it there, switch the ring, drop the range
// from the source, delete the record. Every step is idempotent and the
// record says where a move stands (cm.NextStep), so a move interrupted
// anywhere (the mover, or either RG's leader, crashing) is finished by
// running any Mover again: Resume, or the next Move.
type Mover struct {
	cm  *cm.Store
	log *slog.Logger

	// PageBytes is the size of a copied page (kv.DefaultExportBytes if 0).
	PageBytes int
	// CallTimeout bounds one call to a node; Retries the attempts of one
	// step (each waits RetryWait after a failure that may pass: no
	// leader, leader unreachable, leadership lost).
	CallTimeout time.Duration
	Retries     int
	RetryWait   time.Duration
	// StopAfter, if set, makes a move stop (ErrStopped, the move left
	// recorded) after that step: "fence", "copy", "seal" or "switch".
	// It stands in for a mover crashing there, for drills and tests of
	// resuming.
	StopAfter string

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn // guarded by mu
}

// NewMover returns a Mover working through the CM store s.
func NewMover(s *cm.Store, log *slog.Logger) *Mover {
	if log == nil {
		log = slog.Default()
	}
	return &Mover{cm: s, log: log, CallTimeout: 10 * time.Second, Retries: 100, RetryWait: 100 * time.Millisecond, conns: map[string]*grpc.ClientConn{}}
}

// Close closes the Mover's connections.
func (m *Mover) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, cc := range m.conns {
		cc.Close()
	}
	m.conns = map[string]*grpc.ClientConn{}
}

// ErrStopped: the move stopped where StopAfter said; it stays recorded.
var ErrStopped = errors.New("kv move: stopped (StopAfter), move left recorded")

// MoveSteps are the steps StopAfter may name, in order.
var MoveSteps = []string{"fence", "copy", "seal", "switch"}

func (m *Mover) stopAfter(step string) error {
	if m.StopAfter == step {
		return fmt.Errorf("%w after %s", ErrStopped, step)
	}
	return nil
}

func newMoveID() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		if id := binary.BigEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

// Resume finishes the recorded move, if any; it returns the move it
// finished and whether there was one.
func (m *Mover) Resume(ctx context.Context) (cm.Move, bool, error) {
	mv, ok, err := m.cm.PendingMove(ctx)
	if err != nil || !ok {
		return mv, false, err
	}
	m.log.Info("kv move: resuming", "move", mv.String())
	return mv, true, m.run(ctx, mv)
}

// Move moves the range ending at token to group to, after finishing any
// move already recorded.
func (m *Mover) Move(ctx context.Context, token uint64, to ring.GroupID) (cm.Move, error) {
	if _, _, err := m.Resume(ctx); err != nil {
		return cm.Move{}, err
	}
	r, err := m.cm.Ring(ctx)
	if err != nil {
		return cm.Move{}, err
	}
	if _, err := m.cm.Group(ctx, to); err != nil {
		return cm.Move{}, err
	}
	mv, err := cm.PlanMove(r, token, to, newMoveID())
	if err != nil {
		return cm.Move{}, err
	}
	if err := m.cm.BeginMove(ctx, mv); err != nil {
		return cm.Move{}, err
	}
	m.log.Info("kv move: begins", "move", mv.String())
	return mv, m.run(ctx, mv)
}

// Abort undoes the recorded move, if its ring switch has not committed
// (cm.ErrCannotAbort otherwise): the range stays with its source. It
// returns the move undone and whether there was one.
func (m *Mover) Abort(ctx context.Context) (cm.Move, bool, error) {
	mv, ok, err := m.cm.PendingMove(ctx)
	if err != nil || !ok {
		return mv, false, err
	}
	if mv.Abort == 0 {
		if mv, err = m.cm.MarkAbort(ctx, mv, newMoveID()); err != nil {
			return mv, true, err
		}
	}
	m.log.Info("kv move: aborting", "move", mv.String())
	return mv, true, m.run(ctx, mv)
}

// RemoveGroup moves every range of g to the other groups, one move at a
// time (cm.PlanRemoval), then deregisters g. Its replicas keep running
// until the operator stops them.
func (m *Mover) RemoveGroup(ctx context.Context, g ring.GroupID) ([]cm.Move, error) {
	var done []cm.Move
	for range ring.MaxTokens + 1 {
		r, err := m.cm.Ring(ctx)
		if err != nil {
			return done, err
		}
		tok, to, ok, err := cm.PlanRemoval(r, g)
		if err != nil {
			return done, err
		}
		if !ok {
			return done, m.cm.DeregisterGroup(ctx, g)
		}
		mv, err := m.Move(ctx, tok, to)
		if err != nil {
			return done, err
		}
		done = append(done, mv)
	}
	return done, fmt.Errorf("kvserver: %v still holds tokens after %d moves", g, len(done))
}

// run takes a recorded move from wherever it stands to its end.
func (m *Mover) run(ctx context.Context, mv cm.Move) error {
	r, err := m.cm.Ring(ctx)
	if err != nil {
		return err
	}
	step, err := cm.NextStep(r, mv)
	if err != nil {
		return err
	}
	rg := mv.Range()
	if step == cm.StepAbort {
		return m.undo(ctx, mv, r.Version())
	}
	if step == cm.StepCopy {
		fence := kv.MoveOp{ID: mv.ID, Range: rg, To: uint32(mv.To), RingVersion: mv.Ring}
		if err := m.step(ctx, mv.From, kv.OpFence, fence); err != nil {
			return fmt.Errorf("kv move: fence in %v: %w", mv.From, err)
		}
		if err := m.stopAfter("fence"); err != nil {
			return err
		}
		if err := m.copyRange(ctx, mv); err != nil {
			return err
		}
		if err := m.stopAfter("copy"); err != nil {
			return err
		}
		if err := m.step(ctx, mv.To, kv.OpSeal, kv.MoveOp{ID: mv.ID, Range: rg}); err != nil {
			return fmt.Errorf("kv move: seal in %v: %w", mv.To, err)
		}
		if err := m.stopAfter("seal"); err != nil {
			return err
		}
		if _, err := m.cm.SwitchRing(ctx, mv); err != nil {
			return fmt.Errorf("kv move: switch the ring: %w", err)
		}
		m.log.Info("kv move: ring switched", "move", mv.String())
		if err := m.stopAfter("switch"); err != nil {
			return err
		}
	}
	if err := m.step(ctx, mv.From, kv.OpDropRange, kv.MoveOp{ID: mv.ID, Range: rg}); err != nil {
		return fmt.Errorf("kv move: drop from %v: %w", mv.From, err)
	}
	return m.cm.EndMove(ctx, mv.ID)
}

// undo takes an aborted move back: seal it in To (a mover still copying
// is refused from here on), fence and drop To's copy under the abort id,
// seal it in From (lifting From's fence: the range is served there
// again), store the ring version the fence named (cm.AbortRing), delete
// the record. Every step is idempotent, like a move's.
func (m *Mover) undo(ctx context.Context, mv cm.Move, ringVersion uint64) error {
	rg := mv.Range()
	if err := m.step(ctx, mv.To, kv.OpSeal, kv.MoveOp{ID: mv.ID, Range: rg}); err != nil {
		return fmt.Errorf("kv move: abort: seal in %v: %w", mv.To, err)
	}
	fence := kv.MoveOp{ID: mv.Abort, Range: rg, To: uint32(mv.From), RingVersion: ringVersion}
	if err := m.step(ctx, mv.To, kv.OpFence, fence); err != nil {
		return fmt.Errorf("kv move: abort: fence in %v: %w", mv.To, err)
	}
	if err := m.step(ctx, mv.To, kv.OpDropRange, kv.MoveOp{ID: mv.Abort, Range: rg}); err != nil {
		return fmt.Errorf("kv move: abort: drop from %v: %w", mv.To, err)
	}
	if err := m.step(ctx, mv.From, kv.OpSeal, kv.MoveOp{ID: mv.ID, Range: rg}); err != nil {
		return fmt.Errorf("kv move: abort: seal in %v: %w", mv.From, err)
	}
	if err := m.cm.AbortRing(ctx, mv); err != nil {
		return fmt.Errorf("kv move: abort: %w", err)
	}
	return m.cm.EndMove(ctx, mv.ID)
}

// copyRange pages the fenced range out of the source's leader into the
// target. A target that answers "sealed" has everything already.
func (m *Mover) copyRange(ctx context.Context, mv cm.Move) error {
	var after []byte
	for pages := 0; ; pages++ {
		var page kv.MoveChunk
		err := m.call(ctx, mv.From, func(ctx context.Context, c moveClient) error {
			var err error
			page, err = c.export(ctx, exportRequest{Group: uint32(mv.From), Move: mv.ID, Range: mv.Range(), After: after, MaxBytes: m.PageBytes})
			return err
		})
		if err != nil {
			return fmt.Errorf("kv move: export from %v: %w", mv.From, err)
		}
		if len(page.Cells)+len(page.Clients) > 0 {
			err := m.step(ctx, mv.To, kv.OpIngest, kv.MoveOp{ID: mv.ID, Range: mv.Range(), Cells: page.Cells, Clients: page.Clients})
			if status.Code(err) == codes.AlreadyExists {
				return nil // sealed by an earlier run
			}
			if err != nil {
				return fmt.Errorf("kv move: ingest into %v: %w", mv.To, err)
			}
		}
		if page.Done {
			m.log.Info("kv move: copied", "move", mv.String(), "pages", pages+1)
			return nil
		}
		if page.Next == nil {
			return errors.New("kv move: export page without a cursor")
		}
		after = page.Next
	}
}

// step proposes one move operation in group g through its leader.
func (m *Mover) step(ctx context.Context, g ring.GroupID, op kv.Op, mv kv.MoveOp) error {
	err := m.call(ctx, g, func(ctx context.Context, c moveClient) error {
		return c.step(ctx, stepRequest{Group: uint32(g), Op: op, Move: mv})
	})
	if op == kv.OpSeal && status.Code(err) == codes.AlreadyExists {
		return nil
	}
	return err
}

// call runs f against g's leader: the one a NotLeader answer names, else
// the CM's record. Failures that pass (no leader yet, leader unreachable,
// leadership lost mid-proposal) are retried; every step is idempotent.
func (m *Mover) call(ctx context.Context, g ring.GroupID, f func(context.Context, moveClient) error) error {
	var hint string
	var last error
	for range max(m.Retries, 1) {
		addr := hint
		hint = ""
		if addr == "" {
			l, ok, err := m.cm.Leader(ctx, g)
			if err != nil {
				return err
			}
			if ok {
				addr = l.Addr
			}
		}
		if addr != "" {
			cc, err := m.conn(addr)
			if err != nil {
				return err
			}
			cctx, cancel := context.WithTimeout(ctx, m.CallTimeout)
			err = f(cctx, moveClient{cc})
			cancel()
			if err == nil {
				return nil
			}
			last = err
			st := status.Convert(err)
			switch st.Code() {
			case codes.Unavailable, codes.Aborted, codes.DeadlineExceeded:
				for _, d := range st.Details() {
					if nl, ok := d.(*kvpb.NotLeader); ok && nl.GetLeaderAddress() != "" && nl.GetLeaderAddress() != addr {
						hint = nl.GetLeaderAddress()
					}
				}
			case codes.FailedPrecondition:
				// The fence has not applied on this member yet (a new
				// leader catching up): wait.
			default:
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if hint != "" {
				continue
			}
		} else {
			last = fmt.Errorf("no leader of %v recorded", g)
		}
		t := time.NewTimer(m.RetryWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return fmt.Errorf("%v: gave up: %w", g, last)
}

func (m *Mover) conn(addr string) (*grpc.ClientConn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cc, ok := m.conns[addr]; ok {
		return cc, nil
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	m.conns[addr] = cc
	return cc, nil
}
