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

	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/transport"
)

// LocalCluster describes a sharded cluster on loopback: replicas storage
// nodes, each hosting one member of every one of groups RGs, with every
// listener already open so each address is known before anything runs.
//
// Member ids rotate over the nodes (RG g's member on node n has id
// (n+g-1) mod replicas + 1), so that zab's preference for the highest id
// at a first election spreads the RGs' leaders over the nodes.
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
	apis := make([]net.Listener, replicas)
	for n := range replicas {
		if apis[n], err = listen(); err != nil {
			return nil, err
		}
		lc.Nodes = append(lc.Nodes, NodeConfig{
			APIListen: apis[n].Addr().String(), APIListener: apis[n],
			Groups: map[ring.GroupID]Config{}, CM: cmConnect, CMRoot: cmRoot,
			Logger: logger.With("node", n+1),
		})
	}
	for g := 1; g <= groups; g++ {
		gid := ring.GroupID(g)
		peers := map[uint64]transport.Peer{}
		addrs := map[uint64]string{}
		// RG g prefers to be led from node (g-1) mod replicas.
		pn := (g - 1) % replicas
		preferred := uint64((pn+g-1)%replicas + 1)
		for n := range replicas {
			id := uint64((n+g-1)%replicas + 1)
			q, err := listen()
			if err != nil {
				return nil, err
			}
			e, err := listen()
			if err != nil {
				return nil, err
			}
			peers[id] = transport.Peer{QuorumAddr: q.Addr().String(), ElectionAddr: e.Addr().String()}
			addrs[id] = apis[n].Addr().String()
			lc.Nodes[n].Groups[gid] = Config{
				ID: id, Peers: peers, APIAddrs: addrs,
				Dir:  filepath.Join(dir, fmt.Sprintf("node%d", n+1), fmt.Sprintf("rg%d", g)),
				Mode: mode, TickTime: tick, QuorumListener: q, ElectionListener: e,
				PreferredLeader: preferred,
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

// CloseListeners closes every listener the cluster opened, for nodes run
// elsewhere (their own processes) that listen on the same addresses.
func (lc *LocalCluster) CloseListeners() {
	for i := range lc.Nodes {
		n := &lc.Nodes[i]
		if n.APIListener != nil {
			n.APIListener.Close()
			n.APIListener = nil
		}
		for g, c := range n.Groups {
			if c.QuorumListener != nil {
				c.QuorumListener.Close()
			}
			if c.ElectionListener != nil {
				c.ElectionListener.Close()
			}
			c.QuorumListener, c.ElectionListener = nil, nil
			n.Groups[g] = c
		}
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
	API        string      `json:"api"`
	CM         string      `json:"cm"`
	CMRoot     string      `json:"cm_root,omitempty"`
	Durability string      `json:"durability"`
	TickMillis int64       `json:"tick_ms"`
	Groups     []GroupFile `json:"groups"`
}

// GroupFile is the node's member of one RG.
type GroupFile struct {
	Group uint32 `json:"group"`
	ID    uint64 `json:"id"`
	Dir   string `json:"dir"`
	// Preferred is the member that should lead a fresh group (0: any).
	Preferred uint64 `json:"preferred,omitempty"`
	// Peers maps each member id to "quorumAddr,electionAddr".
	Peers map[string][2]string `json:"peers"`
	// APIs maps each member id to its node's API address.
	APIs map[string]string `json:"apis"`
}

// WriteNodeFile writes nc as a NodeFile at path.
func WriteNodeFile(path string, nc NodeConfig) error {
	f := NodeFile{API: nc.APIListen, CM: nc.CM, CMRoot: nc.CMRoot}
	for g, c := range nc.Groups {
		f.Durability = c.Mode.String()
		f.TickMillis = c.TickTime.Milliseconds()
		gf := GroupFile{Group: uint32(g), ID: c.ID, Dir: c.Dir, Preferred: c.PreferredLeader, Peers: map[string][2]string{}, APIs: map[string]string{}}
		for id, p := range c.Peers {
			gf.Peers[strconv.FormatUint(id, 10)] = [2]string{p.QuorumAddr, p.ElectionAddr}
		}
		for id, a := range c.APIAddrs {
			gf.APIs[strconv.FormatUint(id, 10)] = a
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
	if f.TickMillis <= 0 || f.API == "" || f.CM == "" || len(f.Groups) == 0 {
		return NodeConfig{}, fmt.Errorf("%s: needs api, cm, tick_ms and groups", path)
	}
	nc := NodeConfig{APIListen: f.API, CM: f.CM, CMRoot: f.CMRoot, Groups: map[ring.GroupID]Config{}, Logger: logger}
	for _, gf := range f.Groups {
		if gf.Group == 0 || gf.ID == 0 || gf.Dir == "" {
			return NodeConfig{}, fmt.Errorf("%s: a group needs group, id and dir", path)
		}
		c := Config{ID: gf.ID, Dir: gf.Dir, Mode: mode, PreferredLeader: gf.Preferred, TickTime: time.Duration(f.TickMillis) * time.Millisecond,
			Peers: map[uint64]transport.Peer{}, APIAddrs: map[uint64]string{}}
		for k, p := range gf.Peers {
			id, err := strconv.ParseUint(k, 10, 64)
			if err != nil || id == 0 {
				return NodeConfig{}, fmt.Errorf("%s: rg%d: bad member id %q", path, gf.Group, k)
			}
			c.Peers[id] = transport.Peer{QuorumAddr: p[0], ElectionAddr: p[1]}
		}
		for k, a := range gf.APIs {
			id, err := strconv.ParseUint(k, 10, 64)
			if err != nil || id == 0 {
				return NodeConfig{}, fmt.Errorf("%s: rg%d: bad member id %q", path, gf.Group, k)
			}
			c.APIAddrs[id] = a
		}
		if _, ok := c.Peers[c.ID]; !ok {
			return NodeConfig{}, fmt.Errorf("%s: rg%d: member %d is not among its peers", path, gf.Group, c.ID)
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
