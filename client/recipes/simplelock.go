package recipes

import (
	"context"
	"errors"
	"path"

	"github.com/corral-db/corral/client"
)

// SimpleLock is the paper's simplest lock (§2.4), a "lock file":
//
//	Lock
//	1 if create(l, EPHEMERAL) succeeds, exit holding the lock
//	2 getData(l, watch=true); if l exists wait for the watch event
//	3 goto 1
//	Unlock
//	1 delete(l)
//
// Every waiter watches the same node, so a release wakes them all and
// all but one fail again (the herd effect); Mutex avoids it. The node
// holds a GUID fresh for each Lock call: after a connection loss the
// client recognises its own node by it (and by its session as the
// ephemeral owner), and cleanup never deletes a node another holder
// created after ours was gone.
type SimpleLock struct {
	c    *client.Conn
	path string
	o    *options
}

// NewSimpleLock returns the lock represented by the node at p (its
// parent is created on first use).
func NewSimpleLock(c *client.Conn, p string, opts ...Option) *SimpleLock {
	return &SimpleLock{c: c, path: p, o: buildOptions(opts)}
}

// Lock waits until the lock is held or ctx ends.
func (l *SimpleLock) Lock(ctx context.Context) (*Held, error) {
	c := l.c
	guid := []byte(newGUID())
	owned := dataIs(guid)
	noNodes := 0
	for range maxRequeues {
		if err := l.create(ctx, guid, &noNodes); err != nil {
			return nil, err
		}
		h, err := newHeld(ctx, c, l.o, l.path, !l.o.keepOnDisconnect, owned)
		if err != nil {
			l.o.background("abandoned "+l.path, func(ctx context.Context) error { return deleteOwned(ctx, c, l.path, owned) })
			return nil, err
		}
		err = armOwned(ctx, c, h, owned)
		if err == nil {
			return h, nil
		}
		h.lose(err)
		if !errors.Is(err, ErrNodeDeleted) {
			return nil, err
		}
	}
	return nil, ErrGaveUp
}

// create loops on lines 1-3 until this session owns the node.
func (l *SimpleLock) create(ctx context.Context, guid []byte, noNodes *int) error {
	c := l.c
	owned := dataIs(guid)
	for {
		f := c.CreateAsync(l.path, guid, l.o.acl, client.ModeEphemeral)
		select {
		case <-f.Done():
		case <-ctx.Done():
			l.o.background("abandoned "+l.path, func(bctx context.Context) error {
				select {
				case <-f.Done():
				case <-bctx.Done():
					return bctx.Err()
				}
				return deleteOwned(bctx, c, l.path, owned)
			})
			return ctx.Err()
		}
		_, err := f.Result()
		switch {
		case err == nil:
			return nil
		case noNode(err) && *noNodes < maxNoNodeRetries:
			*noNodes++
			if err := ensurePath(ctx, c, path.Dir(l.path), l.o.acl); err != nil {
				return err
			}
			continue
		case !nodeExists(err) && !connLoss(err):
			return err
		}
		// Taken, or unknown after a connection loss: look.
		data, st, ch, err := getW(ctx, c, l.path)
		switch {
		case noNode(err):
			continue
		case err != nil:
			return err
		case st.EphemeralOwner == c.SessionID() && owned(data):
			return nil // our create did execute
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// armOwned checks, with the watch in place, that the node is still this
// session's and owned approves it, then arms h.
func armOwned(ctx context.Context, c *client.Conn, h *Held, owned func([]byte) bool) error {
	var b backoff
	for {
		data, st, err := get(ctx, c, h.path)
		switch {
		case noNode(err):
			return ErrNodeDeleted
		case err != nil:
			return err
		case st.EphemeralOwner != c.SessionID() || (owned != nil && !owned(data)):
			return ErrNodeDeleted
		}
		err = h.arm(ctx)
		if !errors.Is(err, errNotConnected) {
			return err
		}
		if err := b.wait(ctx); err != nil {
			return err
		}
	}
}
