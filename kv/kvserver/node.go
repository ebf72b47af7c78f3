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

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/apisrv"
	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/zab"
)

// NodeConfig configures a storage node of a sharded cluster: one API
// listener, and one replica of each RG in Groups.
type NodeConfig struct {
	// APIListen is where the node serves the KV API; APIListener, if
	// set, is used instead.
	APIListen   string
	APIListener net.Listener
	// Groups are the node's replicas, by RG. Each Config is a member's
	// (its own peers, directory, listeners); their APIAddrs map the RG's
	// member ids to the API addresses of the nodes hosting them, and
	// their API fields are ignored.
	Groups map[ring.GroupID]Config
	// CM is the configuration manager's connect string (host:port,...),
	// CMRoot the znode under which the configuration lives ("" means
	// cm.DefaultRoot).
	CM     string
	CMRoot string
	Logger *slog.Logger
}

// node is the state RunNode shares between the replicas' role callbacks
// and the CM session.
type node struct {
	log  *slog.Logger
	ring atomic.Pointer[ring.Ring] // the ring routed by; nil until read

	mu sync.Mutex
	// Guarded by mu.
	leading map[ring.GroupID]uint32        // epoch each local replica leads in; absent if none
	anns    map[ring.GroupID]*cm.Announcer // this CM session's; nil between sessions
}

// Ring is the ring the node routes by (kv.RingSource).
func (n *node) Ring() *ring.Ring { return n.ring.Load() }

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
	if len(cfg.Groups) == 0 {
		return errors.New("kvserver: a node without replica groups")
	}
	if cfg.CM == "" {
		return errors.New("kvserver: a node needs the configuration manager's connect string")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	n := &node{log: cfg.Logger, leading: map[ring.GroupID]uint32{}}

	lis := cfg.APIListener
	if lis == nil {
		var err error
		if lis, err = net.Listen("tcp", cfg.APIListen); err != nil {
			return fmt.Errorf("kvserver: API listener: %w", err)
		}
	}
	srv := apisrv.FromListener(lis, apisrv.Options{})
	apiAddr := srv.Addr().String()

	reps := map[ring.GroupID]*replicaRun{}
	defer func() {
		for _, r := range reps {
			r.close()
		}
	}()
	svcs := map[ring.GroupID]*kv.Service{}
	members := map[ring.GroupID]uint64{}
	for g, c := range cfg.Groups {
		c.Logger = cfg.Logger.With("rg", uint64(g), "member", c.ID)
		c.OnRole = func(ss zab.SoftState) { n.onRole(g, ss) }
		r, err := openReplica(ctx, c)
		if err != nil {
			lis.Close()
			return fmt.Errorf("kvserver: %v: %w", g, err)
		}
		reps[g] = r
		svcs[g] = kv.NewGroupService(r.store, r.group, uint32(g))
		members[g] = c.ID
	}
	root := cfg.CMRoot
	if root == "" {
		root = cm.DefaultRoot
	}
	kvpb.RegisterKVServer(srv.Registrar(), kv.NewShardedService(n, kv.ClusterInfo{CMConnect: cfg.CM, CMRoot: root}, svcs))

	var wg sync.WaitGroup
	errc := make(chan error, len(reps)+1)
	for _, r := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- r.run(ctx)
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		errc <- srv.Serve(ctx)
	}()
	go func() {
		defer wg.Done()
		cm.Keep(ctx, strings.Split(cfg.CM, ","), root, cfg.Logger, func(ctx context.Context, s *cm.Store, v *cm.View) {
			n.session(ctx, s, v, members, apiAddr)
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
func (n *node) session(ctx context.Context, s *cm.Store, v *cm.View, members map[ring.GroupID]uint64, apiAddr string) {
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
	for {
		if st := v.Current(); st != nil && st.Ring != nil {
			if cur := n.ring.Load(); cur == nil || st.Ring.Version() >= cur.Version() {
				n.ring.Store(st.Ring)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-v.Changed():
		}
	}
}
