package admin

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/server"
	"github.com/corral-db/corral/server/flw"
	"github.com/corral-db/corral/zab"
)

// commandTable is ZooKeeper 3.9.3's Commands, with its names (primary
// first, then aliases), its serverRequired flags and its JSON fields.
var commandTable = []*command{
	{names: []string{"connection_stat_reset", "crst"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, _ *response) {
		a.src.ResetConnectionStats()
	}},
	{names: []string{"configuration", "conf", "config"}, serverRequired: true, run: cmdConfiguration},
	{names: []string{"connections", "cons"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		r.put("connections", connections(a.src.FourLetterState("cons").Connections, false))
		r.put("secure_connections", []any{})
	}},
	{names: []string{"hash"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		digests := []map[string]any{}
		for _, d := range a.src.FourLetterState("hash").Digest {
			// DataTree.ZxidDigest's getters, as Jackson names them.
			digests = append(digests, map[string]any{"zxid": d.Zxid, "digestVersion": 2, "digest": int64(d.Digest)})
		}
		r.put("digests", digests)
	}},
	{names: []string{"dirs"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		st := a.src.FourLetterState("dirs")
		r.put("datadir_size", st.DataDirSize)
		r.put("logdir_size", st.LogDirSize)
	}},
	{names: []string{"dump"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		st := a.src.FourLetterState("dump")
		expiry := map[string][]int64{}
		for _, e := range st.SessionExpiries {
			expiry[strconv.FormatInt(e.ExpireAt, 10)] = append([]int64{}, e.Sessions...)
		}
		eph := map[string][]string{}
		for sid, paths := range st.Ephemerals {
			eph[strconv.FormatInt(sid, 10)] = append([]string{}, paths...)
		}
		r.put("expiry_time_to_session_ids", expiry)
		r.put("session_id_to_ephemeral_paths", eph)
	}},
	{names: []string{"environment", "env", "envi"}, run: func(a *AdminServer, _ *http.Request, r *response) {
		for _, kv := range a.src.FourLetterState("envi").Env {
			r.put(kv.Key, kv.Value)
		}
	}},
	{names: []string{"get_trace_mask", "gtmk"}, run: func(a *AdminServer, _ *http.Request, r *response) {
		r.put("tracemask", a.traceMask.Load())
	}},
	{names: []string{"initial_configuration", "icfg"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		r.put("initial_configuration", a.opts.InitialConfig)
	}},
	{names: []string{"is_read_only", "isro"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		r.put("read_only", false)
	}},
	{names: []string{"last_snapshot", "lsnp"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		zxid, mod, ok := a.src.LastSnapshot()
		if !ok {
			r.put("zxid", strconv.FormatUint(^uint64(0), 16)) // Long.toHexString(-1)
			r.put("timestamp", int64(-1))
			return
		}
		r.put("zxid", strconv.FormatUint(uint64(zxid), 16))
		r.put("timestamp", mod.Unix()) // SnapshotInfo: lastModified()/1000
	}},
	{names: []string{"leader", "lead"}, serverRequired: true, run: cmdLeader},
	{names: []string{"monitor", "mntr"}, run: func(a *AdminServer, _ *http.Request, r *response) {
		for _, m := range a.src.FourLetterState("mntr").Metrics {
			r.put(m.Name, jsonValue(m.Value))
		}
	}},
	{names: []string{"observer_connection_stat_reset", "orst"}, serverRequired: true, run: func(*AdminServer, *http.Request, *response) {
		// corral keeps no per-observer connection statistics to reset.
	}},
	{names: []string{"restore", "rest"}, serverRequired: true, auth: true, post: true, run: cmdRestore},
	// corral's own: hand leadership to another voter (zab/transfer.go).
	{names: []string{"transfer_leadership", "tlead"}, serverRequired: true, auth: true, post: true, run: cmdTransferLeadership},
	{names: []string{"ruok"}, serverRequired: true, run: func(*AdminServer, *http.Request, *response) {}},
	{names: []string{"set_trace_mask", "stmk"}, run: func(a *AdminServer, req *http.Request, r *response) {
		v := req.URL.Query()
		if !v.Has("traceMask") {
			r.put("error", "setTraceMask requires long traceMask argument")
			return
		}
		mask, err := strconv.ParseInt(v.Get("traceMask"), 10, 64)
		if err != nil {
			r.put("error", "setTraceMask requires long traceMask argument, got "+v.Get("traceMask"))
			return
		}
		a.traceMask.Store(mask)
		r.put("tracemask", mask)
	}},
	{names: []string{"snapshot", "snap"}, serverRequired: true, auth: true, run: cmdSnapshot},
	{names: []string{"server_stats", "srvr"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		serverStats(a, r)
	}},
	{names: []string{"stats", "stat"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		st := serverStats(a, r)
		r.put("connections", connections(st.Connections, true))
		r.put("secure_connections", []any{})
	}},
	{names: []string{"stat_reset", "srst"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, _ *response) {
		a.src.ResetStats()
	}},
	{names: []string{"observers", "obsr"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		synced := 0
		if v, ok := a.src.Zab(); ok && v.IsLeader {
			synced = int(gauge(a.src.Gauges(), "synced_observers"))
		}
		r.put("synced_observers", synced)
		r.put("observers", []any{})
	}},
	{names: []string{"system_properties", "sysp"}, run: func(a *AdminServer, _ *http.Request, r *response) {
		// corral has no JVM: its stand-ins for the java.* and os.*
		// properties (as envi prints them), and the zoo.cfg keys.
		for _, kv := range a.src.FourLetterState("envi").Env {
			r.put(kv.Key, kv.Value)
		}
		r.put("file.separator", string(os.PathSeparator))
		r.put("path.separator", string(os.PathListSeparator))
		r.put("line.separator", "\n")
	}},
	{names: []string{"voting_view"}, serverRequired: true, run: cmdVotingView},
	{names: []string{"watches", "wchc"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		out := map[string][]string{}
		for sid, paths := range a.src.FourLetterState("wchc").Watches.BySession {
			out[strconv.FormatInt(sid, 10)] = append([]string{}, paths...)
		}
		r.put("session_id_to_watched_paths", out)
	}},
	{names: []string{"watches_by_path", "wchp"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		out := map[string][]int64{}
		for sid, paths := range a.src.FourLetterState("wchp").Watches.BySession {
			for _, p := range paths {
				out[p] = append(out[p], sid)
			}
		}
		for _, ids := range out {
			sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		}
		r.put("path_to_session_ids", out)
	}},
	{names: []string{"watch_summary", "wchs"}, serverRequired: true, run: func(a *AdminServer, _ *http.Request, r *response) {
		w := a.src.FourLetterState("wchs").Watches
		if w.Connections == 0 && w.Paths == 0 && w.Total == 0 {
			paths := map[string]bool{}
			for _, ps := range w.BySession {
				if len(ps) > 0 {
					w.Connections++
				}
				for _, p := range ps {
					paths[p] = true
					w.Total++
				}
			}
			w.Paths = len(paths)
		}
		r.put("num_connections", w.Connections)
		r.put("num_paths", w.Paths)
		r.put("num_total_watches", w.Total)
	}},
	{names: []string{"zabstate"}, run: cmdZabState},
}

