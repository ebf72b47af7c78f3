package datatree

import (
	"slices"
	"strings"

	"github.com/corral-db/corral/wire"
)

// Tree is the znode tree. It is not safe for concurrent use: the server
// wraps it in a sync.RWMutex, applying transactions under the write lock and
// reading under the read lock.
type Tree struct {
	// root is "/"; every other node hangs from it, each in its parent's
	// child table under its base name. A path is found by walking its
	// segments (lookup).
	root *Node
	// nodes holds the nodes' memory (slab.go); the snapshot walks it.
	nodes nodeAlloc
	// recs holds the nodes' names and data (arena.go).
	recs arena

	// ephemerals indexes the ephemeral nodes by session. An emptied set
	// stays until the session closes (as in ZooKeeper), so a session that
	// keeps re-creating one ephemeral, a lock, does not re-allocate it.
	ephemerals     map[int64]map[*Node]struct{}
	ephemeralCount int
	containers     map[*Node]struct{}
	ttls           map[*Node]struct{}

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

	// packRoot, if set, is the root of the logs whose entries are packed
	// (pack.go); codec gives their data its compact form. packed counts
	// the packed entries; packBuf and codecBuf are packCreate's scratch.
	packRoot string
	codec    EntryCodec
	packed   int
	packBuf  []byte
	codecBuf []byte
}

func newEmptyTree() *Tree {
	t := &Tree{
		ephemerals: make(map[int64]map[*Node]struct{}),
		containers: make(map[*Node]struct{}),
		ttls:       make(map[*Node]struct{}),
		sessions:   make(map[int64]int32),
		acls:       newACLCache(),
	}
	t.recs.nodes = &t.nodes
	return t
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
	t.addInitial(RootPath, empty, wire.OpenACLUnsafe, 0)
	t.addInitial(ProcPath, empty, wire.OpenACLUnsafe, 0)
	t.addInitial(QuotaPath, empty, wire.OpenACLUnsafe, 0)
	t.addInitial(ConfigPath, empty, wire.ReadACLUnsafe, -1)
	return t
}

func (t *Tree) addInitial(path string, data []byte, acl []wire.ACL, aversion int32) {
	n := t.nodes.alloc()
	n.acl = t.acls.intern(acl).id
	t.recs.put(n, BaseName(path), data, 0, 0, 0)
	n.setAversion(aversion)
	if path == RootPath {
		t.root = n
	} else {
		t.lookup(ParentPath(path)).addChild(&t.nodes, n)
	}
	t.index(path, n)
}

// ACL returns n's ACL list, shared with every node of the tree that has
// the same list. Callers must not modify it; it may be used after the
// lock is released (the list is never modified).
func (t *Tree) ACL(n *Node) []wire.ACL { return t.acls.entry(n.acl).acl }

// newNode allocates a node with the given name and data (copied into
// the node's record), ACL (already referenced) and stat.
func (t *Tree) newNode(name string, acl *aclEntry, data []byte, st PStat) *Node {
	n := t.nodes.alloc()
	n.acl = acl.id
	n.czxid, n.ctime = st.Czxid, st.Ctime
	t.recs.put(n, name, data, st.Version, st.Mzxid, st.Mtime)
	n.setStat(st)
	return n
}

// index accounts for n, already linked under path, in the sums and
// indexes.
func (t *Tree) index(path string, n *Node) {
	t.nodeSum += t.term(n, path)
	t.dataSize += int64(len(path) + n.dataSize())
	switch owner := n.owner(); kindOf(owner) {
	case kindEphemeral:
		set := t.ephemerals[owner]
		if set == nil {
			set = make(map[*Node]struct{})
			t.ephemerals[owner] = set
		}
		set[n] = struct{}{}
		t.ephemeralCount++
	case kindContainer:
		t.containers[n] = struct{}{}
	case kindTTL:
		t.ttls[n] = struct{}{}
	}
}

// remove takes n, whose path is path, out of the sums and indexes, drops
// its ACL reference and frees it. The caller has taken it out of its
// parent and taken care of its children.
func (t *Tree) remove(path string, n *Node) {
	t.nodeSum -= t.term(n, path)
	t.dataSize -= int64(len(path) + n.dataSize())
	t.acls.release(t.acls.entry(n.acl))
	switch owner := n.owner(); kindOf(owner) {
	case kindEphemeral:
		if set := t.ephemerals[owner]; set != nil {
			if _, ok := set[n]; ok {
				delete(set, n)
				t.ephemeralCount--
			}
		}
	case kindContainer:
		delete(t.containers, n)
	case kindTTL:
		delete(t.ttls, n)
	}
	t.recs.free(n)
	t.nodes.release(n)
}

