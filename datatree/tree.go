package datatree

import (
	"slices"
	"sync/atomic"

	"github.com/corral-db/corral/wire"
)

// Tree is the znode tree. It is not safe for concurrent use: the server
// wraps it in a sync.RWMutex, applying transactions under the write lock and
// reading under the read lock.
type Tree struct {
	// nodes maps every full path ("/" for the root) to its node. Lookups by
	// path are the hot operation; the per-node child lists exist for
	// listing and counting children and hold the nodes themselves.
	nodes map[string]*Node
	root  *Node
	// order holds every node once, in the order they were inserted, nil
	// where one was removed (holes of them), so that a snapshot visits
	// the nodes in about the order they were allocated. Ranging over
	// nodes instead visits them in hash order, all over the heap: a
	// busy snapshot then cost 0.5 µs per node in cache misses on a
	// loaded server, 6-13% of a diskless member's CPU under creates (pprof),
	// and 5x more than the walk in allocation order (a 400k-node
	// micro-benchmark; BenchmarkWriteSnapshot 15.5 ms before, 6.3 after).
	// ReadSnapshot does not depend on the order of the records.
	order []*Node
	holes int
	// walkers counts the snapshots walking order, between whose chunks
	// writes are applied; order is compacted only while there are none,
	// so a walk never misses a node that existed throughout it.
	walkers atomic.Int32

	ephemerals     map[int64]map[string]struct{} // session -> its ephemeral paths
	ephemeralCount int
	containers     map[string]struct{}
	ttls           map[string]struct{}

	// sessions is the replicated session table: id -> negotiated timeout.
	sessions map[int64]int32

	acls aclCache

	// quotas is the set of paths with a quota (ZooKeeper's pTrie; see
	// quota.go), nil when there are none.
	quotas map[string]struct{}

	lastZxid int64
	dataSize int64 // sum of len(path)+len(data) over the nodes

	// nodeSum and sessionSum are sums (mod 2^64) of per-node and
	// per-session hashes: order-independent, updated in O(1) per change.
	nodeSum    uint64
	sessionSum uint64

	scratch []string // reused by closeSession
}

func newEmptyTree() *Tree {
	return &Tree{
		nodes:      make(map[string]*Node),
		ephemerals: make(map[int64]map[string]struct{}),
		containers: make(map[string]struct{}),
		ttls:       make(map[string]struct{}),
		sessions:   make(map[int64]int32),
		acls:       newACLCache(),
	}
}

// New returns the tree a fresh ZooKeeper 3.9 server starts with: "/",
// "/zookeeper", "/zookeeper/quota" and "/zookeeper/config", all with zero
// stats and empty data; the config node has ACL [1 world:anyone] and
// aversion -1 (ZooKeeper sets its ACL with setACL(..., -1)), the others
// OPEN_ACL_UNSAFE. The root then reports cversion -1 (one child it never
// counted as created) and /zookeeper -2.
func New() *Tree {
	t := newEmptyTree()
	empty := []byte{}
	t.root = t.addInitial(RootPath, empty, wire.OpenACLUnsafe, 0)
	t.addInitial(ProcPath, empty, wire.OpenACLUnsafe, 0)
	t.addInitial(QuotaPath, empty, wire.OpenACLUnsafe, 0)
	t.addInitial(ConfigPath, empty, wire.ReadACLUnsafe, -1)
	return t
}

func (t *Tree) addInitial(path string, data []byte, acl []wire.ACL, aversion int32) *Node {
	n := &Node{path: path, acl: t.acls.intern(acl), slot: -1}
	n.setData(data)
	n.stat.Aversion = aversion
	if path != RootPath {
		p := t.nodes[ParentPath(path)]
		p.addChild(n)
	}
	n.rehash()
	t.insert(path, n)
	return n
}

// insert adds n (hash already computed) to the map, the order and the
// indexes.
func (t *Tree) insert(path string, n *Node) {
	t.nodes[path] = n
	t.appendOrder(n)
	t.index(path, n)
}

