package cm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/kv/ring"
)

// maxDirty bounds the set of znodes a View has yet to re-read; past it the
// View re-reads everything instead.
const maxDirty = 1024

// retryDelay is how long a View waits before re-reading after a failed
// read (a connection loss, a record it cannot parse).
const retryDelay = 200 * time.Millisecond

// dirtyKey names one record to re-read.
type dirtyKey struct {
	kind nodeKind
	g    ring.GroupID
}

// View is a client's copy of the configuration, kept current by one
// persistent recursive watch on the root. Current is cheap and lock-free
// for the caller's purposes (it returns an immutable State).
//
// Two goroutines, both ending with the View: the pump drains the
// watcher's channel at once (a Watcher left full stalls the whole Conn)
// into the dirty set, and the loader re-reads what is dirty and publishes
// a new State.
type View struct {
	s       *Store
	w       *client.Watcher
	cancel  context.CancelFunc
	done    chan struct{} // closed when both goroutines have returned
	kick    chan struct{} // cap 1: the dirty set gained something
	changed chan struct{} // cap 1: a new State was published

	mu sync.Mutex
	// Guarded by mu.
	cur     *State
	dirty   map[dirtyKey]struct{}
	all     bool  // re-read everything (reconnect, or dirty overflowed)
	lastErr error // the last failed read, nil after a clean reload
	err     error // why the View stopped, once it has
}

// Watch sets the watch, reads the whole configuration once and returns a
// View that follows it until ctx ends, Close is called, or the session
// ends. The configuration need not exist yet: the View then starts
// empty and fills in as it is created.
func Watch(ctx context.Context, c *client.Conn, root string) (*View, error) {
	s, err := NewStore(c, root)
	if err != nil {
		return nil, err
	}
	// The watch first, then the read: a change after the read fires an
	// event; one before it is in what was read.
	w, err := c.AddWatch(ctx, s.l.root, true)
	if err != nil {
		return nil, fmt.Errorf("cm: watch %s: %w", s.l.root, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	v := &View{
		s:       s,
		w:       w,
		cancel:  cancel,
		done:    make(chan struct{}),
		kick:    make(chan struct{}, 1),
		changed: make(chan struct{}, 1),
		dirty:   map[dirtyKey]struct{}{},
	}
	// The pump runs before the first read: events that arrive meanwhile
	// must be drained, or a full watcher would stall the replies the read
	// waits for. What they mark is read again afterwards.
	ready := make(chan struct{}) // closed once cur holds the first read
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); v.pump(ctx) }()
	go func() { defer wg.Done(); v.load(ctx, ready) }()
	go func() {
		wg.Wait()
		close(v.done)
	}()
	st, err := s.Load(ctx)
	if err != nil {
		v.Close()
		return nil, err
	}
	v.mu.Lock()
	v.cur = st
	v.mu.Unlock()
	close(ready)
	return v, nil
}

// Current is the latest State read.
func (v *View) Current() *State {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cur
}

// Changed receives (coalesced) after each new State is published.
func (v *View) Changed() <-chan struct{} { return v.changed }

// Done is closed when the View has stopped following changes.
func (v *View) Done() <-chan struct{} { return v.done }

// Err is why the View stopped (nil while it runs, context.Canceled after
// Close, ErrSessionExpired or ErrClosed when the session ended).
func (v *View) Err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}

// LastError is the last failed re-read (a lost connection, a record that
// does not parse), or nil if the latest reload succeeded. The previous
// value of a record that failed to load is kept.
func (v *View) LastError() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lastErr
}

// Close stops the View and removes its watch; it waits for its
// goroutines.
func (v *View) Close() {
	v.cancel()
	<-v.done
}

// stop records why the View stopped, keeping the first reason.
func (v *View) stop(err error) {
	v.mu.Lock()
	if v.err == nil {
		v.err = err
	}
	v.mu.Unlock()
	v.cancel()
}

