package server

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/corral-db/corral/server/flw"
)

// VersionString is what srvr, stat, envi and mntr print as ZooKeeper's
// version. It starts with the ZooKeeper version whose protocol corral
// speaks, because clients parse it (kazoo's server_version reads the
// leading digits) to decide which features they may use.
var VersionString = "3.9.3-corral-0.1.0, built on 2026-11-22 00:00 UTC"

// fourLetterWord answers a four-letter word and closes the connection.
func (s *Server) fourLetterWord(c *conn, word string) {
	st := s.flwState(c, word)
	if word == "stmk" {
		var b [8]byte
		if _, err := io.ReadFull(c.nc, b[:]); err == nil {
			st.TraceMask = int64(binary.BigEndian.Uint64(b[:]))
		}
	}
	if flw.Allowed(word, s.opts.FourLetterWords) {
		switch word {
		case "srst":
			s.stats.reset()
		case "crst":
			s.connMu.Lock()
			for cc := range s.conns {
				cc.stats.reset()
			}
			s.connMu.Unlock()
		}
	}
	c.out.raw(flw.Render(word, st, s.opts.FourLetterWords))
	c.out.finish()
}

// flwState gathers what the word prints. It reads the whole server, so it
// does only the work its word needs.
func (s *Server) flwState(asker *conn, word string) *flw.State {
	st := &flw.State{
		Version:   VersionString,
		Mode:      "standalone",
		Serving:   s.serving.Load(),
		TraceMask: 306,
		Config:    s.opts.ConfigLines,
	}
	if !s.standalone {
		st.Mode = s.rep.mode()
		st.Recovering = s.rep.recovering()
	}
	st.LatencyMin, st.LatencyAvg, st.LatencyMax = s.stats.latency()
	st.Received = s.stats.received.Load()
	st.Sent = s.stats.sent.Load()
	st.Outstanding = s.stats.outstanding.Load()
	s.mu.RLock()
	st.Zxid = s.tree.LastZxid()
	st.NodeCount = s.tree.NodeCount() + 1 // ZooKeeper counts the root alias ""
	switch word {
	case "dump":
		st.Ephemerals = s.tree.SessionsWithEphemerals()
	case "hash":
		st.Digest = []flw.DigestEntry{{Zxid: st.Zxid, Digest: s.tree.Digest()}}
	}
	s.mu.RUnlock()

	switch word {
	case "stat", "cons", "srvr", "mntr":
		st.Connections = s.connInfos()
	case "wchs", "wchc", "wchp":
		st.Watches.BySession, st.Watches.Connections, st.Watches.Paths, st.Watches.Total = s.watches.dataWatchesBySession()
	case "dump":
		buckets := s.sessions.expiryBuckets(s.opts.TickTime, s.opts.Now())
		for at, ids := range buckets {
			sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
			st.SessionExpiries = append(st.SessionExpiries, flw.SessionExpiry{ExpireAt: at, Sessions: ids})
		}
		sort.Slice(st.SessionExpiries, func(i, j int) bool { return st.SessionExpiries[i].ExpireAt < st.SessionExpiries[j].ExpireAt })
		st.SessionCount = s.sessions.count()
		var refs []flw.ConnRef
		for _, ci := range s.connInfos() {
			refs = append(refs, flw.ConnRef{Remote: ci.Remote, SessionID: ci.SessionID})
		}
		if len(refs) > 0 {
			at := s.opts.Now().UnixMilli() + s.opts.TickTime.Milliseconds()
			st.ConnectionExpiries = []flw.ConnExpiry{{ExpireAt: at, Conns: refs}}
		}
	case "envi":
		st.Env = flw.DefaultEnv(VersionString)
	case "dirs":
		st.DataDirSize = dirSize(filepath.Join(s.opts.DataDir, "version-2"))
		st.LogDirSize = dirSize(filepath.Join(s.opts.DataLogDir, "version-2"))
	}
	if word == "mntr" {
		st.Metrics = append(s.metrics(st), mntrLines(s.opts.Metrics)...)
	}
	return st
}