// cmdConfiguration is ZooKeeperServerConf.toMap.
func cmdConfiguration(a *AdminServer, _ *http.Request, r *response) {
	c := a.opts.Config
	port := c.ClientPort
	if s := c.Self(); s != nil && s.ClientPort != 0 {
		port = s.ClientPort
	}
	r.put("client_port", port)
	r.put("data_dir", c.DataDir+string(os.PathSeparator)+"version-2")
	r.put("data_log_dir", c.DataLogDir+string(os.PathSeparator)+"version-2")
	r.put("tick_time", c.TickTime)
	r.put("max_client_cnxns", c.MaxClientCnxns)
	r.put("min_session_timeout", c.MinSessionTimeout)
	r.put("max_session_timeout", c.MaxSessionTimeout)
	r.put("server_id", c.MyID)
	r.put("client_port_listen_backlog", -1)
}

// connections is ServerCnxn.getConnectionInfo for each connection.
func connections(cs []flw.ConnInfo, brief bool) []map[string]any {
	out := []map[string]any{}
	for _, c := range cs {
		m := map[string]any{
			"remote_socket_address": strings.TrimPrefix(c.Remote, "/"),
			"interest_ops":          c.InterestOps,
			"outstanding_requests":  c.Queued,
			"packets_received":      c.Received,
			"packets_sent":          c.Sent,
		}
		if !brief {
			lastCxid := c.LastCxid
			if !c.HasSession {
				lastCxid = -1
			}
			m["session_id"] = c.SessionID
			m["last_operation"] = orNA(c.LastOp)
			m["established"] = c.Established
			m["session_timeout"] = c.Timeout
			m["last_cxid"] = lastCxid
			m["last_zxid"] = c.LastZxid
			m["last_response_time"] = c.LastResponse
			m["last_latency"] = c.LastLatency
			m["min_latency"] = c.MinLatency
			m["avg_latency"] = c.AvgLatency
			m["max_latency"] = c.MaxLatency
		}
		out = append(out, m)
	}
	return out
}

func orNA(s string) string {
	if s == "" {
		return "NA"
	}
	return s
}

