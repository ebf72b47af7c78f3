package server

import (
	"strings"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/wire"
)

// execRead answers a request that does not change the tree, on the
// calling goroutine (the connection's reader), under the tree's read lock.
// Watches are registered under the same lock as the read itself, so no
// change can slip between them.
func (s *Server) execRead(r *request) {
	s.mu.RLock()
	zxid, code, body := s.readLocked(r)
	s.mu.RUnlock()
	s.sendRead(r, zxid, code, body)
}

// sendRead writes a read's reply.
func (s *Server) sendRead(r *request, zxid int64, code wire.Code, body wire.Record) {
	c := r.c
	c.reply(r.xid, zxid, code, body)
	if r.kind == kindUnknown {
		// ZooKeeper answers -6 and then drops the connection (its
		// UnimplementedRequestProcessor closes it); the session lives on.
		c.out.finish()
	}
	s.recordLatency(c, r, zxid)
}

// readLocked computes a read's reply; the caller holds the tree's lock
// (read or write).
func (s *Server) readLocked(r *request) (zxid int64, code wire.Code, body wire.Record) {
	c := r.c
	switch r.kind {
	case kindUnknown:
		// ZooKeeper answers an unknown opcode with zxid -1 and -6.
		return -1, wire.CodeUnimplemented, nil
	case kindBadBody:
		return s.tree.LastZxid(), wire.CodeMarshallingError, nil
	}
	zxid = s.tree.LastZxid()
	switch r.op {
	case wire.OpPing:
		// Header only; the ping's xid (-2) is echoed.
	case wire.OpExists:
		body, code = s.readExists(c, r.rec.(*wire.PathWatchRequest))
	case wire.OpGetData:
		body, code = s.readGetData(c, r.rec.(*wire.PathWatchRequest))
	case wire.OpGetChildren, wire.OpGetChildren2:
		body, code = s.readGetChildren(c, r.op, r.rec.(*wire.PathWatchRequest))
	case wire.OpGetACL:
		body, code = s.readGetACL(c, r.rec.(*wire.PathRequest).Path)
	case wire.OpSync:
		// Standalone: every write that completed before the sync is
		// already applied; the sync's place in this connection's queue
		// does the rest.
		body = &wire.SyncResponse{Path: r.rec.(*wire.PathRequest).Path}
	case wire.OpGetAllChildrenNumber:
		body, code = s.readAllChildrenNumber(c, r.rec.(*wire.PathRequest).Path)
	case wire.OpGetEphemerals:
		body = s.readEphemerals(c, r.rec.(*wire.GetEphemeralsRequest).PrefixPath)
	case wire.OpMultiRead:
		body = s.readMulti(c, r.rec.(*wire.MultiRequest))
	case wire.OpCheckWatches:
		w := r.rec.(*wire.WatchesRequest)
		if !s.watches.contains(w.Path, c, w.Type) {
			code = wire.CodeNoWatcher
		}
	case wire.OpRemoveWatches:
		w := r.rec.(*wire.WatchesRequest)
		if !s.watches.remove(w.Path, c, w.Type) {
			code = wire.CodeNoWatcher
		}
	case wire.OpAddWatch:
		w := r.rec.(*wire.AddWatchRequest)
		s.watches.addPersistent(w.Path, c, w.Mode == wire.AddWatchPersistentRecursive)
		body = &wire.ErrorResponse{Err: wire.CodeOK}
	case wire.OpSetWatches:
		sw := r.rec.(*wire.SetWatches)
		s.setWatches(c, sw.RelativeZxid, sw.DataWatches, sw.ExistWatches, sw.ChildWatches, nil, nil)
	case wire.OpSetWatches2:
		sw := r.rec.(*wire.SetWatches2)
		s.setWatches(c, sw.RelativeZxid, sw.DataWatches, sw.ExistWatches, sw.ChildWatches, sw.PersistentWatches, sw.PersistentRecursiveWatches)
	case wire.OpWhoAmI:
		body = whoAmI(c.authIDs())
	default:
		code = wire.CodeUnimplemented
	}
	return zxid, code, body
}