// pump moves the watcher's events into the dirty set.
func (v *View) pump(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			rmCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = v.w.Remove(rmCtx)
			cancel()
			v.stop(ctx.Err())
			return
		case ev, ok := <-v.w.Events():
			if !ok {
				v.stop(v.w.Err())
				return
			}
			v.mark(ev)
		}
	}
}

// mark records what ev says must be re-read, and wakes the loader.
func (v *View) mark(ev client.Event) {
	v.mu.Lock()
	switch ev.Type {
	case client.EventSession:
		if ev.State == client.StateConnected {
			v.all = true // changes while disconnected are not replayed
		}
	case client.EventNodeCreated, client.EventNodeDeleted, client.EventNodeDataChanged:
		kind, g := v.s.l.classify(ev.Path)
		switch {
		case kind != nodeOther:
			v.dirty[dirtyKey{kind, g}] = struct{}{}
		case ev.Path == v.s.l.groupsPath() || ev.Path == v.s.l.root:
			v.all = true // the parents themselves came or went
		}
		if len(v.dirty) > maxDirty {
			v.all = true
			clear(v.dirty)
		}
	}
	v.mu.Unlock()
	select {
	case v.kick <- struct{}{}:
	default:
	}
}

// load re-reads what is dirty whenever kicked, from when ready is closed
// until ctx ends.
func (v *View) load(ctx context.Context, ready <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-ready:
	}
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-v.kick:
		case <-retry:
		}
		retry = nil
		if err := v.reload(ctx); err != nil && ctx.Err() == nil {
			retry = time.After(retryDelay)
		}
	}
}

// reload takes the dirty set, reads it and publishes the result. What
// fails to load goes back into the dirty set.
func (v *View) reload(ctx context.Context) error {
	v.mu.Lock()
	all, dirty := v.all, v.dirty
	v.all, v.dirty = false, map[dirtyKey]struct{}{}
	base := v.cur
	v.mu.Unlock()
	if !all && len(dirty) == 0 {
		return nil
	}

	var next *State
	var failed []dirtyKey
	var firstErr error
	if all {
		st, err := v.s.Load(ctx)
		if err != nil {
			v.requeue(nil, true, err)
			return err
		}
		next = st
	} else {
		next = base.clone()
		for k := range dirty {
			if err := v.loadKey(ctx, next, k); err != nil {
				failed = append(failed, k)
				if firstErr == nil {
					firstErr = err
				}
			}
		}
	}
	v.mu.Lock()
	v.cur = next
	v.mu.Unlock()
	select {
	case v.changed <- struct{}{}:
	default:
	}
	if firstErr != nil {
		v.requeue(failed, false, firstErr)
		return firstErr
	}
	v.mu.Lock()
	v.lastErr = nil
	v.mu.Unlock()
	return nil
}

// requeue puts keys (or everything) back to be read again and records err.
func (v *View) requeue(keys []dirtyKey, all bool, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.lastErr = err
	v.all = v.all || all
	for _, k := range keys {
		v.dirty[k] = struct{}{}
	}
}

// loadKey re-reads one record into st (a private copy), never letting a
// ring version or a leader epoch go backwards.
func (v *View) loadKey(ctx context.Context, st *State, k dirtyKey) error {
	switch k.kind {
	case nodeRing:
		r, err := v.s.Ring(ctx)
		switch {
		case errors.Is(err, ErrNotInitialized):
			st.Ring = nil
		case err != nil:
			return err
		case st.Ring == nil || r.Version() >= st.Ring.Version():
			st.Ring = r
		}
	case nodeGroup, nodeLeader:
		gs, present, err := v.s.loadGroup(ctx, k.g)
		if err != nil {
			return err
		}
		if !present {
			delete(st.Groups, k.g)
			return nil
		}
		if old, ok := st.Groups[k.g]; ok && old.Leader != nil && gs.Leader != nil && gs.Leader.Epoch < old.Leader.Epoch {
			gs.Leader = old.Leader
		}
		st.Groups[k.g] = gs
	}
	return nil
}
