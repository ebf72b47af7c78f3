package kvserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/apisrv"
	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/zab"
)

// NodeConfig configures a storage node of a sharded cluster: one API
// listener, one TCP transport to the other nodes that every replica's
// messages share (tagged by RG), and one replica of each RG in Groups.
type NodeConfig struct {
	// ID is the node's id: its server id in every RG it hosts, and its
	// transport's.
	ID uint64
	// Peers are every node's quorum and election addresses, this node's
	// included: the nodes hosting any RG this one hosts.
	Peers map[uint64]transport.Peer
	// QuorumListener and ElectionListener, if set, are used instead of
	// listening on Peers[ID].
	QuorumListener, ElectionListener net.Listener
	// APIListen is where the node serves the KV API; APIListener, if
	// set, is used instead.
	APIListen   string
	APIListener net.Listener
	// Groups are the node's replicas, by RG. Each Config is a member's:
	// its ID is the node's, its Peers' keys are the RG's members (their
	// addresses and the Config's listeners are not used: the node's
	// transport carries the RG), its APIAddrs map the members to the API
	// addresses of their nodes, its API fields are ignored.
	Groups map[ring.GroupID]Config
	// CM is the configuration manager's connect string (host:port,...),
	// CMRoot the znode under which the configuration lives ("" means
	// cm.DefaultRoot).
	CM     string
	CMRoot string
	// Balance, if positive, is the leader balancer's round: that often
	// the node hands one RG's leadership to a synced follower node that
	// leads at least two fewer RGs (balance.go).
	Balance time.Duration
	Logger  *slog.Logger
	// MetricsListen, if set, is where the node serves its Prometheus
	// metrics (nodemetrics.go); MetricsListener a listener opened for it
	// instead; MetricsRuntime adds the Go runtime's and the process's.
	MetricsListen   string
	MetricsListener net.Listener
	MetricsRuntime  bool
}

// node is the state RunNode shares between the replicas' role callbacks
// and the CM session.
type node struct {
	log   *slog.Logger
	ring  atomic.Pointer[ring.Ring] // the ring routed by; nil until read
	state atomic.Pointer[cm.State]  // the CM's latest, for forwarding
	reps  map[ring.GroupID]*replicaRun

	cmu   sync.Mutex
	conns map[string]*grpc.ClientConn // guarded by cmu: forwarding's, closed by closeConns

	mu sync.Mutex
	// Guarded by mu.
	leading map[ring.GroupID]uint32        // epoch each local replica leads in; absent if none
	anns    map[ring.GroupID]*cm.Announcer // this CM session's; nil between sessions
}

// Ring is the ring the node routes by (kv.RingSource).
func (n *node) Ring() *ring.Ring { return n.ring.Load() }

// LeaderClient is a client of RG g's leader for forwarding
// (kv.Forwarder): the local replica's view of its leader if it has one,
// else the leader the CM records.
func (n *node) LeaderClient(g uint32) (kvpb.KVClient, error) {
	var addr string
	if r, ok := n.reps[ring.GroupID(g)]; ok {
		if _, l := r.group.Leader(); l.Known {
			addr = l.Addr
		}
	}
	if addr == "" {
		if l, ok := n.state.Load().LeaderOf(ring.GroupID(g)); ok {
			addr = l.Addr
		}
	}
	if addr == "" {
		return nil, fmt.Errorf("kvserver: rg%d: no leader known", g)
	}
	n.cmu.Lock()
	defer n.cmu.Unlock()
	if n.conns == nil {
		return nil, errors.New("kvserver: node stopping")
	}
	cc, ok := n.conns[addr]
	if !ok {
		var err error
		if cc, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return nil, err
		}
		n.conns[addr] = cc
	}
	return kvpb.NewKVClient(cc), nil
}

func (n *node) closeConns() {
	n.cmu.Lock()
	defer n.cmu.Unlock()
	for _, cc := range n.conns {
		cc.Close()
	}
	n.conns = nil
}

// onRole records a replica's leadership and announces it in the CM.
func (n *node) onRole(g ring.GroupID, ss zab.SoftState) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !ss.Established() {
		delete(n.leading, g)
		return
	}
	n.leading[g] = ss.Epoch
	if a := n.anns[g]; a != nil {
		a.Leading(uint64(ss.Epoch))
	}
}

