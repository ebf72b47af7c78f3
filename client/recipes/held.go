package recipes

import (
	"context"
	"errors"
	"sync"

	"github.com/corral-db/corral/client"
)

// Held is something this client holds through an ephemeral node: a lock,
// a leadership, a group membership. It stays valid until Lost is closed.
//
// Lost closes when
//   - the node is deleted (Err: ErrNodeDeleted),
//   - the session expires or the Conn is closed (client.ErrSessionExpired,
//     client.ErrClosed),
//   - for locks and leadership, unless KeepOnDisconnect was given, the
//     connection drops (client.ErrConnectionLoss): from that moment the
//     server may expire the session and hand the lock to another client
//     before this one can learn of it, so the holder must stop acting as
//     the owner,
//   - Release is called (ErrReleased).
//
// How it knows: a persistent watch (addWatch) on its own node. Besides
// the node's deletion, a persistent watcher hears the client's
// Disconnected and Connected transitions, and its channel is closed with
// the session's end, so no polling and no session callback is needed. A
// goroutine per Held drains it and stops when the watch is removed
// (Release, or after loss) or the session ends.
//
// Once lost, the node is deleted in the background if it still exists
// (a lock lost to a dropped connection must not keep others waiting once
// the connection is back).
type Held struct {
	c      *client.Conn
	o      *options
	path   string
	strict bool              // lose on disconnect
	owned  func([]byte) bool // ownership test for cleanup; nil: owner check only

	w      *client.Watcher
	lost   chan struct{}
	gone   chan struct{} // before arming: the node or the session is gone
	armReq chan chan error
	done   chan struct{} // the monitor has returned

	mu           sync.Mutex
	err          error // why Lost closed
	goneErr      error
	cleanStarted bool
	cleaned      chan struct{}
	cleanErr     error
}

// Path is the node that represents the hold.
func (h *Held) Path() string { return h.path }

// Lost is closed when the hold ends; see Held.
func (h *Held) Lost() <-chan struct{} { return h.lost }

