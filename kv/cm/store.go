package cm

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/wire"
)

// Errors of the Store; test with errors.Is.
var (
	ErrNotInitialized = errors.New("cm: no ring stored (Init has not run)")
	ErrInitialized    = errors.New("cm: a ring is already stored")
	ErrStaleRing      = errors.New("cm: new ring version not above the stored one")
	ErrUnregistered   = errors.New("cm: group not registered")
	ErrGroupOnRing    = errors.New("cm: group still owns ranges on the ring")
	ErrNotMember      = errors.New("cm: leader is not a member of its group")
	// ErrStaleEpoch: RecordLeader found a leader of a newer epoch (or
	// another leader of the same epoch) recorded; the caller has been
	// deposed.
	ErrStaleEpoch = errors.New("cm: a leader of a newer epoch is recorded")
)

// maxAttempts bounds the compare-and-set retry loops: each retry means
// another writer changed the znode in between, which with a handful of
// writers per znode settles long before this.
const maxAttempts = 64

// Store reads and writes the configuration through a corral client
// session. It holds no state of its own beyond the layout: every method
// is safe to call from several goroutines (the Conn is).
type Store struct {
	c *client.Conn
	l layout
}

// NewStore returns a Store for the configuration under root (DefaultRoot
// if empty).
func NewStore(c *client.Conn, root string) (*Store, error) {
	if root == "" {
		root = DefaultRoot
	}
	if err := checkRoot(root); err != nil {
		return nil, err
	}
	return &Store{c: c, l: layout{root: root}}, nil
}

var openACL = client.WorldACL(client.PermAll)

// ensure creates the root and <root>/rgs if they are missing.
func (s *Store) ensure(ctx context.Context) error {
	for _, p := range []string{s.l.root, s.l.groupsPath()} {
		_, err := s.c.Create(ctx, p, nil, openACL, client.ModePersistent)
		if err != nil && !errors.Is(err, wire.CodeNodeExists) {
			return fmt.Errorf("cm: create %s: %w", p, err)
		}
	}
	return nil
}

// RegisterGroup records g's members, creating or replacing its znode.
func (s *Store) RegisterGroup(ctx context.Context, g ring.GroupID, gi GroupInfo) error {
	if g == 0 {
		return ring.ErrZeroGroup
	}
	if err := gi.validate(); err != nil {
		return fmt.Errorf("cm: register %v: %w", g, err)
	}
	if err := s.ensure(ctx); err != nil {
		return err
	}
	p := s.l.groupPath(g)
	_, err := s.c.Create(ctx, p, encodeGroup(gi), openACL, client.ModePersistent)
	if errors.Is(err, wire.CodeNodeExists) {
		_, err = s.c.Set(ctx, p, encodeGroup(gi), -1)
	}
	if err != nil {
		return fmt.Errorf("cm: register %v: %w", g, err)
	}
	return nil
}

// DeregisterGroup deletes g's registration and leader record. It refuses
// while g holds tokens on the stored ring: move its ranges away first.
func (s *Store) DeregisterGroup(ctx context.Context, g ring.GroupID) error {
	for range maxAttempts {
		r, st, err := s.ringStat(ctx)
		var ops []client.Op
		switch {
		case errors.Is(err, ErrNotInitialized):
			// No ring: assert it is still absent when g goes, by creating
			// and deleting it in the same multi (there is no "check
			// absent" op), so that a ring naming g cannot appear between
			// this read and the deletion.
			ops = append(ops,
				client.CreateOp(s.l.ringPath(), nil, openACL, client.ModePersistent),
				client.DeleteOp(s.l.ringPath(), -1))
		case err != nil:
			return err
		case r.Has(g):
			return fmt.Errorf("%w: %v", ErrGroupOnRing, g)
		default:
			ops = append(ops, client.CheckOp(s.l.ringPath(), st.Version))
		}
		kids, err := s.c.Children(ctx, s.l.groupPath(g))
		if errors.Is(err, wire.CodeNoNode) {
			return fmt.Errorf("%w: %v", ErrUnregistered, g)
		}
		if err != nil {
			return fmt.Errorf("cm: deregister %v: %w", g, err)
		}
		if slices.Contains(kids, "leader") {
			ops = append(ops, client.DeleteOp(s.l.leaderPath(g), -1))
		}
		ops = append(ops, client.DeleteOp(s.l.groupPath(g), -1))
		_, err = s.c.Multi(ctx, ops...)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, wire.CodeBadVersion), errors.Is(err, wire.CodeNoNode),
			errors.Is(err, wire.CodeNotEmpty), errors.Is(err, wire.CodeNodeExists):
			continue // the ring or the group's children changed: look again
		}
		return fmt.Errorf("cm: deregister %v: %w", g, err)
	}
	return fmt.Errorf("cm: deregister %v: too much contention", g)
}

