package kvserver

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/transport"
)

// BalanceTicks is the leader balancer's round in a LocalCluster, in
// ticks.
const BalanceTicks = 10

// LocalCluster describes a sharded cluster on loopback: replicas storage
// nodes, each hosting one member of every one of groups RGs, with every
// listener already open so each address is known before anything runs.
// Node n (1-based) is member n of every RG; RG g prefers to be led from
// node (g-1) mod replicas + 1 (Config.PreferredLeader), so that the RGs'
// leaders start on different nodes.
type LocalCluster struct {
	Nodes []NodeConfig
	// Files are each node's configuration file (NodeFile), under dir.
	Files []string
}

// NewLocalCluster opens the listeners and writes dir/nodeN/node.json for
// each node. On error nothing stays open.
func NewLocalCluster(groups, replicas int, dir string, mode replica.Mode, tick time.Duration, cmConnect, cmRoot string, logger *slog.Logger) (lc *LocalCluster, err error) {
	if groups < 1 || replicas < 1 || groups > 1000 || replicas > 64 {
		return nil, fmt.Errorf("kvserver: %d groups of %d replicas", groups, replicas)
	}
	var opened []net.Listener
	defer func() {
		if err != nil {
			for _, l := range opened {
				l.Close()
			}
		}
	}()
	listen := func() (net.Listener, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			opened = append(opened, l)
		}
		return l, err
	}
	lc = &LocalCluster{}
	peers := map[uint64]transport.Peer{}
	apis := map[uint64]string{}
	for n := range replicas {
		var ls [3]net.Listener
		for i := range ls {
			if ls[i], err = listen(); err != nil {
				return nil, err
			}
		}
		id := uint64(n + 1)
		peers[id] = transport.Peer{QuorumAddr: ls[0].Addr().String(), ElectionAddr: ls[1].Addr().String()}
		apis[id] = ls[2].Addr().String()
		lc.Nodes = append(lc.Nodes, NodeConfig{
			ID: id, Peers: peers, QuorumListener: ls[0], ElectionListener: ls[1],
			APIListen: ls[2].Addr().String(), APIListener: ls[2],
			Groups: map[ring.GroupID]Config{}, CM: cmConnect, CMRoot: cmRoot,
			Balance: BalanceTicks * tick,
			Logger:  logger.With("node", id),
		})
	}
	for g := 1; g <= groups; g++ {
		for n := range replicas {
			lc.Nodes[n].Groups[ring.GroupID(g)] = Config{
				ID: uint64(n + 1), Peers: peers, APIAddrs: apis,
				Dir:  filepath.Join(dir, fmt.Sprintf("node%d", n+1), fmt.Sprintf("rg%d", g)),
				Mode: mode, TickTime: tick,
				PreferredLeader: uint64((g-1)%replicas + 1),
			}
		}
	}
	for n, nc := range lc.Nodes {
		f := filepath.Join(dir, fmt.Sprintf("node%d", n+1), "node.json")
		if err := WriteNodeFile(f, nc); err != nil {
			return nil, err
		}
		lc.Files = append(lc.Files, f)
	}
	return lc, nil
}

// Tune sets the compaction-aware leader change and pebble's memtable
// size on every replica of every node and writes the node files again.
func (lc *LocalCluster) Tune(leaderChange kv.LeaderChangeConfig, memTableSize uint64) error {
	for n, nc := range lc.Nodes {
		for g, c := range nc.Groups {
			c.LeaderChange, c.MemTableSize = leaderChange, memTableSize
			nc.Groups[g] = c
		}
		if n < len(lc.Files) {
			if err := WriteNodeFile(lc.Files[n], nc); err != nil {
				return err
			}
		}
	}
	return nil
}

// CloseListeners closes every listener the cluster opened, for nodes run
// elsewhere (their own processes) that listen on the same addresses.
func (lc *LocalCluster) CloseListeners() {
	for i := range lc.Nodes {
		n := &lc.Nodes[i]
		for _, l := range []net.Listener{n.APIListener, n.QuorumListener, n.ElectionListener} {
			if l != nil {
				l.Close()
			}
		}
		n.APIListener, n.QuorumListener, n.ElectionListener = nil, nil, nil
	}
}