func (s *Server) readExists(c *conn, req *wire.PathWatchRequest) (wire.Record, wire.Code) {
	if strings.IndexByte(req.Path, 0) >= 0 {
		return nil, wire.CodeBadArguments
	}
	n := s.tree.Get(req.Path)
	if n != nil && !datatree.CheckPerm(s.tree.ACL(n), wire.PermRead, c.authIDs()) {
		return nil, wire.CodeNoAuth
	}
	if req.Watch {
		// Set even when the node is missing: it then fires NodeCreated.
		s.watches.addData(req.Path, c)
	}
	if n == nil {
		return nil, wire.CodeNoNode
	}
	resp := &wire.StatResponse{}
	n.Stat(&resp.Stat)
	if rl := s.store.rl; rl != nil && rl.entryPath(req.Path) {
		if ref, ok := parseRef(n.Data()); ok {
			resp.Stat.DataLength = int32(ref.length)
		}
	}
	return resp, wire.CodeOK
}

func (s *Server) readGetData(c *conn, req *wire.PathWatchRequest) (wire.Record, wire.Code) {
	n := s.tree.Get(req.Path)
	if n == nil {
		return nil, wire.CodeNoNode
	}
	if !datatree.CheckPerm(s.tree.ACL(n), wire.PermRead, c.authIDs()) {
		return nil, wire.CodeNoAuth
	}
	resp := &wire.GetDataResponse{Data: n.Data()}
	n.Stat(&resp.Stat)
	if rl := s.store.rl; rl != nil && rl.entryPath(req.Path) {
		if ref, ok := parseRef(resp.Data); ok {
			b, err := rl.read(ref)
			if err != nil {
				s.log.Error("reading a log entry failed", "path", req.Path, "err", err)
				return nil, wire.CodeSystemError
			}
			resp.Data = b
			resp.Stat.DataLength = int32(len(b))
		}
	}
	if req.Watch {
		s.watches.addData(req.Path, c)
	}
	return resp, wire.CodeOK
}

func (s *Server) readGetChildren(c *conn, op wire.Op, req *wire.PathWatchRequest) (wire.Record, wire.Code) {
	n := s.tree.Get(req.Path)
	if n == nil {
		return nil, wire.CodeNoNode
	}
	if !datatree.CheckPerm(s.tree.ACL(n), wire.PermRead, c.authIDs()) {
		return nil, wire.CodeNoAuth
	}
	children := n.Children(make([]string, 0, n.NumChildren()))
	if req.Watch {
		s.watches.addChild(req.Path, c)
	}
	if op == wire.OpGetChildren {
		return &wire.GetChildrenResponse{Children: children}, wire.CodeOK
	}
	resp := &wire.GetChildren2Response{Children: children}
	n.Stat(&resp.Stat)
	return resp, wire.CodeOK
}

func (s *Server) readGetACL(c *conn, path string) (wire.Record, wire.Code) {
	n := s.tree.Get(path)
	if n == nil {
		return nil, wire.CodeNoNode
	}
	ids := c.authIDs()
	acl := s.tree.ACL(n)
	if !datatree.CheckPerm(acl, wire.PermRead|wire.PermAdmin, ids) {
		return nil, wire.CodeNoAuth
	}
	if !datatree.CheckPerm(acl, wire.PermAdmin, ids) {
		// Without ADMIN, digest ids are shown as user:x.
		acl = datatree.MaskDigests(acl)
	}
	resp := &wire.GetACLResponse{ACL: acl}
	n.Stat(&resp.Stat)
	return resp, wire.CodeOK
}

