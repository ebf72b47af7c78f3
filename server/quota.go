package server

import (
	"sync"
	"time"

	"github.com/corral-db/corral/wire"
)

// Quota enforcement (enforceQuota), as ZooKeeperServer.checkQuota: before
// a create or setData becomes a transaction, the change in node count and
// data bytes it would make is checked against the limits of the quota
// covering its path (datatree.CheckQuota). Passing a hard limit refuses
// the request with QuotaExceeded (-125); passing a soft one is logged.
// Like ZooKeeper, the check reads the applied tree, not the changes still
// in the pipeline, and does nothing without enforceQuota. The bookkeeping
// itself is the tree's (datatree/quota.go).

// quotaLogEvery spaces the soft-limit (and refusal) log lines, as
// ZooKeeper's RateLogger does, so a client writing over its soft limit
// does not fill the log.
const quotaLogEvery = 10 * time.Second

type quotaLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// checkQuota checks a change of countDiff nodes and bytesDiff bytes at
// path.
func (s *Server) checkQuota(path string, bytesDiff, countDiff int64) error {
	if !s.opts.EnforceQuota {
		return nil
	}
	s.mu.RLock()
	vs := s.tree.CheckQuota(path, bytesDiff, countDiff)
	s.mu.RUnlock()
	for _, v := range vs {
		s.logQuota(v.String())
		if v.Hard {
			return wire.CodeQuotaExceeded
		}
	}
	return nil
}

// checkQuotaSetData checks a setData of n bytes at path against the data
// the node holds now.
func (s *Server) checkQuotaSetData(path string, n int) error {
	if !s.opts.EnforceQuota {
		return nil
	}
	s.mu.RLock()
	var old int
	if node := s.tree.Get(path); node != nil {
		old = len(node.Data())
	}
	s.mu.RUnlock()
	return s.checkQuota(path, int64(n-old), 0)
}

func (s *Server) logQuota(msg string) {
	q := &s.quotaLog
	q.mu.Lock()
	now := time.Now()
	if !q.last.IsZero() && now.Sub(q.last) < quotaLogEvery {
		q.suppressed++
		q.mu.Unlock()
		return
	}
	n := q.suppressed
	q.last, q.suppressed = now, 0
	q.mu.Unlock()
	if n > 0 {
		s.log.Warn(msg, "similar_messages_suppressed", n)
		return
	}
	s.log.Warn(msg)
}
