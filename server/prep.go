package server

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

// submit decides a write and hands it to the log (submitBatch).
func (s *Server) submit(r *request) bool {
	one := [1]*request{r}
	return s.submitBatch(one[:])
}

// submitBatch decides writes, in order, and hands them to the replica
// group (replica.submitBatch): on the leader, a standalone server
// included, prep runs on the submitting goroutine (a connection's reader,
// with the writes it found in its read buffer; the expirer; the reaper)
// under prepMu and the driver's lock, which makes zxid order and log
// order one. It returns false when the server is stopping; writes not
// submitted by then stay in their connection's queue and are dropped
// with it.
func (s *Server) submitBatch(rs []*request) bool {
	return s.rep.submitBatch(rs)
}

// prep turns a write request into its transaction. A write that fails
// validation still becomes a transaction, an error one, and consumes a
// zxid, exactly as in ZooKeeper (PROTOCOL §4).
func (s *Server) prep(r *request, zxid int64) {
	r.hdr = txn.Header{
		SessionID: r.sid,
		Cxid:      r.xid,
		Zxid:      zxid,
		Time:      s.opts.Now().UnixMilli(),
		Type:      r.op,
	}
	r.tx = txn.Txn{Type: r.op}
	if r.rec == nil && r.op != wire.OpCreateSession && r.op != wire.OpCloseSession {
		// Only a forwarded request whose body did not decode gets here.
		r.hdr.Type = wire.OpError
		r.tx = txn.Txn{Type: wire.OpError, Err: wire.CodeMarshallingError}
		return
	}
	if r.op == wire.OpMulti {
		s.prepMulti(r)
		return
	}
	if err := s.prepOne(r, r.op, r.rec, &r.tx); err != nil {
		r.hdr.Type = wire.OpError
		r.tx = txn.Txn{Type: wire.OpError, Err: wire.CodeOf(err)}
	}
}

// checkSession fails writes of sessions that expired or are closing, and
// writes that come from anywhere but where the session is held now
// (ZooKeeper's SessionTrackerImpl.checkSession(sessionId, owner); see
// sessionmove.go): from a member other than the one that owns it (a
// learner that forwarded it for the client's old connection, or the
// leader's own old connection after the client moved to a learner), or
// from a connection of this server that no longer holds it. An unknown
// owner (a new leader) is adopted. Internal requests (sid 0) pass.
func (s *Server) checkSession(r *request) error {
	if r.sid == 0 || r.op == wire.OpCreateSession {
		return nil
	}
	sess := s.sessions.get(r.sid)
	if sess == nil || sess.closing.Load() {
		return wire.CodeSessionExpired
	}
	m := s.memberOf(r)
	if cur := sess.member.Load(); cur == 0 {
		sess.member.Store(m)
	} else if cur != m {
		return wire.CodeSessionMoved
	}
	if r.c != nil && s.movedFrom(sess, r.c) {
		return wire.CodeSessionMoved
	}
	return nil
}

// movedFrom reports whether sess is held by another connection of this
// server than c.
func (s *Server) movedFrom(sess *session, c *conn) bool {
	owner := sess.owner.Load()
	return owner != nil && owner != c
}

// memberOf is the member a request on the leader comes from: the learner
// that forwarded it, or this server (ZooKeeper's Request.getOwner: the
// LearnerHandler, or ServerCnxn.me).
func (s *Server) memberOf(r *request) uint64 {
	if r.from != 0 {
		return r.from
	}
	return s.rep.id
}

// prepOne validates one operation and fills tx; on success it records the
// operation's pending changes.
func (s *Server) prepOne(r *request, op wire.Op, rec wire.Record, tx *txn.Txn) error {
	tx.Type = op
	switch op {
	case wire.OpCreateSession:
		tx.Timeout = r.timeout
		// Known from now on, as ZooKeeper's leader adds it in prep: a
		// learner answers the client when it applies the creation, and
		// the client's first request can reach the leader before the
		// leader has applied it.
		// Owned by the member the client connected to
		// (PrepRequestProcessor: setOwner(sessionId, request.getOwner())).
		sess := s.sessions.add(r.sid, r.timeout)
		sess.member.Store(s.memberOf(r))
		return nil
	case wire.OpCloseSession:
		return s.prepCloseSession(r)
	case wire.OpDeleteContainer:
		return s.prepDelete(r, rec.(*wire.PathRequest).Path, -1, true, tx)
	}
	if err := s.checkSession(r); err != nil {
		return err
	}
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer:
		return s.prepCreate(r, op, rec.(*wire.CreateRequest), -1, tx)
	case wire.OpCreateTTL:
		cr := rec.(*wire.CreateTTLRequest)
		return s.prepCreate(r, op, &cr.CreateRequest, cr.TTL, tx)
	case wire.OpDelete:
		dr := rec.(*wire.DeleteRequest)
		return s.prepDelete(r, dr.Path, dr.Version, false, tx)
	case wire.OpSetData:
		return s.prepSetData(r, rec.(*wire.SetDataRequest), tx)
	case wire.OpSetACL:
		return s.prepSetACL(r, rec.(*wire.SetACLRequest), tx)
	case wire.OpCheck:
		return s.prepCheck(r, rec.(*wire.CheckVersionRequest), tx)
	case wire.OpReconfig:
		return s.prepReconfig(r, rec.(*wire.ReconfigRequest), tx)
	}
	return wire.CodeUnimplemented
}