// serverStats is SrvrCommand: the version, ServerStats as Jackson
// serialises it, the client response sizes and the node count.
func serverStats(a *AdminServer, r *response) *flw.State {
	st := a.src.FourLetterState("stat")
	dirs := a.src.FourLetterState("dirs")
	g := a.src.Gauges()
	clientResp := map[string]any{"last_buffer_size": -1, "min_buffer_size": -1, "max_buffer_size": -1}
	r.put("version", st.Version)
	r.put("read_only", st.ReadOnly)
	r.put("server_stats", map[string]any{
		"packets_sent":                 st.Sent,
		"packets_received":             st.Received,
		"fsync_threshold_exceed_count": 0,
		"client_response_stats":        clientResp,
		"provider_null":                false,
		"data_dir_size":                dirs.DataDirSize,
		"log_dir_size":                 dirs.LogDirSize,
		"last_processed_zxid":          st.Zxid,
		"outstanding_requests":         st.Outstanding,
		"server_state":                 st.Mode,
		"avg_latency":                  javaDouble(flw.RoundAvg(int64(st.LatencyAvg*1e6), 1e6)),
		"max_latency":                  st.LatencyMax,
		"min_latency":                  st.LatencyMin,
		"num_alive_client_connections": len(st.Connections),
		"uptime":                       int64(gauge(g, "uptime")),
		"auth_failed_count":            int64(gauge(g, "auth_failed_count")),
		"non_mtlsremote_conn_count":    0,
		"non_mtlslocal_conn_count":     0,
	})
	r.put("client_response", clientResp)
	if v, ok := a.src.Zab(); ok && v.IsLeader {
		last := int64(gauge(g, "last_proposal_size"))
		r.put("proposal_stats", map[string]any{"last_buffer_size": last, "min_buffer_size": -1, "max_buffer_size": -1})
	}
	r.put("node_count", st.NodeCount)
	return st
}

// gauge is the numeric value of mntr figure name, 0 if absent.
func gauge(ms []flw.Metric, name string) float64 {
	for _, m := range ms {
		if m.Name == name {
			v, _ := number(m.Value)
			return v
		}
	}
	return 0
}

// configServers are the servers of the member's committed configuration
// (they change with reconfig), else those of zoo.cfg.
func configServers(a *AdminServer, v server.ZabView) []config.Server {
	if v.Servers != nil {
		return v.Servers
	}
	return a.opts.Config.Servers
}

// cmdLeader is LeaderCommand.
func cmdLeader(a *AdminServer, _ *http.Request, r *response) {
	v, ok := a.src.Zab()
	if !ok {
		r.put("error", "server is not initialized")
		return
	}
	r.put("is_leader", v.IsLeader)
	r.put("leader_id", v.LeaderID)
	ip := ""
	for _, s := range configServers(a, v) {
		if s.ID == v.LeaderID {
			ip = s.Host
		}
	}
	r.put("leader_ip", ip)
}

// cmdVotingView is VotingViewCommand: the voters of the configuration.
func cmdVotingView(a *AdminServer, _ *http.Request, r *response) {
	view := map[string]any{}
	if v, ok := a.src.Zab(); ok {
		for _, s := range configServers(a, v) {
			if s.Observer {
				continue
			}
			client := ""
			if s.ClientPort != 0 {
				host := s.ClientAddr
				if host == "" {
					host = "0.0.0.0"
				}
				client = net.JoinHostPort(host, strconv.Itoa(s.ClientPort))
			}
			view[strconv.FormatInt(s.ID, 10)] = map[string]any{
				"serverAddresses":   []string{s.QuorumAddr()},
				"electionAddresses": []string{s.ElectionAddr()},
				"clientAddress":     client,
				"learnerType":       "participant",
			}
		}
	}
	r.put("current_config", view)
}

// cmdZabState is ZabStateCommand.
func cmdZabState(a *AdminServer, _ *http.Request, r *response) {
	v, ok := a.src.Zab()
	if !ok {
		r.put("voting", false)
		r.put("zabstate", "")
		return
	}
	c := a.opts.Config
	quorum, election, client := "", "", c.ClientListenAddr()
	if s := c.Self(); s != nil {
		quorum, election = s.QuorumAddr(), s.ElectionAddr()
	}
	z := a.src.LastZxid()
	r.put("myid", v.MyID)
	r.put("is_leader", v.IsLeader)
	r.put("quorum_address", quorum)
	r.put("election_address", election)
	r.put("client_address", client)
	r.put("voting", v.Voting)
	r.put("last_zxid", "0x"+strconv.FormatUint(uint64(z), 16))
	r.put("zab_epoch", z>>32)
	r.put("zab_counter", z&0xffffffff)
	r.put("zabstate", v.Phase)
}

