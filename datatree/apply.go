package datatree

import (
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

// Event is a watch trigger produced by Apply. The server turns it into
// notifications for the watchers registered on Path.
type Event struct {
	Type int32 // wire.EventNode...
	Path string
	Zxid int64
	// ACL is the node's ACL when the event fired, for filtering delivery
	// by READ permission. It is shared; do not modify it.
	ACL []wire.ACL
}

// OpResult is the outcome of one op of a multi.
type OpResult struct {
	Type wire.Op // the op's type; wire.OpError for every op of a failed multi
	Err  wire.Code
	Path string
	Stat wire.Stat // after the op, for creates and setData
}

// Result is the outcome of Apply.
type Result struct {
	// Err is tx.Err for OpError, and the reason a transaction changed
	// nothing for the rest (normally CodeOK; NodeExists/NoNode only when
	// replaying over a fuzzy snapshot). Always CodeOK for OpMulti: per-op
	// codes are in Multi, and ZooKeeper replies to a failed multi with
	// header err 0.
	Err  wire.Code
	Path string    // the path the transaction named (for creates, the created path)
	Stat wire.Stat // the node's stat after create/setData/setACL
	// Multi has one entry per op of an OpMulti. Apply reuses its backing
	// array (r.Multi[:0]).
	Multi []OpResult
	// Events are appended in order. Apply does not truncate them: the
	// caller resets the slice (r.Events = r.Events[:0]) between calls.
	Events []Event
}

// Apply applies one committed transaction, as ZooKeeper's
// DataTree.processTxn, and records its outcome in r. It never fails as a
// whole: a transaction that does not fit the tree (possible only when
// replaying the log over a fuzzy snapshot) changes what it safely can and
// reports why in r.Err (see doc.go for the replay rules).
//
// A create or setData copies tx.Data into the tree's arena (arena.go), so
// tx.Data may be a slice of a larger record (a proposal, a committed
// entry) that the tree never keeps alive, and the caller may reuse it
// once Apply returns. ACL lists are interned (copied once per distinct
// list).
func (t *Tree) Apply(h *txn.Header, tx *txn.Txn, r *Result) {
	r.Err = wire.CodeOK
	r.Path = ""
	r.Stat = wire.Stat{}
	r.Multi = r.Multi[:0]
	if tx.Type == wire.OpMulti {
		t.applyMulti(h, tx, r)
	} else {
		r.Path = tx.Path
		r.Err = t.applyOne(h, tx, &r.Stat, &r.Events, false)
	}
	// ZooKeeper only moves lastProcessedZxid forward; replay is in order,
	// so this is "set to h.Zxid" in practice.
	if h.Zxid > t.lastZxid {
		t.lastZxid = h.Zxid
	}
}

func (t *Tree) applyMulti(h *txn.Header, tx *txn.Txn, r *Result) {
	// A failed multi is logged with every op an OpError. Like ZooKeeper,
	// treat any error op as marking the whole multi failed: ops before the
	// first error report 0, later non-error ops RuntimeInconsistency, and
	// nothing is applied.
	failed := false
	for i := range tx.Ops {
		if tx.Ops[i].Type == wire.OpError {
			failed = true
			break
		}
	}
	postFailed := false
	for i := range tx.Ops {
		op := &tx.Ops[i]
		var res OpResult
		switch {
		case failed && op.Type == wire.OpError:
			res = OpResult{Type: wire.OpError, Err: op.Err}
			postFailed = true
		case failed:
			res = OpResult{Type: wire.OpError}
			if postFailed {
				res.Err = wire.CodeRuntimeInconsistency
			}
		default:
			res.Type = op.Type
			res.Path = op.Path
			res.Err = t.applyOne(h, op, &res.Stat, &r.Events, true)
		}
		r.Multi = append(r.Multi, res)
	}
}

func (t *Tree) applyOne(h *txn.Header, tx *txn.Txn, st *wire.Stat, ev *[]Event, inMulti bool) wire.Code {
	switch tx.Type {
	case wire.OpCreate, wire.OpCreate2:
		owner := int64(0)
		if tx.Ephemeral {
			owner = h.SessionID
		}
		return t.create(h, tx, owner, st, ev)
	case wire.OpCreateContainer:
		return t.create(h, tx, ContainerOwner, st, ev)
	case wire.OpCreateTTL:
		return t.create(h, tx, TTLOwner(tx.TTL), st, ev)
	case wire.OpDelete, wire.OpDeleteContainer:
		return t.delete(tx.Path, h.Zxid, ev)
	case wire.OpSetData, wire.OpReconfig:
		return t.setData(h, tx, st, ev)
	case wire.OpCheck:
		return wire.CodeOK
	case wire.OpError:
		return tx.Err
	}
	if inMulti {
		// ZooKeeper refuses any other op type inside a multi.
		return wire.CodeUnimplemented
	}
	switch tx.Type {
	case wire.OpSetACL:
		return t.setACL(tx, st)
	case wire.OpCreateSession:
		t.setSession(h.SessionID, tx.Timeout)
		return wire.CodeOK
	case wire.OpCloseSession:
		t.closeSession(h.SessionID, h.Zxid, tx.Paths, ev)
		return wire.CodeOK
	}
	return wire.CodeUnimplemented
}

// plausiblePath guards the tree's invariants against a transaction the
// request pipeline should never have produced: an absolute, non-root path
// without a trailing or doubled '/'.
func plausiblePath(p string) bool {
	if len(p) < 2 || p[0] != '/' || p[len(p)-1] == '/' {
		return false
	}
	for i := 1; i < len(p); i++ {
		if p[i] == '/' && p[i-1] == '/' {
			return false
		}
	}
	return true
}

// create is DataTree.createNode plus processTxn's NodeExists handling.
func (t *Tree) create(h *txn.Header, tx *txn.Txn, owner int64, st *wire.Stat, ev *[]Event) wire.Code {
	path := tx.Path
	if !plausiblePath(path) {
		if path == RootPath {
			return wire.CodeNodeExists
		}
		return wire.CodeBadArguments
	}
	parentPath := ParentPath(path)
	parent := t.lookupWrite(parentPath)
	if parent == nil {
		return wire.CodeNoNode
	}
	name := BaseName(path)
	acl := t.acls.intern(tx.ACL)
	existing := parent.child(name)
	if existing == nil {
		existing = t.unpackChild(parent, name)
	}
	if existing != nil {
		// Replay over a fuzzy snapshot. ZooKeeper hands the new ACL to the
		// existing node and, so that a node deleted and re-created inside
		// the fuzzy window leaves its parent right, still raises the
		// parent's counter and pzxid if the txn's counter is higher. (It
		// does the latter only for OpCreate; the reason applies to every
		// create type, so we do it for all.)
		t.nodeSum -= t.term(existing, path)
		t.acls.release(t.acls.entry(existing.acl))
		existing.acl = acl.id
		t.nodeSum += t.term(existing, path)
		t.raiseParent(parent, parentPath, tx.ParentCVersion, h.Zxid)
		return wire.CodeNodeExists
	}
	t.raiseParent(parent, parentPath, tx.ParentCVersion, h.Zxid)

	z := h.Zxid
	if t.packRoot != "" && owner == 0 && t.packCreate(parent, parentPath, path, acl, tx.Data, z, h.Time) {
		entryStat(st, z, h.Time, len(tx.Data))
		*ev = append(*ev,
			Event{Type: wire.EventNodeCreated, Path: path, Zxid: z, ACL: acl.acl},
			Event{Type: wire.EventNodeChildrenChanged, Path: parentPath, Zxid: z, ACL: t.ACL(parent)})
		return wire.CodeOK
	}
	n := t.newNode(name, acl, tx.Data,
		PStat{Czxid: z, Mzxid: z, Ctime: h.Time, Mtime: h.Time, EphemeralOwner: owner, Pzxid: z})
	parent.addChild(&t.nodes, n)
	t.index(path, n)
	t.quotaCreatedSize(path, n.dataSize())
	n.Stat(st)
	*ev = append(*ev,
		Event{Type: wire.EventNodeCreated, Path: path, Zxid: z, ACL: acl.acl},
		Event{Type: wire.EventNodeChildrenChanged, Path: parentPath, Zxid: z, ACL: t.ACL(parent)})
	return wire.CodeOK
}

// raiseParent sets the parent's create counter to cversion (-1: one more
// than now) and its pzxid to zxid, but only if that raises the counter, so
// replaying an older create never moves them back.
func (t *Tree) raiseParent(parent *Node, parentPath string, cversion int32, zxid int64) {
	if cversion == -1 {
		cversion = parent.cversion() + 1
	}
	if cversion <= parent.cversion() {
		return
	}
	t.nodeSum -= t.term(parent, parentPath)
	e := parent.extension()
	e.cversion = cversion
	e.pzxid = zxid
	t.nodeSum += t.term(parent, parentPath)
}

// delete is DataTree.deleteNode. The parent's pzxid moves forward even if
// the node is already gone, and its create counter does not change (the
// cversion clients see rises by one because a child disappeared).
func (t *Tree) delete(path string, zxid int64, ev *[]Event) wire.Code {
	if !plausiblePath(path) {
		return wire.CodeBadArguments
	}
	parentPath := ParentPath(path)
	parent := t.lookup(parentPath)
	if parent == nil {
		return wire.CodeNoNode
	}
	if zxid > parent.pzxid() {
		t.nodeSum -= t.term(parent, parentPath)
		parent.setPzxid(zxid)
		t.nodeSum += t.term(parent, parentPath)
	}

	n := parent.child(BaseName(path))
	if n == nil {
		n = t.unpackChild(parent, BaseName(path))
	}
	if n == nil {
		return wire.CodeNoNode
	}
	parent.removeChild(n)
	acl := t.ACL(n)
	if n.numChildren() > 0 {
		// Only in replay: the snapshot caught children created after this
		// delete (in a later incarnation of the node). Later txns in the log
		// re-create them; leaving them would orphan them.
		t.removeDescendants(path, n)
	}
	t.quotaDeleted(path, n)
	t.remove(path, n)
	*ev = append(*ev,
		Event{Type: wire.EventNodeDeleted, Path: path, Zxid: zxid, ACL: acl},
		Event{Type: wire.EventNodeChildrenChanged, Path: parentPath, Zxid: zxid, ACL: t.ACL(parent)})
	return wire.CodeOK
}

// removeDescendants removes and frees every node below n (whose path is
// path). n's child table is left listing freed slots: the caller frees n
// next.
func (t *Tree) removeDescendants(path string, n *Node) {
	t.dropRun(path, n)
	n.eachChild(func(c *Node) {
		cp := path + "/" + c.baseName()
		t.removeDescendants(cp, c)
		t.remove(cp, c)
	})
}

func (t *Tree) setData(h *txn.Header, tx *txn.Txn, st *wire.Stat, ev *[]Event) wire.Code {
	n := t.lookupWrite(tx.Path)
	if n == nil {
		return wire.CodeNoNode
	}
	grow := int64(len(tx.Data) - n.dataSize())
	t.quotaDataChanged(tx.Path, grow)
	t.nodeSum -= t.term(n, tx.Path)
	t.dataSize += grow
	t.recs.put(n, n.baseName(), tx.Data, tx.Version, h.Zxid, h.Time)
	t.nodeSum += t.term(n, tx.Path)
	n.Stat(st)
	*ev = append(*ev, Event{Type: wire.EventNodeDataChanged, Path: tx.Path, Zxid: h.Zxid, ACL: t.ACL(n)})
	return wire.CodeOK
}

func (t *Tree) setACL(tx *txn.Txn, st *wire.Stat) wire.Code {
	n := t.lookupWrite(tx.Path)
	if n == nil {
		return wire.CodeNoNode
	}
	// Intern before releasing so that re-setting the same list does not
	// drop it from the cache and copy it again.
	acl := t.acls.intern(tx.ACL)
	t.nodeSum -= t.term(n, tx.Path)
	t.acls.release(t.acls.entry(n.acl))
	n.acl = acl.id
	n.setAversion(tx.Version)
	t.nodeSum += t.term(n, tx.Path)
	n.Stat(st)
	return wire.CodeOK
}

// closeSession is DataTree.killSession: it deletes the paths the txn
// names, in order, whoever owns them now (replay is in log order, so what
// is there is what the session's close must remove), then any ephemeral the
// session still owns here, in path order so every replica emits the same
// events; and it forgets the session. Deleting a named path that is already
// gone still advances its parent's pzxid, which is why the leader names
// them.
func (t *Tree) closeSession(session, zxid int64, named []string, ev *[]Event) {
	for _, p := range named {
		t.delete(p, zxid, ev)
	}
	paths := t.appendEphemerals(t.scratch[:0], session)
	for _, p := range paths {
		t.delete(p, zxid, ev)
	}
	clear(paths)
	t.scratch = paths[:0]
	delete(t.ephemerals, session)
	t.dropSession(session)
}