// appendOrder puts n at the end of t.order.
func (t *Tree) appendOrder(n *Node) {
	n.pos = int32(len(t.order))
	t.order = append(t.order, n)
}

// unorder leaves a hole where n was in t.order, and compacts the order
// once half of it is holes and no snapshot walks it.
func (t *Tree) unorder(n *Node) {
	if n.pos < 0 || int(n.pos) >= len(t.order) || t.order[n.pos] != n {
		return
	}
	t.order[n.pos] = nil
	n.pos = -1
	t.holes++
	if t.holes > minCompact && t.holes > len(t.order)/2 && t.walkers.Load() == 0 {
		t.compactOrder()
	}
}

// minCompact is the fewest holes worth a compaction.
const minCompact = 1024

// compactOrder closes the holes in t.order, keeping the order.
func (t *Tree) compactOrder() {
	j := 0
	for _, n := range t.order {
		if n != nil {
			n.pos = int32(j)
			t.order[j] = n
			j++
		}
	}
	clear(t.order[j:])
	t.order = t.order[:j]
	t.holes = 0
}

// index accounts for n, already in the map, in the sums and indexes.
func (t *Tree) index(path string, n *Node) {
	t.nodeSum += n.hash
	t.dataSize += int64(len(path) + n.dataSize())
	switch kindOf(n.stat.EphemeralOwner) {
	case kindEphemeral:
		owner := n.stat.EphemeralOwner
		set := t.ephemerals[owner]
		if set == nil {
			set = make(map[string]struct{})
			t.ephemerals[owner] = set
		}
		set[path] = struct{}{}
		t.ephemeralCount++
	case kindContainer:
		t.containers[path] = struct{}{}
	case kindTTL:
		t.ttls[path] = struct{}{}
	}
}

// remove takes n out of the map and the indexes and drops its ACL
// reference. It does not touch the parent.
func (t *Tree) remove(path string, n *Node) {
	delete(t.nodes, path)
	t.unorder(n)
	t.nodeSum -= n.hash
	t.dataSize -= int64(len(path) + n.dataSize())
	t.acls.release(n.acl)
	switch kindOf(n.stat.EphemeralOwner) {
	case kindEphemeral:
		owner := n.stat.EphemeralOwner
		// An emptied set stays until the session closes (as in ZooKeeper),
		// so a session that keeps re-creating one ephemeral, a lock,
		// does not re-allocate it each time.
		if set := t.ephemerals[owner]; set != nil {
			if _, ok := set[path]; ok {
				delete(set, path)
				t.ephemeralCount--
			}
		}
	case kindContainer:
		delete(t.containers, path)
	case kindTTL:
		delete(t.ttls, path)
	}
}

// Get returns the node at path, or nil. Like ZooKeeper, which keeps the
// root under both "" and "/", Get("") is the root.
func (t *Tree) Get(path string) *Node {
	if path == "" {
		return t.root
	}
	return t.nodes[path]
}

// LastZxid is the zxid of the last applied transaction.
func (t *Tree) LastZxid() int64 { return t.lastZxid }

// NodeCount is the number of nodes. ZooKeeper's "Node count" and
// zk_znode_count are one higher: they count the root's "" alias too.
func (t *Tree) NodeCount() int { return len(t.nodes) }

// ApproximateDataSize is the sum of len(path)+len(data) over the nodes,
// ZooKeeper's zk_approximate_data_size (44 for a fresh tree).
func (t *Tree) ApproximateDataSize() int64 { return t.dataSize }

// EphemeralCount is the number of ephemeral nodes (zk_ephemerals_count).
func (t *Tree) EphemeralCount() int { return t.ephemeralCount }