// parentOf splits a path at its last slash (PrepRequestProcessor
// validatePathForCreate / getParentPathAndValidate: only the slash and
// NUL are checked here; the full validation comes later).
func parentOf(path string) (string, error) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || strings.IndexByte(path, 0) >= 0 {
		return "", wire.CodeBadArguments
	}
	if i == 0 {
		return "/", nil
	}
	return path[:i], nil
}

func isReserved(path string) bool {
	switch path {
	case "/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config":
		return true
	}
	return false
}

// EphemeralOwner markers (ZooKeeper's EphemeralType).
const (
	containerOwner = math.MinInt64
	ttlOwnerMask   = int64(-72057594037927936) // 0xFF00000000000000
	maxTTL         = 1<<40 - 1
)

// isNormalEphemeral tells a session-owned ephemeral from the container and
// TTL markers, which are stored in the same field.
func (s *Server) isNormalEphemeral(owner int64) bool {
	if owner == 0 || owner == containerOwner {
		return false
	}
	if s.opts.ExtendedTypesEnabled && uint64(owner)>>56 == 0xFF {
		return false
	}
	return true
}

func (s *Server) prepCreate(r *request, op wire.Op, cr *wire.CreateRequest, ttl int64, tx *txn.Txn) error {
	mode := cr.Flags
	if mode < wire.ModePersistent || mode > wire.ModePersistentSequentialWithTTL {
		return wire.CodeBadArguments
	}
	isTTL := mode == wire.ModePersistentWithTTL || mode == wire.ModePersistentSequentialWithTTL
	sequential := mode == wire.ModePersistentSequential || mode == wire.ModeEphemeralSequential || mode == wire.ModePersistentSequentialWithTTL
	ephemeral := mode == wire.ModeEphemeral || mode == wire.ModeEphemeralSequential
	container := mode == wire.ModeContainer
	// validateCreateRequest
	if isTTL && !s.opts.ExtendedTypesEnabled {
		return wire.CodeUnimplemented
	}
	if isTTL {
		if ttl <= 0 || ttl > maxTTL {
			return wire.CodeBadArguments
		}
	} else if ttl >= 0 {
		return wire.CodeBadArguments
	}
	path := cr.Path
	parent, err := parentOf(path)
	if err != nil {
		return err
	}
	acl, err := datatree.FixupACL(cr.ACL, r.auth)
	if err != nil {
		return err
	}
	prec, err := s.permitted(r, parent, wire.PermCreate)
	if err != nil {
		return err
	}
	if sequential {
		path += datatree.SequentialSuffix(prec.stat.CVersion)
	}
	if err := datatree.ValidatePath(path); err != nil {
		return err
	}
	if _, exists := s.record(path); exists {
		return wire.CodeNodeExists
	}
	if err := s.store.rl.checkClientData(path, cr.Data); err != nil {
		return err
	}
	if s.isNormalEphemeral(prec.stat.EphemeralOwner) {
		return wire.CodeNoChildrenForEphemerals
	}
	plain := !ephemeral && !container && !isTTL && !sequential
	if err := s.prepLogCreate(r, path, cr.Data, plain, &prec); err != nil {
		return err
	}
	newCversion := prec.stat.CVersion + 1
	if err := s.checkQuota(path, int64(len(cr.Data)), 1); err != nil {
		return err
	}

	var owner int64
	switch {
	case container:
		owner = containerOwner
	case isTTL:
		owner = ttlOwnerMask | ttl
	case ephemeral:
		owner = r.sid
	}
	// The txn type follows the opcode, as ZooKeeper's does: a create (not
	// createContainer) with container flags makes a plain node there too.
	switch op {
	case wire.OpCreateContainer:
		tx.Type = wire.OpCreateContainer
		if !container {
			owner = containerOwner
		}
	case wire.OpCreateTTL:
		tx.Type = wire.OpCreateTTL
	default:
		tx.Type = wire.OpCreate
		if !ephemeral {
			owner = 0
		}
	}
	if op == wire.OpCreate2 {
		tx.Type = wire.OpCreate2
	}
	tx.Path = path
	tx.Data = cr.Data
	tx.ACL = acl
	tx.Ephemeral = ephemeral && tx.Type != wire.OpCreateContainer && tx.Type != wire.OpCreateTTL
	tx.ParentCVersion = newCversion
	tx.TTL = ttl

	zxid := r.hdr.Zxid
	prec.stat.CVersion = newCversion
	prec.stat.Pzxid = zxid
	prec.numChildren++
	s.put(r, parent, prec)
	nc := change{
		exists: true,
		stat: datatree.PStat{
			Czxid: zxid, Mzxid: zxid, Pzxid: zxid,
			Ctime: r.hdr.Time, Mtime: r.hdr.Time,
			EphemeralOwner: owner,
		},
		acl: acl,
	}
	if s.store.rl != nil && s.store.rl.logPath(path) {
		nc.data = bytes.Clone(cr.Data)
	}
	s.put(r, path, nc)
	return nil
}

