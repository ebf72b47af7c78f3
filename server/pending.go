package server

import (
	"sync"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/wire"
)

// change is the state of one znode as the writes already decided by prep
// leave it, before they are applied (ZooKeeper's ChangeRecord). Prep
// validates each new write against these, so two writes in flight on the
// same path see each other even though neither is in the tree yet.
type change struct {
	zxid        int64
	exists      bool
	stat        datatree.PStat
	numChildren int
	acl         []wire.ACL

	// For a log's znode under rlog.root (rlogcontrol.go): data is its
	// data; ctrlAt is the zxid of the multi that last moved its control
	// record's end, and cursor the offset the next entry that multi
	// creates must have.
	data   []byte
	ctrlAt int64
	cursor int64
}

// pendingChanges maps a path to its newest change not yet applied. Prep
// adds; apply removes a record once the transaction that wrote it is in
// the tree (unless a later one replaced it).
type pendingChanges struct {
	mu sync.Mutex
	m  map[string]*change
}

func newPendingChanges() *pendingChanges {
	return &pendingChanges{m: map[string]*change{}}
}

// record returns the current view of path: the pending change if there is
// one, else the tree. The caller is the prep goroutine.
func (s *Server) record(path string) (change, bool) {
	s.pending.mu.Lock()
	if c, ok := s.pending.m[path]; ok {
		s.pending.mu.Unlock()
		return *c, c.exists
	}
	s.pending.mu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.tree.Get(path)
	if n == nil {
		return change{}, false
	}
	c := change{
		exists:      true,
		stat:        n.Persisted(),
		numChildren: n.NumChildren(),
		acl:         s.tree.ACL(n),
	}
	if s.store.rl != nil && s.store.rl.logPath(path) {
		c.data = n.Data()
	}
	return c, true
}

// permitted returns path's record if path exists (else NoNode) and r's
// credentials carry perm on its ACL (else NoAuth): ZooKeeper's order of
// the two checks. The caller is the prep goroutine.
func (s *Server) permitted(r *request, path string, perm int32) (change, error) {
	rec, ok := s.record(path)
	if !ok {
		return change{}, wire.CodeNoNode
	}
	if !datatree.CheckPerm(rec.acl, perm, r.auth) {
		return change{}, wire.CodeNoAuth
	}
	return rec, nil
}

// put records a change decided by r.
func (s *Server) put(r *request, path string, c change) {
	c.zxid = r.hdr.Zxid
	s.pending.mu.Lock()
	s.pending.m[path] = &c
	s.pending.mu.Unlock()
	r.changes = append(r.changes, path)
}

// snapshotPending saves the records of paths so a failed multi can restore
// them (PrepRequestProcessor.rollbackPendingChanges).
func (s *Server) snapshotPending(paths []string) map[string]*change {
	out := make(map[string]*change, len(paths))
	s.pending.mu.Lock()
	for _, p := range paths {
		out[p] = s.pending.m[p]
	}
	s.pending.mu.Unlock()
	return out
}

// rollback undoes the records r added, restoring saved ones.
func (s *Server) rollback(r *request, saved map[string]*change) {
	s.pending.mu.Lock()
	for _, p := range r.changes {
		if old, ok := saved[p]; ok && old != nil {
			s.pending.m[p] = old
		} else {
			delete(s.pending.m, p)
		}
	}
	s.pending.mu.Unlock()
	r.changes = r.changes[:0]
}

// applied drops r's records that no later write replaced.
func (s *Server) applied(r *request) {
	if len(r.changes) == 0 {
		return
	}
	s.pending.mu.Lock()
	for _, p := range r.changes {
		if c, ok := s.pending.m[p]; ok && c.zxid == r.hdr.Zxid {
			delete(s.pending.m, p)
		}
	}
	s.pending.mu.Unlock()
}

func (s *Server) pendingCount() int {
	s.pending.mu.Lock()
	defer s.pending.mu.Unlock()
	return len(s.pending.m)
}

// reset forgets every pending change: the proposals they came from will
// not be applied by this leader (leadership lost) or are all applied (a
// new leader starts from its tree). The caller holds prepMu.
func (p *pendingChanges) reset() {
	p.mu.Lock()
	clear(p.m)
	p.mu.Unlock()
}