// Err is nil while held, then why Lost closed.
func (h *Held) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Release gives the hold up: Lost closes (if it had not) and the node is
// deleted, retrying through connection loss. It returns when the node is
// gone (nil, also when the session's end already removed it), or when
// ctx ends (ctx.Err(); the deletion continues in the background).
func (h *Held) Release(ctx context.Context) error {
	h.lose(ErrReleased)
	select {
	case <-h.cleaned:
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.cleanErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newHeld watches the node at p (which this session just created) and
// starts the monitor. The handle is not armed: connection events do not
// count until arm succeeds.
func newHeld(ctx context.Context, c *client.Conn, o *options, p string, strict bool, owned func([]byte) bool) (*Held, error) {
	w, err := addWatch(ctx, c, o, p)
	if err != nil {
		return nil, err
	}
	h := &Held{
		c: c, o: o, path: p, strict: strict, owned: owned, w: w,
		lost:    make(chan struct{}),
		gone:    make(chan struct{}),
		armReq:  make(chan chan error),
		done:    make(chan struct{}),
		cleaned: make(chan struct{}),
	}
	go h.monitor()
	return h, nil
}

// addWatch sets a persistent watch on p, retrying through connection
// loss. The request runs under a context of its own: a Watcher whose
// addWatch completes after the caller gave up would otherwise be
// registered with no one to drain (or remove) it, and a full Watcher
// stalls the whole Conn. If ctx ends first, the Watcher is removed as
// soon as it exists.
func addWatch(ctx context.Context, c *client.Conn, o *options, p string) (*client.Watcher, error) {
	type result struct {
		w   *client.Watcher
		err error
	}
	ch := make(chan result, 1)
	go func() {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.cleanupLimit)
		defer cancel()
		w, err := retry(wctx, func(ctx context.Context) (*client.Watcher, error) {
			return c.AddWatch(ctx, p, false)
		})
		ch <- result{w, err}
	}()
	select {
	case r := <-ch:
		return r.w, r.err
	case <-ctx.Done():
		o.background("abandoned watch on "+p, func(bctx context.Context) error {
			select {
			case r := <-ch:
				if r.w != nil {
					return r.w.Remove(bctx)
				}
				return nil
			case <-bctx.Done():
				return bctx.Err()
			}
		})
		return nil, ctx.Err()
	}
}

// monitor drains the watcher until it closes and turns its events into
// loss. See Held.
func (h *Held) monitor() {
	defer close(h.done)
	events := h.w.Events()
	armed := false
	var check *client.Future[*client.Stat]
	var checkDone <-chan struct{}
	ended := func() {
		err := h.w.Err()
		if errors.Is(err, client.ErrWatchRemoved) {
			return // our own Remove: the hold was already given up
		}
		if err == nil {
			err = client.ErrClosed
		}
		if armed {
			h.lose(err)
		} else {
			h.markGone(err)
		}
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				ended()
				return
			}
			switch {
			case ev.Type == client.EventNodeDeleted:
				if armed {
					h.lose(ErrNodeDeleted)
				} else {
					h.markGone(ErrNodeDeleted)
				}
			case ev.Type == client.EventSession && ev.State == client.StateDisconnected:
				if armed && h.strict {
					h.lose(client.ErrConnectionLoss)
				}
			case ev.Type == client.EventSession && ev.State == client.StateConnected:
				// A persistent watch is re-registered without a
				// catch-up: a deletion while disconnected is not
				// replayed. Look once.
				if armed && !h.strict && check == nil {
					check = h.c.ExistsAsync(h.path)
					checkDone = check.Done()
				}
			}
		case <-checkDone:
			st, err := check.Result()
			check, checkDone = nil, nil
			if err == nil && (st == nil || st.EphemeralOwner != h.c.SessionID()) {
				h.lose(ErrNodeDeleted)
			}
		case reply := <-h.armReq:
			// Everything now buffered preceded the reply that made the
			// caller decide it holds the node (the client delivers a
			// watch event before any later reply): it predates the hold.
			// Only a deletion among it matters; the connection state is
			// read afresh.
		drain:
			for {
				select {
				case ev, ok := <-events:
					if !ok {
						ended()
						reply <- h.goneError()
						return
					}
					if ev.Type == client.EventNodeDeleted {
						h.markGone(ErrNodeDeleted)
					}
				default:
					break drain
				}
			}
			switch {
			case h.isGone():
				reply <- h.goneError()
			case h.c.State() != client.StateConnected:
				reply <- errNotConnected
			default:
				armed = true
				reply <- nil
			}
		}
	}
}

// arm makes the hold count from now on: after it returns nil, a dropped
// connection, the session's end or the node's deletion closes Lost. It
// fails if the node is already gone, or with errNotConnected.
func (h *Held) arm(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case h.armReq <- reply:
		return <-reply
	case <-h.done:
		return h.goneError()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Held) markGone(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.goneErr == nil {
		h.goneErr = err
		close(h.gone)
	}
}

func (h *Held) isGone() bool {
	select {
	case <-h.gone:
		return true
	default:
		return false
	}
}

func (h *Held) goneError() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.goneErr != nil {
		return h.goneErr
	}
	if h.err != nil {
		return h.err
	}
	return ErrNodeDeleted
}

// lose ends the hold with cause (the first cause sticks) and starts the
// cleanup.
func (h *Held) lose(cause error) {
	h.mu.Lock()
	if h.err == nil {
		h.err = cause
		close(h.lost)
	}
	start := !h.cleanStarted
	h.cleanStarted = true
	h.mu.Unlock()
	if start {
		go h.cleanup()
	}
}

// cleanup removes the watch (which ends the monitor) and deletes the node
// if this session still owns it.
func (h *Held) cleanup() {
	defer close(h.cleaned)
	ctx, cancel := context.WithTimeout(context.Background(), h.o.cleanupLimit)
	defer cancel()
	_ = h.w.Remove(ctx) // ends the watch locally at once; the server's copy dies with the connection at worst
	err := deleteOwned(ctx, h.c, h.path, h.owned)
	if err != nil {
		h.o.logger.Warn("recipes: could not delete node after release", "path", h.path, "err", err)
	}
	h.mu.Lock()
	h.cleanErr = err
	h.mu.Unlock()
}