// RunNode runs a storage node until ctx ends: every replica, the API
// routing each request to the local RG that owns its row, and a session
// with the configuration manager that follows the ring and records each
// local replica's leadership (guarded by its zab epoch) when it begins.
func RunNode(ctx context.Context, cfg NodeConfig, ready func(apiAddr string)) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if _, ok := cfg.Peers[cfg.ID]; !ok || cfg.ID == 0 {
		return fmt.Errorf("kvserver: node id %d is not among its peers", cfg.ID)
	}
	if len(cfg.Groups) == 0 {
		return errors.New("kvserver: a node without replica groups")
	}
	if cfg.CM == "" {
		return errors.New("kvserver: a node needs the configuration manager's connect string")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	n := &node{log: cfg.Logger, leading: map[ring.GroupID]uint32{}, conns: map[string]*grpc.ClientConn{}}
	defer n.closeConns()

	lis := cfg.APIListener
	if lis == nil {
		var err error
		if lis, err = net.Listen("tcp", cfg.APIListen); err != nil {
			return fmt.Errorf("kvserver: API listener: %w", err)
		}
	}
	nm, err := openNodeMetrics(cfg)
	if err != nil {
		lis.Close()
		return err
	}
	defer nm.close()
	srv := apisrv.FromListener(lis, nm.apiOptions())
	apiAddr := srv.Addr().String()

	lost := &lostLinks{}
	tr, err := transport.NewTCP(ctx, transport.TCPConfig{ID: cfg.ID, Peers: cfg.Peers,
		QuorumListener: cfg.QuorumListener, ElectionListener: cfg.ElectionListener, Logger: cfg.Logger,
		OnDisconnect: lost.report})
	if err != nil {
		lis.Close()
		return fmt.Errorf("kvserver: node transport: %w", err)
	}
	defer tr.Close()
	mx := newMux(tr, cfg.Logger)

	reps := map[ring.GroupID]*replicaRun{}
	defer func() {
		for _, r := range reps {
			r.close()
		}
	}()
	svcs := map[ring.GroupID]*kv.Service{}
	members := map[ring.GroupID]uint64{}
	for g, c := range cfg.Groups {
		if c.ID != cfg.ID {
			lis.Close()
			return fmt.Errorf("kvserver: %v: member id %d is not the node's id %d", g, c.ID, cfg.ID)
		}
		c.Logger = cfg.Logger.With("rg", uint64(g))
		c.OnRole = func(ss zab.SoftState) { n.onRole(g, ss) }
		send, recv := mx.link(uint64(g))
		r, err := openReplica(ctx, c, &link{send: send, recv: recv, lost: lost, backlog: tr.Backlog})
		if err != nil {
			lis.Close()
			return fmt.Errorf("kvserver: %v: %w", g, err)
		}
		reps[g] = r
		n.reps = reps
		svcs[g] = kv.NewGroupService(r.store, r.group, uint32(g))
		members[g] = c.ID
	}
	if err := nm.serve(ctx, reps, cfg.Logger); err != nil {
		lis.Close()
		return err
	}
	root := cfg.CMRoot
	if root == "" {
		root = cm.DefaultRoot
	}
	kvpb.RegisterKVServer(srv.Registrar(), kv.NewShardedService(n, n, kv.ClusterInfo{CMConnect: cfg.CM, CMRoot: root}, svcs))
	registerMoveService(srv.Registrar(), svcs) // movesvc.go

	var wg sync.WaitGroup
	errc := make(chan error, len(reps)+1)
	for _, r := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- r.run(ctx)
		}()
	}
	wg.Add(3)
	go func() {
		defer wg.Done()
		errc <- srv.Serve(ctx)
	}()
	go func() {
		defer wg.Done()
		mx.run(ctx)
	}()
	go func() {
		defer wg.Done()
		cm.Keep(ctx, strings.Split(cfg.CM, ","), root, cfg.Logger, func(ctx context.Context, s *cm.Store, v *cm.View) {
			n.session(ctx, s, v, members, apiAddr, cfg.ID, cfg.Balance)
		})
	}()
	if ready != nil {
		ready(apiAddr)
	}
	var first error
	for range len(reps) + 1 {
		if err := <-errc; err != nil {
			if first == nil {
				first = err
			}
			cancel(err)
		}
	}
	cancel(nil)
	wg.Wait()
	return first
}

// session runs one CM session: an Announcer per local replica (the
// leaderships already held are announced at once) and the ring followed
// from the View, until ctx ends.
func (n *node) session(ctx context.Context, s *cm.Store, v *cm.View, members map[ring.GroupID]uint64, apiAddr string, self uint64, balance time.Duration) {
	var wg sync.WaitGroup
	defer wg.Wait()
	n.mu.Lock()
	n.anns = map[ring.GroupID]*cm.Announcer{}
	for g, id := range members {
		a := cm.NewAnnouncer(s, g, cm.Member{ID: id, Addr: apiAddr})
		n.anns[g] = a
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Run(ctx)
		}()
		if e, ok := n.leading[g]; ok {
			a.Leading(uint64(e))
		}
	}
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		n.anns = nil
		n.mu.Unlock()
	}()
	var tick <-chan time.Time
	if balance > 0 {
		t := time.NewTicker(balance)
		defer t.Stop()
		tick = t.C
	}
	for {
		if st := v.Current(); st != nil {
			n.state.Store(st)
		}
		if st := v.Current(); st != nil && st.Ring != nil {
			if cur := n.ring.Load(); cur == nil || st.Ring.Version() >= cur.Version() {
				n.ring.Store(st.Ring)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-v.Changed():
		case <-tick:
			n.balance(self)
		}
	}
}

// balance runs one round of the leader balancer: at most one hand-over.
func (n *node) balance(self uint64) {
	led := map[ring.GroupID][]uint64{}
	now := time.Now()
	for g, r := range n.reps {
		st := r.d.Status()
		if !st.Established() || st.Transferee != 0 || !r.lc.settled(now) {
			continue
		}
		var synced []uint64
		for _, l := range st.Learners {
			if l.Synced && !l.Observer {
				synced = append(synced, l.ID)
			}
		}
		led[g] = synced
	}
	g, to, ok := pickHandOver(self, leaderCounts(n.state.Load()), led)
	if !ok {
		return
	}
	if err := n.reps[g].d.TransferLeadership(to); err != nil {
		n.log.Info("kv node: leader balancer: hand-over refused", "rg", uint64(g), "to", to, "err", err)
		return
	}
	n.log.Info("kv node: leader balancer hands over", "rg", uint64(g), "to", to)
}