func (s *Server) connInfos() []flw.ConnInfo {
	s.connMu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.connMu.Unlock()
	sort.Slice(conns, func(i, j int) bool { return conns[i].id < conns[j].id })
	out := make([]flw.ConnInfo, 0, len(conns))
	for _, c := range conns {
		ci := flw.ConnInfo{
			Remote:      c.remote,
			InterestOps: 1,
			Received:    c.stats.received.Load(),
			Sent:        c.stats.sent.Load(),
		}
		c.mu.Lock()
		ci.Queued = int64(len(c.queue))
		c.mu.Unlock()
		if sess := c.sess.Load(); sess != nil {
			ci.HasSession = true
			ci.SessionID = sess.id
			ci.Timeout = c.timeout
			ci.Established = c.stats.established.Load()
			c.stats.mu.Lock()
			ci.LastOp = c.stats.lastOp
			if ci.LastOp == "" {
				ci.LastOp = "NA"
			}
			ci.LastCxid = c.stats.lastCxid
			ci.LastZxid = c.stats.lastZxid
			ci.LastResponse = c.stats.lastResp
			ci.LastLatency = c.stats.lastLat
			ci.MinLatency = c.stats.minLat
			ci.MaxLatency = c.stats.maxLat
			if c.stats.count > 0 {
				ci.AvgLatency = c.stats.totalLat / c.stats.count
			}
			c.stats.mu.Unlock()
		} else {
			ci.InterestOps = 0
		}
		out = append(out, ci)
	}
	return out
}

// metrics is mntr's content: the keys monitoring tools read first, with
// ZooKeeper's names and types.
func (s *Server) metrics(st *flw.State) []flw.Metric {
	s.mu.RLock()
	ephemerals := s.tree.EphemeralCount()
	dataSize := s.tree.ApproximateDataSize()
	nodes := int64(s.tree.NodeCount())
	s.mu.RUnlock()
	live := liveHeap()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, maxFds := fdCounts()
	out := []flw.Metric{
		{Name: "version", Value: st.Version},
		{Name: "server_state", Value: st.Mode},
		{Name: "avg_latency", Value: flw.RoundAvg(int64(st.LatencyAvg*1000), 1000)},
		{Name: "max_latency", Value: st.LatencyMax},
		{Name: "min_latency", Value: st.LatencyMin},
		{Name: "packets_received", Value: st.Received},
		{Name: "packets_sent", Value: st.Sent},
		{Name: "num_alive_connections", Value: len(st.Connections)},
		{Name: "outstanding_requests", Value: st.Outstanding},
		{Name: "znode_count", Value: st.NodeCount},
		{Name: "watch_count", Value: s.watches.count()},
		{Name: "ephemerals_count", Value: ephemerals},
		{Name: "approximate_data_size", Value: dataSize},
		{Name: "open_file_descriptor_count", Value: fds},
		{Name: "max_file_descriptor_count", Value: maxFds},
		{Name: "uptime", Value: time.Since(s.started).Milliseconds()},
		{Name: "global_sessions", Value: s.sessions.count()},
		{Name: "local_sessions", Value: 0},
		{Name: "connection_drop_probability", Value: 0.0},
		{Name: "last_client_response_size", Value: -1},
		{Name: "max_client_response_size", Value: -1},
		{Name: "min_client_response_size", Value: -1},
		{Name: "outstanding_tls_handshake", Value: 0},
		{Name: "auth_failed_count", Value: s.stats.authFail.Load()},
		{Name: "non_mtls_remote_conn_count", Value: 0},
		{Name: "non_mtls_local_conn_count", Value: 0},
		{Name: "fsync_count", Value: s.store.fsyncs.Load()},
		{Name: "pending_changes", Value: s.pendingCount()},
		{Name: "go_heap_inuse_bytes", Value: int64(ms.HeapInuse)},
		// The live heap as of the last collection, over the znodes: what
		// a znode costs in memory, the tree's share being most of it. The
		// heap is the process's (a test may run several servers in one).
		{Name: "heap_live_bytes", Value: live},
		{Name: "heap_live_bytes_per_znode", Value: live / max(nodes, 1)},
		{Name: "go_goroutines", Value: runtime.NumGoroutine()},
	}
	if !s.standalone {
		// corral's own: 1 while this diskless member waits for a
		// synchronized leader (docs/design/diskless.md).
		rec := 0
		if st.Recovering {
			rec = 1
		}
		out = append(out, flw.Metric{Name: "recovering", Value: rec})
		out = append(out, s.rep.leaderMetrics()...)
	}
	return out
}

func fdCounts() (open, max int64) {
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		open = int64(len(ents))
	}
	var lim rlimit
	if getNofile(&lim) == nil {
		max = int64(lim.Cur)
	}
	return open, max
}

func dirSize(dir string) int64 {
	var n int64
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil && !info.IsDir() {
			n += info.Size()
		}
	}
	return n
}