func (s *Server) readAllChildrenNumber(c *conn, path string) (wire.Record, wire.Code) {
	n := s.tree.Get(path)
	if n == nil {
		return nil, wire.CodeNoNode
	}
	if !datatree.CheckPerm(s.tree.ACL(n), wire.PermRead, c.authIDs()) {
		return nil, wire.CodeNoAuth
	}
	return &wire.GetAllChildrenNumberResponse{TotalNumber: int32(s.tree.CountDescendants(path))}, wire.CodeOK
}

func (s *Server) readEphemerals(c *conn, prefix string) wire.Record {
	all := s.tree.Ephemerals(c.sessionID())
	t := strings.TrimSpace(prefix)
	out := make([]string, 0, len(all))
	for _, p := range all {
		if t == "" || t == "/" || strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return &wire.GetEphemeralsResponse{Ephemerals: out}
}

// readMulti answers multiRead: each read succeeds or fails on its own.
func (s *Server) readMulti(c *conn, m *wire.MultiRequest) wire.Record {
	out := &wire.MultiResponse{Results: make([]wire.MultiResult, len(m.Ops))}
	for i := range m.Ops {
		op := &m.Ops[i]
		res := &out.Results[i]
		req := wire.PathWatchRequest{Path: op.Read.Path}
		switch op.Type {
		case wire.OpGetData:
			body, code := s.readGetData(c, &req)
			if code != wire.CodeOK {
				res.Type, res.Err = wire.OpError, code
				continue
			}
			g := body.(*wire.GetDataResponse)
			res.Type, res.Data, res.Stat = wire.OpGetData, g.Data, g.Stat
		case wire.OpGetChildren:
			body, code := s.readGetChildren(c, wire.OpGetChildren, &req)
			if code != wire.CodeOK {
				res.Type, res.Err = wire.OpError, code
				continue
			}
			res.Type, res.Children = wire.OpGetChildren, body.(*wire.GetChildrenResponse).Children
		}
	}
	return out
}

// setWatches re-registers a reconnecting client's watches
// (DataTree.setWatches): a watch whose trigger already happened after
// relativeZxid fires at once, with zxid -1, before the reply.
func (s *Server) setWatches(c *conn, rel int64, data, exist, child, persistent, recursive []string) {
	for _, p := range data {
		n := s.tree.Get(p)
		switch {
		case n == nil:
			c.notify(wire.EventNodeDeleted, p, -1)
		case n.Persisted().Mzxid > rel:
			c.notify(wire.EventNodeDataChanged, p, -1)
		default:
			s.watches.addData(p, c)
		}
	}
	for _, p := range exist {
		if s.tree.Get(p) != nil {
			c.notify(wire.EventNodeCreated, p, -1)
		} else {
			s.watches.addData(p, c)
		}
	}
	for _, p := range child {
		n := s.tree.Get(p)
		switch {
		case n == nil:
			c.notify(wire.EventNodeDeleted, p, -1)
		case n.Persisted().Pzxid > rel:
			c.notify(wire.EventNodeChildrenChanged, p, -1)
		default:
			s.watches.addChild(p, c)
		}
	}
	for _, p := range persistent {
		s.watches.addPersistent(p, c, false)
	}
	for _, p := range recursive {
		s.watches.addPersistent(p, c, true)
	}
}

// whoAmI lists the connection's identities as ZooKeeper's AuthUtil does:
// the scheme, and the user part of the id.
func whoAmI(ids []wire.Id) *wire.WhoAmIResponse {
	out := &wire.WhoAmIResponse{}
	for _, id := range ids {
		user := id.ID
		switch id.Scheme {
		case "digest":
			if i := strings.IndexByte(user, ':'); i >= 0 {
				user = user[:i]
			}
		case "super":
			// No provider: AuthUtil.getUser yields null, printed as "".
			user = ""
		}
		out.ClientInfo = append(out.ClientInfo, wire.ClientInfo{AuthScheme: id.Scheme, User: user})
	}
	return out
}