// Endpoints are the nodes' API addresses.
func (lc *LocalCluster) Endpoints() []string {
	var eps []string
	for _, n := range lc.Nodes {
		eps = append(eps, n.APIListen)
	}
	return eps
}

// Registrations are the RGs' members as the CM records them.
func (lc *LocalCluster) Registrations() map[ring.GroupID]cm.GroupInfo {
	out := map[ring.GroupID]cm.GroupInfo{}
	for _, n := range lc.Nodes {
		for g, c := range n.Groups {
			gi := out[g]
			gi.Members = append(gi.Members, cm.Member{ID: c.ID, Addr: n.APIListen})
			out[g] = gi
		}
	}
	for g, gi := range out {
		slices.SortFunc(gi.Members, func(a, b cm.Member) int { return int(a.ID) - int(b.ID) })
		out[g] = gi
	}
	return out
}

// NodeFile is a storage node's configuration on disk (JSON), enough to
// run the node alone with `corral kv node -config FILE`.
type NodeFile struct {
	ID  uint64 `json:"id"`
	API string `json:"api"`
	// Peers maps each node id to its "quorumAddr", "electionAddr".
	Peers map[string][2]string `json:"peers"`
	// APIs maps each node id to its API address.
	APIs       map[string]string `json:"apis"`
	CM         string            `json:"cm"`
	CMRoot     string            `json:"cm_root,omitempty"`
	Durability string            `json:"durability"`
	TickMillis int64             `json:"tick_ms"`
	// BalanceMillis is the leader balancer's round; 0 turns it off.
	BalanceMillis int64 `json:"balance_ms"`
	// LeaderPolicy, LeaderThreshold and LeaderMinIntervalMillis configure
	// every replica's compaction-aware leader change ("" or "fixed": off;
	// 0: the defaults); MemTableSize is pebble's (0: pebble's default).
	LeaderPolicy            string      `json:"leader_policy,omitempty"`
	LeaderThreshold         float64     `json:"leader_threshold,omitempty"`
	LeaderMinIntervalMillis int64       `json:"leader_min_interval_ms,omitempty"`
	MemTableSize            uint64      `json:"memtable_size,omitempty"`
	Groups                  []GroupFile `json:"groups"`
	// Metrics is where the node serves its Prometheus metrics ("": none).
	Metrics string `json:"metrics,omitempty"`
}

// GroupFile is the node's member of one RG.
type GroupFile struct {
	Group   uint32   `json:"group"`
	Dir     string   `json:"dir"`
	Members []uint64 `json:"members"`
	// Preferred is the member that should lead a fresh group (0: any).
	Preferred uint64 `json:"preferred,omitempty"`
}