// Ephemerals returns the paths of the session's ephemeral nodes, sorted.
func (t *Tree) Ephemerals(session int64) []string {
	set := t.ephemerals[session]
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// SessionsWithEphemerals returns a copy of the session -> ephemeral paths
// index (paths sorted), for the dump four-letter word. Like ZooKeeper's, it
// keeps a session whose ephemerals were all deleted (with no paths) until
// the session closes.
func (t *Tree) SessionsWithEphemerals() map[int64][]string {
	out := make(map[int64][]string, len(t.ephemerals))
	for id := range t.ephemerals {
		out[id] = t.Ephemerals(id)
	}
	return out
}

// Sessions returns a copy of the replicated session table (id -> timeout).
func (t *Tree) Sessions() map[int64]int32 {
	out := make(map[int64]int32, len(t.sessions))
	for id, to := range t.sessions {
		out[id] = to
	}
	return out
}

// SessionTimeout returns a session's timeout and whether it is open.
func (t *Tree) SessionTimeout(id int64) (int32, bool) {
	to, ok := t.sessions[id]
	return to, ok
}

// SessionCount is the number of open sessions in the table.
func (t *Tree) SessionCount() int { return len(t.sessions) }

// CountDescendants is getAllChildrenNumber: the number of nodes below path
// (0 if it does not exist). As in ZooKeeper, "/" counts every node but the
// root.
func (t *Tree) CountDescendants(path string) int {
	switch path {
	case "/":
		return len(t.nodes) - 1
	case "":
		// ZooKeeper counts the keys starting with "/": every node.
		return len(t.nodes)
	}
	n := t.nodes[path]
	if n == nil {
		return 0
	}
	return countUnder(n)
}

func countUnder(n *Node) int {
	c := 0
	for _, child := range n.childNodes() {
		c += 1 + countUnder(child)
	}
	return c
}

// Digest is an order-independent digest of the whole replicated state —
// every node's path, data, ACL and stored stat, and the session table —
// kept up to date on every change, for comparing replicas at the same
// zxid. It is a sum of xxHash64-based per-item hashes, stable across
// processes and versions of this package that keep the same format.
//
// /zookeeper/config is left out: in an ensemble each server writes its
// own (SetLocalConfig), stamped with its own clock, as ZooKeeper does.
func (t *Tree) Digest() uint64 {
	sum := t.nodeSum
	if n := t.nodes[ConfigPath]; n != nil {
		sum -= n.hash
	}
	return sum + mix(t.sessionSum, 0x73657373) // "sess"
}

// SetLocalConfig puts an ensemble member's configuration (the text of
// config.Config.QuorumConfig) in /zookeeper/config, as ZooKeeper's
// ZKDatabase.initConfigInZKDatabase does when the member starts and after
// it synchronizes with a leader: outside the replicated history, with the
// stat that call leaves (version -1, mzxid the configuration's version —
// the zxid of the reconfig that made it, 0 for a static one —, mtime the
// member's clock, ctime still 0). A snapshot of the tree so carries the
// configuration's version. A standalone server leaves the node empty.
func (t *Tree) SetLocalConfig(data []byte, version, mtime int64) {
	n := t.nodes[ConfigPath]
	if n == nil {
		return
	}
	t.nodeSum -= n.hash
	n.setData(data)
	n.stat.Version = -1
	n.stat.Mzxid = version
	n.stat.Mtime = mtime
	n.rehash()
	t.nodeSum += n.hash
}

func sessionHash(id int64, timeout int32) uint64 {
	return mix(mix(uint64(id), 0x5e55), uint64(uint32(timeout)))
}

func (t *Tree) setSession(id int64, timeout int32) {
	if old, ok := t.sessions[id]; ok {
		t.sessionSum -= sessionHash(id, old)
	}
	t.sessions[id] = timeout
	t.sessionSum += sessionHash(id, timeout)
}

func (t *Tree) dropSession(id int64) {
	if old, ok := t.sessions[id]; ok {
		t.sessionSum -= sessionHash(id, old)
		delete(t.sessions, id)
	}
}
