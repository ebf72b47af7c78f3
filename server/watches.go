package server

import (
	"strings"
	"sync"

	"github.com/corral-db/corral/wire"
)

// Watch modes a connection can hold on one path in one table. ZooKeeper
// 3.9 keeps them as a per-(watcher, path) bit set, so a standard watch and
// a persistent one on the same path coexist and fire once together.
const (
	modeStandard  uint8 = 1
	modePersist   uint8 = 2
	modeRecursive uint8 = 4
)

// watchTable is one of ZooKeeper's two WatchManagers: data watches (set by
// getData and exists, fired by create, delete, setData) or child watches
// (set by getChildren, fired by delete and by a child's create or delete).
type watchTable struct {
	paths map[string]*watchSet
	// recursive counts registrations with modeRecursive, so triggering
	// skips the walk over ancestors when there are none.
	recursive int
}

// watchManager holds both tables. Registration happens under the tree's
// read lock (many readers at once), triggering under its write lock; its
// own mutex orders the two.
type watchManager struct {
	mu    sync.Mutex
	data  watchTable
	child watchTable
	// byConn indexes every path a connection watches in either table, so
	// closing a connection drops its watches without a scan.
	byConn map[*conn]map[string]struct{}
	// gone is scratch for connections whose standard watch a trigger
	// consumed.
	gone []*conn
}

func newWatchManager() *watchManager {
	return &watchManager{
		data:   watchTable{paths: map[string]*watchSet{}},
		child:  watchTable{paths: map[string]*watchSet{}},
		byConn: map[*conn]map[string]struct{}{},
	}
}

func (w *watchManager) index(path string, c *conn) {
	m := w.byConn[c]
	if m == nil {
		m = map[string]struct{}{}
		w.byConn[c] = m
	}
	m[path] = struct{}{}
}

// forget drops path from c's index once neither table holds c there.
func (w *watchManager) forget(path string, c *conn) {
	if w.data.get(path, c) != 0 || w.child.get(path, c) != 0 {
		return
	}
	if m := w.byConn[c]; m != nil {
		delete(m, path)
		if len(m) == 0 {
			delete(w.byConn, c)
		}
	}
}

// add sets mode bits of c on path. It returns the path string the table
// keeps, for the caller's index to share.
func (t *watchTable) add(path string, c *conn, mode uint8) string {
	ws := t.paths[path]
	if ws == nil {
		ws = &watchSet{path: path}
		t.paths[path] = ws
	}
	old := ws.get(c)
	if mode&modeRecursive != 0 && old&modeRecursive == 0 {
		t.recursive++
	}
	ws.set(c, old|mode)
	return ws.path
}

// get returns c's mode bits on path (0 if none).
func (t *watchTable) get(path string, c *conn) uint8 {
	if ws := t.paths[path]; ws != nil {
		return ws.get(c)
	}
	return 0
}

// clear removes the given mode bits of c on path; it reports whether any
// were set.
func (t *watchTable) clear(path string, c *conn, mode uint8) bool {
	ws := t.paths[path]
	if ws == nil {
		return false
	}
	old := ws.get(c)
	if old&mode == 0 {
		return false
	}
	if old&mode&modeRecursive != 0 {
		t.recursive--
	}
	ws.set(c, old&^mode)
	if ws.len() == 0 {
		delete(t.paths, path)
	}
	return true
}

func (t *watchTable) has(path string, c *conn, mode uint8) bool {
	return t.get(path, c)&mode != 0
}

// trigger collects the connections an event on path fires in this table,
// consuming standard watches: watchers on the path itself in any mode, and
// recursive watchers on its ancestors (WatchManager.triggerWatch).
func (t *watchTable) trigger(path string, fired map[*conn]struct{}, suppress map[*conn]struct{}, gone *[]*conn) {
	if ws := t.paths[path]; ws != nil {
		ws.each(func(c *conn, mode uint8) uint8 {
			if _, skip := suppress[c]; !skip {
				fired[c] = struct{}{}
			}
			if mode == modeStandard {
				*gone = append(*gone, c)
			}
			return mode &^ modeStandard
		})
		if ws.len() == 0 {
			delete(t.paths, path)
		}
	}
	if t.recursive == 0 {
		return
	}
	for p := path; p != "/"; {
		i := strings.LastIndexByte(p, '/')
		if i <= 0 {
			p = "/"
		} else {
			p = p[:i]
		}
		if ws := t.paths[p]; ws != nil {
			ws.each(func(c *conn, mode uint8) uint8 {
				if mode&modeRecursive != 0 {
					if _, skip := suppress[c]; !skip {
						fired[c] = struct{}{}
					}
				}
				return mode
			})
		}
	}
}

func (w *watchManager) addData(path string, c *conn) {
	w.mu.Lock()
	w.index(w.data.add(path, c, modeStandard), c)
	w.mu.Unlock()
}

func (w *watchManager) addChild(path string, c *conn) {
	w.mu.Lock()
	w.index(w.child.add(path, c, modeStandard), c)
	w.mu.Unlock()
}

