package console

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
)

// The Key-value page: the replica group behind admin.console.kvEndpoints
// (each member's role, from a ListTables asked of it alone: the leader
// answers, a follower fails with a NotLeader detail naming the leader),
// the tables and their families, and read-only get and scan through
// kvclient (which follows the leader). Nothing connects until the page
// asks; the gRPC connections are made lazily and closed with the console.

// kvProbeTimeout bounds one member's ListTables on the group view.
const kvProbeTimeout = 2 * time.Second

// maxScanRows bounds a scan the page asks for.
const maxScanRows = 1000

// kvConns holds the console's connections to the KV members.
type kvConns struct {
	endpoints []string

	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn // guarded by mu
	client *kvclient.Client            // guarded by mu; nil until first use
	closed bool                        // guarded by mu
}

func (k *kvConns) conn(addr string) (kvpb.KVClient, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, errors.New("console closed")
	}
	cc, ok := k.conns[addr]
	if !ok {
		var err error
		cc, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, err
		}
		if k.conns == nil {
			k.conns = make(map[string]*grpc.ClientConn)
		}
		k.conns[addr] = cc
	}
	return kvpb.NewKVClient(cc), nil
}

func (k *kvConns) kvClient() (*kvclient.Client, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, errors.New("console closed")
	}
	if k.client == nil {
		c, err := kvclient.New(kvclient.Config{Endpoints: k.endpoints})
		if err != nil {
			return nil, err
		}
		k.client = c
	}
	return k.client, nil
}

func (k *kvConns) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	for a, cc := range k.conns {
		cc.Close()
		delete(k.conns, a)
	}
	if k.client != nil {
		k.client.Close()
		k.client = nil
	}
}

type kvMemberJSON struct {
	Addr       string `json:"addr"`
	Reachable  bool   `json:"reachable"`
	Role       string `json:"role"` // leader, follower, electing (no leader known), down
	LeaderID   uint64 `json:"leaderId,omitempty"`
	LeaderAddr string `json:"leaderAddr,omitempty"`
	Epoch      uint32 `json:"epoch,omitempty"`
	Error      string `json:"error,omitempty"`
}

type familyJSON struct {
	Name        string `json:"name"`
	MaxVersions uint32 `json:"maxVersions"`
}

type tableJSON struct {
	Name     string       `json:"name"`
	Families []familyJSON `json:"families"`
}

type kvGroupJSON struct {
	Configured bool           `json:"configured"`
	Members    []kvMemberJSON `json:"members"`
	Leader     string         `json:"leader,omitempty"`
	LeaderID   uint64         `json:"leaderId,omitempty"`
	Epoch      uint32         `json:"epoch,omitempty"`
	Tables     []tableJSON    `json:"tables"`
	Error      string         `json:"error,omitempty"`
}

// handleKVGroup: GET api/kv/group: every member's role and the tables.
func (c *Console) handleKVGroup(cl *call) (any, error) {
	out := kvGroupJSON{Configured: len(c.cfg.KVEndpoints) > 0, Members: []kvMemberJSON{}, Tables: []tableJSON{}}
	if !out.Configured {
		return out, nil
	}
	out.Members = make([]kvMemberJSON, len(c.cfg.KVEndpoints))
	tables := make([]*kvpb.ListTablesResponse, len(c.cfg.KVEndpoints))
	var wg sync.WaitGroup
	for i, addr := range c.cfg.KVEndpoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out.Members[i], tables[i] = c.kvProbe(cl.ctx, addr)
		}()
	}
	wg.Wait()
	for i, m := range out.Members {
		switch {
		case m.Role == "leader":
			out.Leader = m.Addr
			out.Epoch = m.Epoch
			for _, t := range tables[i].GetTables() {
				tj := tableJSON{Name: t.GetName(), Families: []familyJSON{}}
				for _, f := range t.GetFamilies() {
					tj.Families = append(tj.Families, familyJSON{Name: f.GetName(), MaxVersions: max(f.GetMaxVersions(), 1)})
				}
				out.Tables = append(out.Tables, tj)
			}
		case m.Role == "follower" && out.Leader == "":
			out.LeaderID, out.Epoch = m.LeaderID, m.Epoch
		}
	}
	if out.Leader == "" {
		out.Error = "no member answered as the leader"
	}
	return out, nil
}

