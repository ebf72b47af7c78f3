package server

import (
	"context"
	"time"

	"github.com/corral-db/corral/wire"
)

// expireLoop closes sessions that have not been heard from within their
// timeout. The closeSession transaction deletes their ephemerals on every
// replica; the client learns of the expiry on its next handshake.
func (s *Server) expireLoop(ctx context.Context) {
	period := max(s.opts.TickTime/4, 10*time.Millisecond)
	t := time.NewTicker(period)
	defer t.Stop()
	var buf []*session
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.canWrite() {
			continue
		}
		buf = s.sessions.expired(buf[:0])
		for _, sess := range buf {
			s.log.Info("expiring session", "session", hex(sess.id), "timeout", sess.timeout.Load())
			if !s.submitInternal(wire.OpCloseSession, sess.id, nil) {
				return
			}
		}
	}
}

// submitInternal runs a write that no client sent (expiry, reaper).
func (s *Server) submitInternal(op wire.Op, sid int64, rec wire.Record) bool {
	if !s.acquire() {
		return false
	}
	r := &request{op: op, sid: sid, rec: rec, kind: kindWrite, recv: time.Now()}
	r.onDone = func(*request) { s.release() }
	if !s.submit(r) {
		s.release()
		return false
	}
	return true
}

// reapLoop deletes empty containers and expired TTL nodes
// (ZooKeeper's ContainerManager), every ContainerCheckInterval.
func (s *Server) reapLoop(ctx context.Context) {
	t := time.NewTicker(s.opts.ContainerCheckInterval)
	defer t.Stop()
	var paths []string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.canWrite() {
			continue
		}
		s.mu.RLock()
		paths = s.tree.ReapCandidates(s.opts.Now().UnixMilli(), s.opts.ContainerMaxNeverUsed.Milliseconds(), paths[:0])
		s.mu.RUnlock()
		for _, p := range paths {
			if !s.submitInternal(wire.OpDeleteContainer, 0, &wire.PathRequest{Path: p}) {
				return
			}
		}
	}
}