// lookup returns the node at path, or nil ("" and malformed paths have
// none).
func (t *Tree) lookup(path string) *Node {
	n, _, _ := t.walk(path)
	return n
}

// walk finds the node at path by its segments from the root. When there
// is none but its parent is a node, it returns that parent and the
// path's base name instead (a packed entry's place, pack.go).
func (t *Tree) walk(path string) (n, parent *Node, name string) {
	if len(path) == 0 || path[0] != '/' {
		return nil, nil, ""
	}
	n = t.root
	for rest := path[1:]; rest != ""; {
		seg := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
			if rest == "" {
				return nil, nil, "" // a trailing '/'
			}
		} else {
			rest = ""
		}
		if seg == "" {
			return nil, nil, ""
		}
		c := n.child(seg)
		if c == nil {
			if rest == "" {
				return nil, n, seg
			}
			return nil, nil, ""
		}
		n = c
	}
	return n, nil, ""
}

// appendPath appends n's full path to dst, rebuilding it from the names of
// n and its ancestors.
func (t *Tree) appendPath(dst []byte, n *Node) []byte {
	if n.parent == 0 {
		return append(dst, '/')
	}
	size := 0
	for a := n; a.parent != 0; a = t.nodes.node(a.parent) {
		size += 1 + len(a.baseName())
	}
	start := len(dst)
	dst = slices.Grow(dst, size)[:start+size]
	end := len(dst)
	for a := n; a.parent != 0; a = t.nodes.node(a.parent) {
		name := a.baseName()
		end -= len(name)
		copy(dst[end:], name)
		end--
		dst[end] = '/'
	}
	return dst
}

// pathOf returns n's full path.
func (t *Tree) pathOf(n *Node) string { return string(t.appendPath(nil, n)) }

// Get returns the node at path, or nil. Like ZooKeeper, which keeps the
// root under both "" and "/", Get("") is the root.
func (t *Tree) Get(path string) *Node {
	if path == "" {
		return t.root
	}
	n, parent, name := t.walk(path)
	if n == nil && parent != nil && t.packRoot != "" {
		return t.getPacked(parent, name)
	}
	return n
}

// LastZxid is the zxid of the last applied transaction.
func (t *Tree) LastZxid() int64 { return t.lastZxid }

// NodeCount is the number of nodes. ZooKeeper's "Node count" and
// zk_znode_count are one higher: they count the root's "" alias too.
func (t *Tree) NodeCount() int { return t.nodes.live + t.packed }

// ApproximateDataSize is the sum of len(path)+len(data) over the nodes,
// ZooKeeper's zk_approximate_data_size (44 for a fresh tree).
func (t *Tree) ApproximateDataSize() int64 { return t.dataSize }

// EphemeralCount is the number of ephemeral nodes (zk_ephemerals_count).
func (t *Tree) EphemeralCount() int { return t.ephemeralCount }

// Ephemerals returns the paths of the session's ephemeral nodes, sorted.
func (t *Tree) Ephemerals(session int64) []string {
	return t.appendEphemerals(nil, session)
}

// appendEphemerals appends the paths of the session's ephemeral nodes to
// dst, sorted.
func (t *Tree) appendEphemerals(dst []string, session int64) []string {
	set := t.ephemerals[session]
	if len(set) == 0 {
		return dst
	}
	start := len(dst)
	for n := range set {
		dst = append(dst, t.pathOf(n))
	}
	slices.Sort(dst[start:])
	return dst
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
		return t.NodeCount() - 1
	case "":
		// ZooKeeper counts the keys starting with "/": every node.
		return t.NodeCount()
	}
	n := t.lookup(path)
	if n == nil {
		return 0
	}
	return countUnder(n)
}

func countUnder(n *Node) int {
	c := 0
	if r := n.run(); r != nil {
		c += r.live
	}
	n.eachChild(func(child *Node) { c += 1 + countUnder(child) })
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
	if n := t.lookup(ConfigPath); n != nil {
		sum -= t.term(n, ConfigPath)
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
	n := t.lookup(ConfigPath)
	if n == nil {
		return
	}
	t.nodeSum -= t.term(n, ConfigPath)
	// The data size counts the config's data as any node's (ZooKeeper's
	// setData of the config node does), so that a tree set here and one
	// loaded from its snapshot count the same.
	t.dataSize += int64(len(data)) - int64(len(n.Data()))
	t.recs.put(n, n.baseName(), data, -1, version, mtime)
	t.nodeSum += t.term(n, ConfigPath)
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