// Init stores the first ring. Every group on it must be registered.
func (s *Store) Init(ctx context.Context, r *ring.Ring) error {
	if r == nil || r.Len() == 0 {
		return ring.ErrNoTokens
	}
	if err := s.ensure(ctx); err != nil {
		return err
	}
	ops := []client.Op{client.CreateOp(s.l.ringPath(), r.Encode(), openACL, client.ModePersistent)}
	ops = append(ops, s.registeredChecks(r)...)
	res, err := s.c.Multi(ctx, ops...)
	if err != nil {
		return s.ringMultiErr(r, res, err, ErrInitialized)
	}
	return nil
}

// registeredChecks asserts in a multi that every group on r is registered.
func (s *Store) registeredChecks(r *ring.Ring) []client.Op {
	var ops []client.Op
	for _, g := range r.Groups() {
		ops = append(ops, client.CheckOp(s.l.groupPath(g), -1))
	}
	return ops
}

// ringMultiErr explains a failed multi of a ring write followed by the
// registeredChecks of r: the first op failing is the ring write (its
// error becomes onRing) or a check (the group is not registered).
func (s *Store) ringMultiErr(r *ring.Ring, res []client.OpResult, err error, onRing error) error {
	gs := r.Groups()
	for i, x := range res {
		if x.Err == nil || errors.Is(x.Err, wire.CodeRuntimeInconsistency) {
			continue
		}
		if i == 0 {
			return fmt.Errorf("%w: %w", onRing, x.Err)
		}
		if i-1 < len(gs) && errors.Is(x.Err, wire.CodeNoNode) {
			return fmt.Errorf("%w: %v", ErrUnregistered, gs[i-1])
		}
		return fmt.Errorf("cm: ring write: %w", x.Err)
	}
	return fmt.Errorf("cm: ring write: %w", err)
}

// Ring reads the stored ring.
func (s *Store) Ring(ctx context.Context) (*ring.Ring, error) {
	r, _, err := s.ringStat(ctx)
	return r, err
}

func (s *Store) ringStat(ctx context.Context) (*ring.Ring, client.Stat, error) {
	b, st, err := s.c.Get(ctx, s.l.ringPath())
	if errors.Is(err, wire.CodeNoNode) {
		return nil, st, ErrNotInitialized
	}
	if err != nil {
		return nil, st, fmt.Errorf("cm: read ring: %w", err)
	}
	r, err := ring.Decode(b)
	if err != nil {
		return nil, st, fmt.Errorf("cm: %s: %w", s.l.ringPath(), err)
	}
	return r, st, nil
}

// UpdateRing replaces the ring with next(current), atomically: if another
// writer changed the ring in between, it reads it again and calls next
// again. The new ring's version must exceed the current one's, and every
// group on it must be registered. An error from next is returned as is.
func (s *Store) UpdateRing(ctx context.Context, next func(cur *ring.Ring) (*ring.Ring, error)) (*ring.Ring, error) {
	for range maxAttempts {
		cur, st, err := s.ringStat(ctx)
		if err != nil {
			return nil, err
		}
		nr, err := next(cur)
		if err != nil {
			return nil, err
		}
		if nr == nil || nr.Version() <= cur.Version() {
			return nil, fmt.Errorf("%w: stored v%d", ErrStaleRing, cur.Version())
		}
		ops := []client.Op{client.SetDataOp(s.l.ringPath(), nr.Encode(), st.Version)}
		ops = append(ops, s.registeredChecks(nr)...)
		res, err := s.c.Multi(ctx, ops...)
		if err == nil {
			return nr, nil
		}
		if len(res) > 0 && errors.Is(res[0].Err, wire.CodeBadVersion) {
			continue // changed since we read it
		}
		return nil, s.ringMultiErr(nr, res, err, errors.New("cm: ring write"))
	}
	return nil, errors.New("cm: update ring: too much contention")
}