// cmdSnapshot is SnapshotCommand: a consistent snapshot, streamed unless
// streaming=false, with its zxid and size in the last_zxid and
// snapshot_size headers. Rate limited to one per
// admin.rateLimiterIntervalInMS (ZooKeeper's snapshot limiter counts that
// interval in microseconds by mistake; corral uses milliseconds, as its
// restore limiter does).
func cmdSnapshot(a *AdminServer, req *http.Request, r *response) {
	if !a.opts.Config.Admin.SnapshotEnabled {
		r.status = http.StatusServiceUnavailable
		return
	}
	if !a.snapLimit.allow() {
		r.status = http.StatusTooManyRequests
		a.src.Metrics().Counter("snapshot_rate_limited_count", "Snapshot commands refused by the rate limiter").Inc()
		return
	}
	streaming := true
	if v := req.URL.Query(); v.Has("streaming") {
		streaming = strings.EqualFold(v.Get("streaming"), "true")
	}
	path, zxid, err := a.src.WriteSnapshotFile(a.opts.SnapshotDir)
	if err != nil {
		r.status = http.StatusInternalServerError
		a.src.Metrics().Counter("snapshot_error_count", "Snapshot commands that failed").Inc()
		a.log.Warn("admin: snapshot failed", "err", err)
		return
	}
	f, err := os.Open(path)
	os.Remove(path) // the open file stays readable
	if err != nil {
		r.status = http.StatusInternalServerError
		return
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		r.status = http.StatusInternalServerError
		return
	}
	r.headers = map[string]string{
		"last_zxid":     "0x" + strconv.FormatUint(uint64(zxid), 16),
		"snapshot_size": strconv.FormatInt(fi.Size(), 10),
	}
	if !streaming {
		f.Close()
		return
	}
	r.stream, r.streamSize = f, fi.Size()
}

// cmdRestore is RestoreCommand: POST the stream the snapshot command
// gave (corral's format; ZooKeeper's is accepted too) and this server's
// tree and sessions become the snapshot's (server.RestoreSnapshot). The
// checks come in ZooKeeper's order: the switch, a body, the rate limit (a
// refused or failed restore still uses the interval's one permit, as in
// ZooKeeper). It answers last_zxid, the zxid the server is at afterwards.
// A bad stream answers 500 as ZooKeeper's does, with the reason in error
// (ZooKeeper's is null); nothing has changed then. An ensemble member
// refuses with 409 (see server.ErrRestoreEnsemble).
func cmdRestore(a *AdminServer, req *http.Request, r *response) {
	if !a.opts.Config.Admin.RestoreEnabled {
		r.status = http.StatusServiceUnavailable
		return
	}
	if req.Body == nil || req.ContentLength == 0 {
		r.status, r.err = http.StatusBadRequest, "restore needs the snapshot stream as the request body"
		return
	}
	if !a.restoreLimit.allow() {
		r.status = http.StatusTooManyRequests
		a.src.Metrics().Counter("restore_rate_limited_count", "Restore commands refused by the rate limiter").Inc()
		return
	}
	zxid, err := a.src.RestoreSnapshot(req.Body)
	if err != nil {
		a.src.Metrics().Counter("restore_error_count", "Restore commands that failed").Inc()
		a.log.Warn("admin: restore failed", "err", err)
		r.status, r.err = http.StatusInternalServerError, "restore failed, nothing changed: "+err.Error()
		if errors.Is(err, server.ErrRestoreEnsemble) || errors.Is(err, server.ErrRestoreLogs) {
			r.status, r.err = http.StatusConflict, err.Error()
		}
		return
	}
	r.put("last_zxid", zxid)
}

// cmdTransferLeadership is corral's own command: POST with ?to=ID asks
// this server, which must lead, to hand leadership to voter ID. It answers
// once the transfer has started ("transfer_to"); the leader command shows
// when it is done. A transfer that does not complete within the ensemble's
// initLimit is cancelled and this server leads on.
func cmdTransferLeadership(a *AdminServer, req *http.Request, r *response) {
	to, err := strconv.ParseUint(req.URL.Query().Get("to"), 10, 64)
	if err != nil || to == 0 {
		r.status, r.err = http.StatusBadRequest, "transfer_leadership requires to=<server id>"
		return
	}
	switch err := a.src.TransferLeadership(to); {
	case err == nil:
		r.put("transfer_to", to)
	case errors.Is(err, zab.ErrNotLeader), errors.Is(err, server.ErrStandalone):
		r.status, r.err = http.StatusConflict, "this server is not the leader: "+err.Error()
	case errors.Is(err, zab.ErrTransferTarget):
		r.status, r.err = http.StatusBadRequest, fmt.Sprintf("server %d cannot lead: %v", to, err)
	default:
		r.status, r.err = http.StatusServiceUnavailable, err.Error()
	}
}