// kvProbe asks one member alone for the tables: its answer, a NotLeader
// detail or a transport failure says what it is.
func (c *Console) kvProbe(ctx context.Context, addr string) (kvMemberJSON, *kvpb.ListTablesResponse) {
	m := kvMemberJSON{Addr: addr, Role: "down"}
	kc, err := c.kv.conn(addr)
	if err != nil {
		m.Error = err.Error()
		return m, nil
	}
	ctx, cancel := context.WithTimeout(ctx, kvProbeTimeout)
	defer cancel()
	resp, err := kc.ListTables(ctx, &kvpb.ListTablesRequest{})
	if err == nil {
		m.Reachable, m.Role = true, "leader"
		return m, resp
	}
	if nl, ok := kvclient.NotLeader(err); ok {
		m.Reachable, m.Role = true, "follower"
		m.LeaderID, m.LeaderAddr, m.Epoch = nl.GetLeaderId(), nl.GetLeaderAddress(), nl.GetEpoch()
		if nl.GetLeaderAddress() == "" {
			m.Role = "electing"
		}
		return m, nil
	}
	st, _ := status.FromError(err)
	if st.Code() != codes.Unavailable && st.Code() != codes.DeadlineExceeded {
		m.Reachable = true // it answered, with something else
		m.Role = "unknown"
	}
	m.Error = st.Message()
	return m, nil
}

type cellJSON struct {
	Family    string `json:"family"`
	Qualifier []byte `json:"qualifier"` // base64 in JSON
	Value     []byte `json:"value"`
	Version   uint64 `json:"version"`
	Zxid      string `json:"zxid"`
}

type rowJSON struct {
	Key   []byte     `json:"key"`
	Cells []cellJSON `json:"cells"`
}

func cellsJSON(cs []*kvpb.Cell) []cellJSON {
	out := make([]cellJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, cellJSON{Family: c.GetFamily(), Qualifier: c.GetQualifier(), Value: c.GetValue(),
			Version: c.GetVersion(), Zxid: hex64(int64(c.GetVersion()))})
	}
	return out
}

// rowKey reads a row key from the query: name as text, or hex when
// enc=hex.
func rowKey(cl *call, name string) ([]byte, error) {
	q := cl.r.URL.Query()
	v := q.Get(name)
	if q.Get("enc") == "hex" {
		b, err := hex.DecodeString(v)
		if err != nil {
			return nil, badRequest(name + " is not hexadecimal")
		}
		return b, nil
	}
	return []byte(v), nil
}

func (c *Console) kvConfigured() error {
	if len(c.cfg.KVEndpoints) == 0 {
		return &apiError{Status: http.StatusNotFound, Code: "NOTCONFIGURED",
			Message: "no key-value endpoints (set admin.console.kvEndpoints=host:port,...)"}
	}
	return nil
}

// handleKVGet: GET api/kv/get?table=T&row=R[&enc=hex]: the row's newest
// cells.
func (c *Console) handleKVGet(cl *call) (any, error) {
	if err := c.kvConfigured(); err != nil {
		return nil, err
	}
	table := cl.r.URL.Query().Get("table")
	if table == "" {
		return nil, badRequest("table is required")
	}
	row, err := rowKey(cl, "row")
	if err != nil {
		return nil, err
	}
	kc, err := c.kv.kvClient()
	if err != nil {
		return nil, err
	}
	resp, err := kc.Get(cl.ctx, &kvpb.GetRequest{Table: table, Row: row})
	if err != nil {
		return nil, err
	}
	return rowJSON{Key: row, Cells: cellsJSON(resp.GetCells())}, nil
}

// handleKVScan: GET api/kv/scan?table=T[&from=R][&enc=hex][&limit=N]:
// the first N rows from R (default 50, at most maxScanRows).
func (c *Console) handleKVScan(cl *call) (any, error) {
	if err := c.kvConfigured(); err != nil {
		return nil, err
	}
	q := cl.r.URL.Query()
	table := q.Get("table")
	if table == "" {
		return nil, badRequest("table is required")
	}
	from, err := rowKey(cl, "from")
	if err != nil {
		return nil, err
	}
	limit := 50
	if s := q.Get("limit"); s != "" {
		limit, err = strconv.Atoi(s)
		if err != nil || limit < 1 || limit > maxScanRows {
			return nil, badRequest("limit must be 1.." + strconv.Itoa(maxScanRows))
		}
	}
	kc, err := c.kv.kvClient()
	if err != nil {
		return nil, err
	}
	// One row more than asked says whether there are more.
	resp, err := kc.Scan(cl.ctx, &kvpb.ScanRequest{Table: table, From: from, Limit: uint32(limit + 1)})
	if err != nil {
		return nil, err
	}
	rows := resp.GetRows()
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := make([]rowJSON, 0, len(rows))
	for _, r := range rows {
		out = append(out, rowJSON{Key: r.GetKey(), Cells: cellsJSON(r.GetCells())})
	}
	return map[string]any{"rows": out, "more": more}, nil
}
