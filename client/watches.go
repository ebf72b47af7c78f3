package client

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/corral-db/corral/wire"
)

// Watches, client side. The server keeps at most one watch per path and
// kind per connection and forgets them all when the connection closes;
// the client keeps every caller's registration, fans a notification out to
// all of them, and re-registers the lot with SetWatches/SetWatches2 on the
// next connection. Keys are server paths (chroot included), which is what
// notifications and SetWatches carry.
//
// Delivery happens on the reader goroutine, before it completes the reply
// of any request read after the notification, so a caller that sees a
// reply has its watch event already in the channel.

type watchKind uint8

const (
	wkNone   watchKind = iota
	wkData             // getData: data watch
	wkExists           // exists: data watch if the node exists, exist watch if not
	wkChild            // getChildren, getChildren2
)

// watchSpec is a one-shot watch a read asks for; registered when the reply
// says the server set it.
type watchSpec struct {
	kind watchKind
	path string // server path
	ch   chan Event
}

type registry struct {
	mu         sync.Mutex
	data       map[string][]chan Event
	exist      map[string][]chan Event
	child      map[string][]chan Event
	persistent map[string][]*Watcher
	recursive  map[string][]*Watcher
}

func (g *registry) init() {
	g.data = make(map[string][]chan Event)
	g.exist = make(map[string][]chan Event)
	g.child = make(map[string][]chan Event)
	g.persistent = make(map[string][]*Watcher)
	g.recursive = make(map[string][]*Watcher)
}

// registerWatch is the after-hook of reads that set a one-shot watch. As
// in ZooKeeper, exists sets a watch whether or not the node exists;
// getData and getChildren only on success.
func registerWatch(c *Conn, r *request) {
	g := &c.watches
	w := r.watch
	var m map[string][]chan Event
	switch {
	case w.kind == wkExists && r.err == nil, w.kind == wkData && r.err == nil:
		m = g.data
	case w.kind == wkExists && errors.Is(r.err, wire.CodeNoNode):
		m = g.exist
	case w.kind == wkChild && r.err == nil:
		m = g.child
	default:
		return
	}
	g.mu.Lock()
	m[w.path] = append(m[w.path], w.ch)
	g.mu.Unlock()
}

// trigger delivers a notification to the watches it fires, following
// ZooKeeper's ZKWatchManager: created/dataChanged fire data and exist
// watches; childrenChanged fires child watches; deleted fires all three;
// persistent watches on the path see every type; recursive ones on the
// path or an ancestor see all but childrenChanged.
func (g *registry) trigger(c *Conn, ev wire.WatcherEvent, zxid int64, l *link) {
	if ev.Type == wire.EventNone {
		return // session events are the client's business, not the server's
	}
	out := Event{Type: EventType(ev.Type), State: State(ev.State), Path: c.clientPath(ev.Path), Zxid: zxid}
	var (
		onceBuf [4]chan Event
		once    = onceBuf[:0]
		perBuf  [4]*Watcher
		per     = perBuf[:0]
	)
	g.mu.Lock()
	take := func(m map[string][]chan Event) {
		if chs, ok := m[ev.Path]; ok {
			once = append(once, chs...)
			delete(m, ev.Path)
		}
	}
	switch ev.Type {
	case wire.EventNodeCreated, wire.EventNodeDataChanged:
		take(g.data)
		take(g.exist)
	case wire.EventNodeChildrenChanged:
		take(g.child)
	case wire.EventNodeDeleted:
		take(g.data)
		take(g.exist)
		take(g.child)
	}
	per = append(per, g.persistent[ev.Path]...)
	if ev.Type != wire.EventNodeChildrenChanged && len(g.recursive) > 0 {
		for p := ev.Path; ; p = parent(p) {
			per = append(per, g.recursive[p]...)
			if p == "/" || p == "" {
				break
			}
		}
	}
	g.mu.Unlock()
	for _, ch := range once {
		ch <- out // capacity 1 and exactly one send: never blocks
		close(ch)
	}
	for _, w := range per {
		w.deliver(c, out, l)
	}
}

