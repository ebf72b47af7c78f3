package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// memberJSON is one member as the ensemble page shows it, from its srvr
// and mntr answers.
type memberJSON struct {
	ID   int    `json:"id"` // position in Config.Servers, from 1
	Addr string `json:"addr"`
	// ServerID is the member's server id; Admin whether the console knows
	// its AdminServer's address (a transfer is asked of the leader's).
	ServerID int64  `json:"serverId"`
	Admin    bool   `json:"admin"`
	Up       bool   `json:"up"`      // answered at all
	Serving  bool   `json:"serving"` // answered srvr with a mode
	Error    string `json:"error,omitempty"`
	Mode     string `json:"mode"` // leader, follower, observer, standalone, down, electing
	Version  string `json:"version,omitempty"`
	Zxid     string `json:"zxid,omitempty"`
	Epoch    int64  `json:"epoch"`
	Counter  int64  `json:"counter"`
	// Lag is how many transactions the member is behind the leader in the
	// leader's epoch; null when unknown (no leader, or another epoch).
	Lag         *int64  `json:"lag"`
	LatencyMin  float64 `json:"latencyMin"`
	LatencyAvg  float64 `json:"latencyAvg"`
	LatencyMax  float64 `json:"latencyMax"`
	Received    int64   `json:"received"`
	Sent        int64   `json:"sent"`
	Connections int64   `json:"connections"`
	Outstanding int64   `json:"outstanding"`
	Znodes      int64   `json:"znodes"`
	Sessions    int64   `json:"sessions"`
	Watches     int64   `json:"watches"`
	Ephemerals  int64   `json:"ephemerals"`
	DataSize    int64   `json:"dataSize"`
	Durability  string  `json:"durability"`
	Uptime      int64   `json:"uptime"` // ms
	FsyncCount  int64   `json:"fsyncCount"`
	FsyncAvg    float64 `json:"fsyncAvg"` // ms
	SnapCount   int64   `json:"snapshotCount"`
	SnapAvg     float64 `json:"snapshotAvg"` // ms
	// Elections: how many times the member entered LOOKING
	// (looking_count) and how long leaving it took (election_time, ms).
	Elections   int64   `json:"elections"`
	ElectionAvg float64 `json:"electionAvg"`
	ElectionMax float64 `json:"electionMax"`
	// The member's last snapshot, from its AdminServer's last_snapshot
	// (when the console knows the address): zxid and time (ms since
	// epoch); empty and 0 when unknown or none yet.
	LastSnapZxid string `json:"lastSnapshotZxid,omitempty"`
	LastSnapTime int64  `json:"lastSnapshotTime,omitempty"`
	LastSnapErr  string `json:"lastSnapshotError,omitempty"`
	// Leader only.
	LeaderSince    int64 `json:"leaderSince,omitempty"` // ms since epoch
	Learners       int64 `json:"learners,omitempty"`
	SyncedFollower int64 `json:"syncedFollowers,omitempty"`
	PendingSyncs   int64 `json:"pendingSyncs,omitempty"`
}

type ensembleJSON struct {
	Time    int64        `json:"time"`
	Leader  int          `json:"leader"` // id of the leader, 0 when none
	Members []memberJSON `json:"members"`
}

// handleEnsemble: GET api/ensemble asks every member for srvr and mntr,
// in parallel, each bounded by flwTimeout.
func (c *Console) handleEnsemble(cl *call) (any, error) {
	now := time.Now()
	members := make([]memberJSON, len(c.cfg.Servers))
	var wg sync.WaitGroup
	for i, addr := range c.cfg.Servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			members[i] = c.member(cl.ctx, i+1, addr, now)
		}()
	}
	wg.Wait()
	out := ensembleJSON{Time: now.UnixMilli(), Members: members}
	var leader *memberJSON
	for i := range members {
		if members[i].Mode == "leader" {
			leader = &members[i]
			out.Leader = members[i].ID
		}
	}
	if leader != nil {
		for i := range members {
			m := &members[i]
			if m.Serving && m.Epoch == leader.Epoch {
				lag := max(leader.Counter-m.Counter, 0)
				m.Lag = &lag
			}
		}
	}
	return out, nil
}