// Group reads g's registration.
func (s *Store) Group(ctx context.Context, g ring.GroupID) (GroupInfo, error) {
	gi, _, err := s.groupStat(ctx, g)
	return gi, err
}

func (s *Store) groupStat(ctx context.Context, g ring.GroupID) (GroupInfo, client.Stat, error) {
	b, st, err := s.c.Get(ctx, s.l.groupPath(g))
	if errors.Is(err, wire.CodeNoNode) {
		return GroupInfo{}, st, fmt.Errorf("%w: %v", ErrUnregistered, g)
	}
	if err != nil {
		return GroupInfo{}, st, fmt.Errorf("cm: read %v: %w", g, err)
	}
	gi, err := decodeGroup(b)
	if err != nil {
		return GroupInfo{}, st, fmt.Errorf("cm: %s: %w", s.l.groupPath(g), err)
	}
	return gi, st, nil
}

// Leader reads g's recorded leader; ok is false if none is recorded.
func (s *Store) Leader(ctx context.Context, g ring.GroupID) (l Leader, ok bool, err error) {
	l, _, ok, err = s.leaderStat(ctx, g)
	return l, ok, err
}

func (s *Store) leaderStat(ctx context.Context, g ring.GroupID) (Leader, client.Stat, bool, error) {
	b, st, err := s.c.Get(ctx, s.l.leaderPath(g))
	if errors.Is(err, wire.CodeNoNode) {
		return Leader{}, st, false, nil
	}
	if err != nil {
		return Leader{}, st, false, fmt.Errorf("cm: read leader of %v: %w", g, err)
	}
	l, err := decodeLeader(b)
	if err != nil {
		return Leader{}, st, false, fmt.Errorf("cm: %s: %w", s.l.leaderPath(g), err)
	}
	return l, st, true, nil
}

// RecordLeader records l as g's leader if no leader of a newer epoch is
// recorded. A newly elected leader calls it; the deposed leader of an
// older epoch that calls it late gets ErrStaleEpoch and changes nothing.
//
// The guard is a compare-and-set: the stored record is read, its epoch
// compared, and the new one written only if the znode's version is still
// the one read (or, when there was none, created only if still absent).
// So the stored epoch never goes down, whatever the interleaving. The
// same leader recording itself again in the same epoch succeeds (it may
// retry after a connection loss); another leader in the same epoch is
// refused, since zab elects one leader per epoch.
func (s *Store) RecordLeader(ctx context.Context, g ring.GroupID, l Leader) error {
	if err := l.validate(); err != nil {
		return fmt.Errorf("cm: leader of %v: %w", g, err)
	}
	gi, err := s.Group(ctx, g)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(gi.Members, func(m Member) bool { return m.ID == l.ID }) {
		return fmt.Errorf("%w: %d in %v", ErrNotMember, l.ID, g)
	}
	data := encodeLeader(l)
	for range maxAttempts {
		cur, st, ok, err := s.leaderStat(ctx, g)
		if err != nil {
			return err
		}
		if !ok {
			_, err := s.c.Create(ctx, s.l.leaderPath(g), data, openACL, client.ModePersistent)
			switch {
			case err == nil:
				return nil
			case errors.Is(err, wire.CodeNodeExists):
				continue // another leader recorded itself first: compare
			case errors.Is(err, wire.CodeNoNode):
				return fmt.Errorf("%w: %v", ErrUnregistered, g)
			}
			return fmt.Errorf("cm: record leader of %v: %w", g, err)
		}
		if cur.Epoch > l.Epoch || (cur.Epoch == l.Epoch && cur.ID != l.ID) {
			return fmt.Errorf("%w: %v has %d in epoch %d, not %d in epoch %d",
				ErrStaleEpoch, g, cur.ID, cur.Epoch, l.ID, l.Epoch)
		}
		if cur == l {
			return nil
		}
		_, err = s.c.Set(ctx, s.l.leaderPath(g), data, st.Version)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, wire.CodeBadVersion), errors.Is(err, wire.CodeNoNode):
			continue // changed or deleted since we read it: compare again
		}
		return fmt.Errorf("cm: record leader of %v: %w", g, err)
	}
	return fmt.Errorf("cm: record leader of %v: too much contention", g)
}