// parent of a server path: "/a/b" -> "/a", "/a" -> "/".
func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// watchedPaths lists what SetWatches must re-register.
func (g *registry) watchedPaths() (data, exist, child, persistent, recursive []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	keys := func(m map[string][]chan Event) (out []string) {
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	wkeys := func(m map[string][]*Watcher) (out []string) {
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	return keys(g.data), keys(g.exist), keys(g.child), wkeys(g.persistent), wkeys(g.recursive)
}

// endAll ends every watch: one-shot channels get an EventNotWatching
// carrying err and are closed; persistent Watchers are closed with Err()
// = err. Called when the Conn dies, with no reader running.
func (g *registry) endAll(c *Conn, err error, state State) {
	g.mu.Lock()
	var once []struct {
		path string
		ch   chan Event
	}
	for _, m := range []map[string][]chan Event{g.data, g.exist, g.child} {
		for p, chs := range m {
			for _, ch := range chs {
				once = append(once, struct {
					path string
					ch   chan Event
				}{p, ch})
			}
			delete(m, p)
		}
	}
	var per []*Watcher
	for _, m := range []map[string][]*Watcher{g.persistent, g.recursive} {
		for p, ws := range m {
			per = append(per, ws...)
			delete(m, p)
		}
	}
	g.mu.Unlock()
	for _, o := range once {
		o.ch <- Event{Type: EventNotWatching, State: state, Path: c.clientPath(o.path), Err: err}
		close(o.ch)
	}
	for _, w := range per {
		w.end(err)
	}
}

// sessionEvent tells every persistent Watcher about a disconnect or
// reconnect: events that happen while disconnected are not replayed to
// persistent watches, so a cache built on one must re-read after
// reconnecting. Called by the session goroutine with no reader running.
func (g *registry) sessionEvent(c *Conn, ev Event) {
	g.mu.Lock()
	var per []*Watcher
	for _, m := range []map[string][]*Watcher{g.persistent, g.recursive} {
		for _, ws := range m {
			per = append(per, ws...)
		}
	}
	g.mu.Unlock()
	for _, w := range per {
		w.deliver(c, ev, nil)
	}
}

// removeLocal ends the local watches of type t on a server path after the
// server removed (or did not have) them. One-shot channels get the
// matching ...WatchRemoved event and are closed.
func (g *registry) removeLocal(c *Conn, spath string, t WatcherType) {
	g.mu.Lock()
	var data, child []chan Event
	var per []*Watcher
	if t == WatchData || t == WatchAny {
		data = append(data, g.data[spath]...)
		data = append(data, g.exist[spath]...)
		delete(g.data, spath)
		delete(g.exist, spath)
	}
	if t == WatchChildren || t == WatchAny {
		child = append(child, g.child[spath]...)
		delete(g.child, spath)
	}
	if t == WatchPersistent || t == WatchAny {
		per = append(per, g.persistent[spath]...)
		delete(g.persistent, spath)
	}
	if t == WatchPersistentRecursive || t == WatchAny {
		per = append(per, g.recursive[spath]...)
		delete(g.recursive, spath)
	}
	g.mu.Unlock()
	path := c.clientPath(spath)
	for _, ch := range data {
		ch <- Event{Type: EventDataWatchRemoved, State: StateConnected, Path: path}
		close(ch)
	}
	for _, ch := range child {
		ch <- Event{Type: EventChildWatchRemoved, State: StateConnected, Path: path}
		close(ch)
	}
	for _, w := range per {
		w.end(ErrWatchRemoved)
	}
}

// Watcher is a persistent watch made by AddWatch. It receives every event
// for its node (and, if recursive, for every descendant) until removed.
//
// Backpressure: Events is bounded (WatcherBuffer). When it is full, the
// client stops reading from the connection until the consumer makes room,
// so no event is lost and none is reordered; replies to other calls wait
// meanwhile, and the client does not count that silence against the
// server. A consumer that never drains its Watcher stalls the Conn.
//
// Besides node events, a Watcher receives EventSession events with
// StateDisconnected and StateConnected: changes made while disconnected
// are not replayed to persistent watches, so a consumer that mirrors
// state must re-read after a reconnect.
type Watcher struct {
	c         *Conn
	path      string // as the caller gave it
	spath     string // server path
	recursive bool
	ch        chan Event
	// orphaned (under the Conn's watches.mu) marks a Watcher whose AddWatch
	// returned an error to its caller: nobody will drain it, so it must
	// never be registered (or must be unregistered) — otherwise a full
	// channel would stall the connection's reader.
	orphaned bool

	mu       sync.Mutex
	sending  bool // the reader is blocked sending to ch
	closeReq bool
	closed   bool
	stop     chan struct{}
	err      error
}

// Events is the watcher's channel. It is closed when the watch ends
// (Remove, RemoveWatches, session expiry, Close); Err then says why.
func (w *Watcher) Events() <-chan Event { return w.ch }

// Path is the watched path.
func (w *Watcher) Path() string { return w.path }

// Recursive reports whether the watch covers descendants.
func (w *Watcher) Recursive() bool { return w.recursive }

// Err is nil while the watch is active, then ErrWatchRemoved,
// ErrSessionExpired or ErrClosed.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// deliver sends ev to the watcher, blocking while its channel is full
// (see Watcher) unless the watcher ends or the Conn closes. l is the
// reader's link (nil on the session goroutine), flagged as stalled while
// blocked.
func (w *Watcher) deliver(c *Conn, ev Event, l *link) {
	w.mu.Lock()
	if w.closeReq {
		w.mu.Unlock()
		return
	}
	select {
	case w.ch <- ev:
		w.mu.Unlock()
		return
	default:
	}
	w.sending = true
	w.mu.Unlock()
	if l != nil {
		l.stalled.Store(true)
	}
	select {
	case w.ch <- ev:
	case <-w.stop:
	case <-c.ctx.Done():
	}
	if l != nil {
		l.stalled.Store(false)
	}
	w.mu.Lock()
	w.sending = false
	if w.closeReq && !w.closed {
		w.closed = true
		close(w.ch)
	}
	w.mu.Unlock()
}

// end stops the watcher and closes its channel, at once or, if a delivery
// is blocked on it, as soon as that delivery gives up.
func (w *Watcher) end(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closeReq {
		return
	}
	w.closeReq = true
	w.err = err
	close(w.stop)
	if !w.sending {
		w.closed = true
		close(w.ch)
	}
}

// Remove ends the watch. If it was the last watcher of its kind on the
// path, the server's watch is removed too (removeWatches); otherwise the
// removal is local. The channel is closed either way.
func (w *Watcher) Remove(ctx context.Context) error {
	c := w.c
	g := &c.watches
	g.mu.Lock()
	m := g.persistent
	if w.recursive {
		m = g.recursive
	}
	ws := m[w.spath]
	i := indexOf(ws, w)
	if i < 0 {
		g.mu.Unlock()
		return nil // already ended
	}
	ws = append(ws[:i:i], ws[i+1:]...)
	if len(ws) == 0 {
		delete(m, w.spath)
	} else {
		m[w.spath] = ws
	}
	g.mu.Unlock()
	w.end(ErrWatchRemoved)
	if len(ws) > 0 {
		return nil
	}
	t := WatchPersistent
	if w.recursive {
		t = WatchPersistentRecursive
	}
	r := c.newRequest(wire.OpRemoveWatches)
	r.body = &wire.RemoveWatchesRequest{Path: w.spath, Type: int32(t)}
	r.after = func(c *Conn, r *request) { c.watches.readdIfWatched(c, w.spath, w.recursive) }
	_, err := call(ctx, c, r, convErr)
	if errors.Is(err, wire.CodeNoWatcher) {
		err = nil // the server had already dropped it (e.g. a reconnect in between)
	}
	return err
}

// readdIfWatched re-adds the server watch if another Watcher registered
// for the same path and mode while the removal was in flight (its addWatch
// reached the server before the removeWatches that undid it).
func (g *registry) readdIfWatched(c *Conn, spath string, recursive bool) {
	g.mu.Lock()
	m := g.persistent
	if recursive {
		m = g.recursive
	}
	n := len(m[spath])
	g.mu.Unlock()
	if n == 0 {
		return
	}
	mode := wire.AddWatchPersistent
	if recursive {
		mode = wire.AddWatchPersistentRecursive
	}
	r := c.internalRequest(wire.OpAddWatch, nil)
	r.body = &wire.AddWatchRequest{Path: spath, Mode: mode}
	if err := c.submit(nil, r); err != nil {
		c.recycle(r)
	}
}

func indexOf(ws []*Watcher, w *Watcher) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}