func (c *Console) member(ctx context.Context, id int, addr string, now time.Time) memberJSON {
	m := memberJSON{ID: id, Addr: addr, Mode: "down", Durability: c.cfg.Durability,
		ServerID: c.cfg.IDs[id-1], Admin: c.cfg.AdminAddrs[id-1] != ""}
	text, err := fourLetter(ctx, addr, "srvr")
	if err != nil {
		m.Error = err.Error()
		return m
	}
	m.Up = true
	s, err := parseSrvr(text)
	if err != nil {
		m.Mode = "electing"
		m.Error = err.Error()
		return m
	}
	m.Serving = true
	m.Mode, m.Version = s.Mode, s.Version
	m.Zxid = hex64(s.Zxid)
	m.Epoch, m.Counter = int64(uint64(s.Zxid)>>32), s.Zxid&0xffffffff
	m.LatencyMin, m.LatencyAvg, m.LatencyMax = s.LatencyMin, s.LatencyAvg, s.LatencyMax
	m.Received, m.Sent = s.Received, s.Sent
	m.Connections, m.Outstanding, m.Znodes = s.Connections, s.Outstanding, s.NodeCount

	text, err = fourLetter(ctx, addr, "mntr")
	if err != nil {
		m.Error = "mntr: " + err.Error()
		return m
	}
	mn := parseMntr(text)
	num := func(k string) int64 { v, _ := strconv.ParseInt(mn[k], 10, 64); return v }
	flt := func(k string) float64 { v, _ := strconv.ParseFloat(mn[k], 64); return v }
	m.Sessions = num("global_sessions")
	m.Watches = num("watch_count")
	m.Ephemerals = num("ephemerals_count")
	m.DataSize = num("approximate_data_size")
	m.Uptime = num("uptime")
	m.FsyncCount = num("fsync_count")
	m.FsyncAvg = flt("avg_fsynctime")
	m.SnapCount = num("cnt_snapshottime")
	m.SnapAvg = flt("avg_snapshottime")
	m.Elections = num("looking_count")
	m.ElectionAvg = flt("avg_election_time")
	m.ElectionMax = flt("max_election_time")
	if admin := c.cfg.AdminAddrs[id-1]; admin != "" {
		m.LastSnapZxid, m.LastSnapTime, err = lastSnapshot(ctx, admin)
		if err != nil {
			m.LastSnapErr = err.Error()
		}
	}
	if d := mn["durability"]; d != "" {
		m.Durability = d
	}
	if m.Mode == "leader" {
		m.Learners = num("learners")
		m.SyncedFollower = num("synced_followers")
		m.PendingSyncs = num("pending_syncs")
		if up, ok := mn["leader_uptime"]; ok {
			if ms, err := strconv.ParseInt(up, 10, 64); err == nil {
				m.LeaderSince = now.Add(-time.Duration(ms) * time.Millisecond).UnixMilli()
			}
		}
	}
	return m
}

// lastSnapshot asks a member's AdminServer for last_snapshot: the zxid
// (hex) and time of its newest snapshot; "" and 0 when it has none.
func lastSnapshot(ctx context.Context, admin string) (string, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, flwTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+"/commands/last_snapshot", nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("AdminServer last_snapshot: %s", resp.Status)
	}
	var v struct {
		Zxid      string `json:"zxid"`
		Timestamp int64  `json:"timestamp"` // seconds
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&v); err != nil {
		return "", 0, fmt.Errorf("AdminServer last_snapshot: %w", err)
	}
	z, err := strconv.ParseUint(v.Zxid, 16, 64)
	if err != nil {
		return "", 0, fmt.Errorf("AdminServer last_snapshot: zxid %q", v.Zxid)
	}
	if z == ^uint64(0) || v.Timestamp < 0 {
		return "", 0, nil // no snapshot yet
	}
	return hex64(int64(z)), v.Timestamp * 1000, nil
}

// memberIndex reads ?member=N (1-based); 0 means every member.
func (c *Console) memberIndex(cl *call) ([]int, error) {
	s := cl.r.URL.Query().Get("member")
	if s == "" || s == "0" {
		idx := make([]int, len(c.cfg.Servers))
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > len(c.cfg.Servers) {
		return nil, badRequest("member must be 1.." + strconv.Itoa(len(c.cfg.Servers)))
	}
	return []int{n - 1}, nil
}

type memberConns struct {
	ID          int          `json:"id"`
	Addr        string       `json:"addr"`
	Error       string       `json:"error,omitempty"`
	Connections []connection `json:"connections"`
}

// handleSessions: GET api/sessions?member=N: every member's connections
// and their sessions, from cons.
func (c *Console) handleSessions(cl *call) (any, error) {
	idx, err := c.memberIndex(cl)
	if err != nil {
		return nil, err
	}
	out := make([]memberConns, len(idx))
	var wg sync.WaitGroup
	for j, i := range idx {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mc := memberConns{ID: i + 1, Addr: c.cfg.Servers[i], Connections: []connection{}}
			text, err := fourLetter(cl.ctx, mc.Addr, "cons")
			if err == nil {
				var conns []connection
				conns, err = parseCons(text)
				if conns != nil {
					mc.Connections = conns
				}
			}
			if err != nil {
				mc.Error = err.Error()
			}
			out[j] = mc
		}()
	}
	wg.Wait()
	return map[string]any{"members": out}, nil
}

// maxWatchPaths bounds the watched paths one watches answer lists.
const maxWatchPaths = 2000

type memberWatches struct {
	ID          int            `json:"id"`
	Addr        string         `json:"addr"`
	Error       string         `json:"error,omitempty"`
	Connections int64          `json:"connections"`
	Paths       int64          `json:"paths"`
	Total       int64          `json:"total"`
	Sessions    []watchSession `json:"sessions"`
	Truncated   bool           `json:"truncated"`
}

// handleWatches: GET api/watches?member=N: wchs totals and wchc's watched
// paths by session.
func (c *Console) handleWatches(cl *call) (any, error) {
	idx, err := c.memberIndex(cl)
	if err != nil {
		return nil, err
	}
	out := make([]memberWatches, len(idx))
	var wg sync.WaitGroup
	for j, i := range idx {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mw := memberWatches{ID: i + 1, Addr: c.cfg.Servers[i], Sessions: []watchSession{}}
			text, err := fourLetter(cl.ctx, mw.Addr, "wchs")
			if err == nil {
				mw.Connections, mw.Paths, mw.Total, err = parseWchs(text)
			}
			if err == nil {
				text, err = fourLetter(cl.ctx, mw.Addr, "wchc")
				if err == nil || err == errTruncated {
					cut := err == errTruncated
					var ss []watchSession
					ss, mw.Truncated, err = parseWchc(text, maxWatchPaths)
					mw.Truncated = mw.Truncated || cut
					if ss != nil {
						mw.Sessions = ss
					}
				}
			}
			if err != nil {
				mw.Error = err.Error()
			}
			out[j] = mw
		}()
	}
	wg.Wait()
	return map[string]any{"members": out}, nil
}