// WriteNodeFile writes nc as a NodeFile at path.
func WriteNodeFile(path string, nc NodeConfig) error {
	f := NodeFile{ID: nc.ID, API: nc.APIListen, CM: nc.CM, CMRoot: nc.CMRoot, BalanceMillis: nc.Balance.Milliseconds(),
		Peers: map[string][2]string{}, APIs: map[string]string{}, Metrics: nc.MetricsListen}
	for id, p := range nc.Peers {
		f.Peers[strconv.FormatUint(id, 10)] = [2]string{p.QuorumAddr, p.ElectionAddr}
	}
	for g, c := range nc.Groups {
		f.Durability = c.Mode.String()
		f.TickMillis = c.TickTime.Milliseconds()
		if lcc := c.LeaderChange; lcc.Policy != kv.PolicyFixed {
			f.LeaderPolicy = lcc.Policy.String()
			f.LeaderThreshold = lcc.Threshold
			f.LeaderMinIntervalMillis = lcc.MinInterval.Milliseconds()
		}
		f.MemTableSize = c.MemTableSize
		gf := GroupFile{Group: uint32(g), Dir: c.Dir, Preferred: c.PreferredLeader}
		for id := range c.Peers {
			gf.Members = append(gf.Members, id)
		}
		slices.Sort(gf.Members)
		for id, a := range c.APIAddrs {
			f.APIs[strconv.FormatUint(id, 10)] = a
		}
		f.Groups = append(f.Groups, gf)
	}
	slices.SortFunc(f.Groups, func(a, b GroupFile) int { return int(a.Group) - int(b.Group) })
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadNodeFile reads a NodeFile into a NodeConfig.
func ReadNodeFile(path string, logger *slog.Logger) (NodeConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return NodeConfig{}, err
	}
	var f NodeFile
	if err := json.Unmarshal(b, &f); err != nil {
		return NodeConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	mode, err := parseMode(f.Durability)
	if err != nil {
		return NodeConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	if f.ID == 0 || f.TickMillis <= 0 || f.API == "" || f.CM == "" || len(f.Groups) == 0 {
		return NodeConfig{}, fmt.Errorf("%s: needs id, api, cm, tick_ms and groups", path)
	}
	leaderChange := kv.LeaderChangeConfig{Threshold: f.LeaderThreshold,
		MinInterval: time.Duration(f.LeaderMinIntervalMillis) * time.Millisecond}
	if f.LeaderPolicy != "" {
		if leaderChange.Policy, err = kv.ParseLeaderPolicy(f.LeaderPolicy); err != nil {
			return NodeConfig{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	if f.LeaderThreshold < 0 || f.LeaderMinIntervalMillis < 0 {
		return NodeConfig{}, fmt.Errorf("%s: leader_threshold and leader_min_interval_ms must not be negative", path)
	}
	if f.MemTableSize >= 4<<30 {
		return NodeConfig{}, fmt.Errorf("%s: memtable_size %d: want up to 4 GiB", path, f.MemTableSize)
	}
	nc := NodeConfig{ID: f.ID, APIListen: f.API, CM: f.CM, CMRoot: f.CMRoot, Groups: map[ring.GroupID]Config{},
		Peers: map[uint64]transport.Peer{}, Logger: logger, Balance: time.Duration(f.BalanceMillis) * time.Millisecond,
		MetricsListen: f.Metrics, MetricsRuntime: f.Metrics != ""}
	apis := map[uint64]string{}
	for k, p := range f.Peers {
		id, err := strconv.ParseUint(k, 10, 64)
		if err != nil || id == 0 {
			return NodeConfig{}, fmt.Errorf("%s: bad node id %q", path, k)
		}
		nc.Peers[id] = transport.Peer{QuorumAddr: p[0], ElectionAddr: p[1]}
	}
	for k, a := range f.APIs {
		id, err := strconv.ParseUint(k, 10, 64)
		if err != nil || id == 0 {
			return NodeConfig{}, fmt.Errorf("%s: bad node id %q", path, k)
		}
		apis[id] = a
	}
	if _, ok := nc.Peers[f.ID]; !ok {
		return NodeConfig{}, fmt.Errorf("%s: node %d is not among its peers", path, f.ID)
	}
	for _, gf := range f.Groups {
		if gf.Group == 0 || gf.Dir == "" || len(gf.Members) == 0 {
			return NodeConfig{}, fmt.Errorf("%s: a group needs group, dir and members", path)
		}
		c := Config{ID: f.ID, Dir: gf.Dir, Mode: mode, PreferredLeader: gf.Preferred,
			LeaderChange: leaderChange, MemTableSize: f.MemTableSize,
			TickTime: time.Duration(f.TickMillis) * time.Millisecond,
			Peers:    map[uint64]transport.Peer{}, APIAddrs: apis}
		for _, id := range gf.Members {
			p, ok := nc.Peers[id]
			if !ok {
				return NodeConfig{}, fmt.Errorf("%s: rg%d: member %d is not a node", path, gf.Group, id)
			}
			c.Peers[id] = p
		}
		if _, ok := c.Peers[f.ID]; !ok {
			return NodeConfig{}, fmt.Errorf("%s: rg%d: this node is not a member", path, gf.Group)
		}
		if _, dup := nc.Groups[ring.GroupID(gf.Group)]; dup {
			return NodeConfig{}, fmt.Errorf("%s: rg%d twice", path, gf.Group)
		}
		nc.Groups[ring.GroupID(gf.Group)] = c
	}
	return nc, nil
}

func parseMode(s string) (replica.Mode, error) {
	switch s {
	case "sync", "":
		return replica.Sync, nil
	case "async":
		return replica.Async, nil
	case "diskless":
		return replica.Diskless, nil
	}
	return replica.Sync, fmt.Errorf("durability %q: want sync, async or diskless", s)
}