// addPersistent registers addWatch's modes the way DataTree.addWatch does:
// persistent watches go in both tables, recursive ones in the data table.
func (w *watchManager) addPersistent(path string, c *conn, recursive bool) {
	w.mu.Lock()
	if recursive {
		path = w.data.add(path, c, modeRecursive)
	} else {
		path = w.data.add(path, c, modePersist)
		w.child.add(path, c, modePersist)
	}
	w.index(path, c)
	w.mu.Unlock()
}

// contains answers checkWatches.
func (w *watchManager) contains(path string, c *conn, typ int32) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch typ {
	case wire.WatcherChildren:
		return w.child.has(path, c, modeStandard)
	case wire.WatcherData:
		return w.data.has(path, c, modeStandard)
	case wire.WatcherAny:
		all := modeStandard | modePersist | modeRecursive
		return w.child.has(path, c, all) || w.data.has(path, c, all)
	case wire.WatcherPersistent:
		return w.child.has(path, c, modePersist) || w.data.has(path, c, modePersist)
	case wire.WatcherPersistentRecursive:
		return w.data.has(path, c, modeRecursive)
	}
	return false
}

// remove answers removeWatches (DataTree.removeWatch).
func (w *watchManager) remove(path string, c *conn, typ int32) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.forget(path, c)
	switch typ {
	case wire.WatcherChildren:
		return w.child.clear(path, c, modeStandard)
	case wire.WatcherData:
		return w.data.clear(path, c, modeStandard)
	case wire.WatcherAny:
		all := modeStandard | modePersist | modeRecursive
		a := w.child.clear(path, c, all)
		b := w.data.clear(path, c, all)
		return a || b
	case wire.WatcherPersistent:
		a := w.child.clear(path, c, modePersist)
		b := w.data.clear(path, c, modePersist)
		return a || b
	case wire.WatcherPersistentRecursive:
		a := w.child.clear(path, c, modeRecursive)
		b := w.data.clear(path, c, modeRecursive)
		return a || b
	}
	return false
}

// removeConn drops every watch of a closed connection. Watches belong to
// the connection, not the session (PROTOCOL §10).
func (w *watchManager) removeConn(c *conn) {
	w.mu.Lock()
	for p := range w.byConn[c] {
		w.data.clear(p, c, 0xff)
		w.child.clear(p, c, 0xff)
	}
	delete(w.byConn, c)
	w.mu.Unlock()
}

// fired is scratch space for one trigger, reused by applies (under applyMu).
type fired struct {
	data  map[*conn]struct{}
	child map[*conn]struct{}
}

func newFired() *fired {
	return &fired{data: map[*conn]struct{}{}, child: map[*conn]struct{}{}}
}

func (f *fired) reset() {
	clear(f.data)
	clear(f.child)
}

// trigger returns the connections to notify of an event, following
// DataTree: NodeCreated and NodeDataChanged fire data watches;
// NodeDeleted fires data then child watches (a connection in both gets one
// event); NodeChildrenChanged (on the parent) fires child watches.
func (w *watchManager) trigger(typ int32, path string, f *fired) {
	f.reset()
	w.mu.Lock()
	w.gone = w.gone[:0]
	switch typ {
	case wire.EventNodeCreated, wire.EventNodeDataChanged:
		w.data.trigger(path, f.data, nil, &w.gone)
	case wire.EventNodeDeleted:
		w.data.trigger(path, f.data, nil, &w.gone)
		w.child.trigger(path, f.child, f.data, &w.gone)
	case wire.EventNodeChildrenChanged:
		w.child.trigger(path, f.child, nil, &w.gone)
	}
	for _, c := range w.gone {
		w.forget(path, c)
	}
	w.mu.Unlock()
}

// stats for the wchs/wchc/wchp words and mntr: data/exist watches only, as
// ZooKeeper dumps only its dataWatches table.
func (w *watchManager) dataWatchesBySession() (bySession map[int64][]string, conns, paths, total int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	bySession = map[int64][]string{}
	seen := map[*conn]struct{}{}
	for p, ws := range w.data.paths {
		ws.each(func(c *conn, mode uint8) uint8 {
			bySession[c.sessionID()] = append(bySession[c.sessionID()], p)
			seen[c] = struct{}{}
			total++
			return mode
		})
	}
	return bySession, len(seen), len(w.data.paths), total
}

// count is the number of (path, connection) watch registrations in both
// tables, for mntr's zk_watch_count.
func (w *watchManager) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, ws := range w.data.paths {
		n += ws.len()
	}
	for _, ws := range w.child.paths {
		n += ws.len()
	}
	return n
}

// watchedPaths lists the paths with a watch in the data table and in the
// child table (a restore compares them before and after).
func (w *watchManager) watchedPaths() (data, child []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p := range w.data.paths {
		data = append(data, p)
	}
	for p := range w.child.paths {
		child = append(child, p)
	}
	return data, child
}