func (s *Server) prepDelete(r *request, path string, version int32, isContainer bool, tx *txn.Txn) error {
	parent, err := parentOf(path)
	if err != nil || isReserved(path) {
		return wire.CodeBadArguments
	}
	var prec, nrec change
	var ok bool
	if isContainer {
		if nrec, ok = s.record(path); !ok {
			return wire.CodeNoNode
		}
		if nrec.numChildren > 0 {
			return wire.CodeNotEmpty
		}
		if s.isNormalEphemeral(nrec.stat.EphemeralOwner) {
			return wire.CodeBadVersion
		}
		if prec, ok = s.record(parent); !ok {
			return wire.CodeNoNode
		}
		tx.Type = wire.OpDeleteContainer
	} else {
		if prec, err = s.permitted(r, parent, wire.PermDelete); err != nil {
			return err
		}
		if nrec, ok = s.record(path); !ok {
			return wire.CodeNoNode
		}
		if version != -1 && version != nrec.stat.Version {
			return wire.CodeBadVersion
		}
		if nrec.numChildren > 0 {
			return wire.CodeNotEmpty
		}
		if err := s.prepLogDelete(path, &prec); err != nil {
			return err
		}
		tx.Type = wire.OpDelete
	}
	tx.Path = path
	prec.numChildren--
	prec.stat.Pzxid = r.hdr.Zxid
	s.put(r, parent, prec)
	s.put(r, path, change{})
	return nil
}

func (s *Server) prepSetData(r *request, sr *wire.SetDataRequest, tx *txn.Txn) error {
	if err := datatree.ValidatePath(sr.Path); err != nil {
		return err
	}
	rec, err := s.permitted(r, sr.Path, wire.PermWrite)
	if err != nil {
		return err
	}
	if err := s.checkQuotaSetData(sr.Path, len(sr.Data)); err != nil {
		return err
	}
	if err := s.store.rl.checkClientData(sr.Path, sr.Data); err != nil {
		return err
	}
	if sr.Version != -1 && sr.Version != rec.stat.Version {
		return wire.CodeBadVersion
	}
	if err := s.prepLogSetData(r, sr.Path, sr.Data, &rec); err != nil {
		return err
	}
	newVersion := rec.stat.Version + 1
	tx.Type = wire.OpSetData
	tx.Path = sr.Path
	tx.Data = sr.Data
	tx.Version = newVersion
	rec.stat.Version = newVersion
	rec.stat.Mtime = r.hdr.Time
	rec.stat.Mzxid = r.hdr.Zxid
	s.put(r, sr.Path, rec)
	return nil
}

func (s *Server) prepSetACL(r *request, sr *wire.SetACLRequest, tx *txn.Txn) error {
	if err := datatree.ValidatePath(sr.Path); err != nil {
		return err
	}
	acl, err := datatree.FixupACL(sr.ACL, r.auth)
	if err != nil {
		return err
	}
	rec, err := s.permitted(r, sr.Path, wire.PermAdmin)
	if err != nil {
		return err
	}
	if sr.Version != -1 && sr.Version != rec.stat.Aversion {
		return wire.CodeBadVersion
	}
	newVersion := rec.stat.Aversion + 1
	tx.Type = wire.OpSetACL
	tx.Path = sr.Path
	tx.ACL = acl
	tx.Version = newVersion
	rec.stat.Aversion = newVersion
	rec.acl = acl
	s.put(r, sr.Path, rec)
	return nil
}

func (s *Server) prepCheck(r *request, cr *wire.CheckVersionRequest, tx *txn.Txn) error {
	if err := datatree.ValidatePath(cr.Path); err != nil {
		return err
	}
	rec, err := s.permitted(r, cr.Path, wire.PermRead)
	if err != nil {
		return err
	}
	if cr.Version != -1 && cr.Version != rec.stat.Version {
		return wire.CodeBadVersion
	}
	tx.Type = wire.OpCheck
	tx.Path = cr.Path
	tx.Version = rec.stat.Version + 1
	return nil
}

// prepCloseSession marks the session's ephemerals deleted in the pending
// table, so writes behind it see them gone. The tree deletes them when
// the transaction is applied.
func (s *Server) prepCloseSession(r *request) error {
	if sess := s.sessions.get(r.sid); sess != nil {
		sess.closing.Store(true)
	}
	s.mu.RLock()
	eph := s.tree.Ephemerals(r.sid)
	s.mu.RUnlock()
	set := make(map[string]struct{}, len(eph))
	for _, p := range eph {
		set[p] = struct{}{}
	}
	s.pending.mu.Lock()
	for p, c := range s.pending.m {
		if !c.exists {
			delete(set, p)
		} else if c.stat.EphemeralOwner == r.sid {
			set[p] = struct{}{}
		}
	}
	s.pending.mu.Unlock()
	paths := make([]string, 0, len(set))
	for p := range set {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if parent, err := parentOf(p); err == nil {
			if prec, ok := s.record(parent); ok {
				prec.numChildren--
				prec.stat.Pzxid = r.hdr.Zxid
				s.put(r, parent, prec)
			}
		}
		s.put(r, p, change{})
	}
	// Naming the paths (ZooKeeper's CloseSessionTxn.paths2Delete) keeps
	// replay over a fuzzy snapshot exact: see datatree's replay rules.
	r.tx.Type = wire.OpCloseSession
	r.tx.Paths = paths
	return nil
}

// prepMulti decides every op of a multi with one zxid; if one fails, none
// applies: the transaction becomes a multi of error results (ops before
// the failure 0, the failure its code, the rest RuntimeInconsistency) and
// the pending records it added are rolled back.
func (s *Server) prepMulti(r *request) {
	m := r.rec.(*wire.MultiRequest)
	paths := make([]string, 0, 2*len(m.Ops))
	for i := range m.Ops {
		p := m.Ops[i].Path()
		paths = append(paths, p)
		if parent, err := parentOf(p); err == nil {
			paths = append(paths, parent)
		}
	}
	saved := s.snapshotPending(paths)
	ops := make([]txn.Txn, len(m.Ops))
	var failed error
	failedAt := -1
	if err := s.checkSession(r); err != nil {
		failed, failedAt = err, 0
	}
	for i := range m.Ops {
		if failed != nil {
			break
		}
		op := &m.Ops[i]
		var rec wire.Record
		switch op.Type {
		case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer:
			rec = &op.Create.CreateRequest
		case wire.OpCreateTTL:
			rec = &op.Create
		case wire.OpDelete:
			rec = &op.Delete
		case wire.OpSetData:
			rec = &op.SetData
		case wire.OpCheck:
			rec = &op.Check
		}
		eff := op.EffectiveType()
		if eff == wire.OpCreate && op.Type == wire.OpCreate2 {
			// Observed on ZooKeeper 3.9.3: a create2 in a multi keeps its
			// type and is answered with path and stat.
			eff = wire.OpCreate2
		}
		if eff == wire.OpCreateTTL && op.Type != wire.OpCreateTTL {
			// A TTL mode sent as a plain create carries no ttl.
			tl := wire.CreateTTLRequest{CreateRequest: op.Create.CreateRequest, TTL: -1}
			rec = &tl
		} else if eff != wire.OpCreateTTL && op.Type == wire.OpCreateTTL {
			rec = &op.Create.CreateRequest
		}
		if err := s.prepOne(r, eff, rec, &ops[i]); err != nil {
			failed, failedAt = err, i
		}
	}
	if failed == nil {
		if i := s.checkLogMulti(r, m); i >= 0 {
			failed, failedAt = wire.CodeBadArguments, i
		}
	}
	if failed == nil {
		r.tx = txn.Txn{Type: wire.OpMulti, Ops: ops}
		return
	}
	s.rollback(r, saved)
	code := wire.CodeOf(failed)
	if errors.Is(failed, wire.CodeSessionExpired) && len(m.Ops) == 0 {
		r.hdr.Type = wire.OpError
		r.tx = txn.Txn{Type: wire.OpError, Err: code}
		return
	}
	for i := range ops {
		ops[i] = txn.Txn{Type: wire.OpError}
		switch {
		case i < failedAt:
			ops[i].Err = wire.CodeOK
		case i == failedAt:
			ops[i].Err = code
		default:
			ops[i].Err = wire.CodeRuntimeInconsistency
		}
	}
	r.tx = txn.Txn{Type: wire.OpMulti, Ops: ops}
}
