package datatree

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Quotas, as ZooKeeper 3.9 keeps them. A quota on /a is two znodes,
// /zookeeper/quota/a/zookeeper_limits (the limits, written by clients) and
// /zookeeper/quota/a/zookeeper_stats (the usage, which the tree
// maintains), each holding a StatsTrack string such as
// "count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=20".
//
// The tree follows DataTree's bookkeeping exactly:
//   - creating a zookeeper_limits node adds its path to the quota index
//     (ZooKeeper's pTrie); deleting it removes the path;
//   - creating a zookeeper_stats node recomputes its usage from the subtree
//     (count = the quota node and every descendant, bytes = their data);
//   - a create, delete or setData of a node adds its count and data-length
//     change to the stats of the longest indexed prefix of its path (never
//     "/zookeeper"), writing the stats node's data without touching its
//     stat (so it fires no watch);
//   - loading a snapshot rebuilds the index and recomputes every stats node
//     (DataTree.setupQuota), which is also what makes the counts right after
//     replaying a log over a fuzzy snapshot.
//
// Enforcement (enforceQuota) is the request pipeline's, through
// CheckQuota, before a transaction exists.

// Quota node names (ZooKeeper's Quotas).
const (
	QuotaLimitNode = "zookeeper_limits"
	QuotaStatNode  = "zookeeper_stats"
)

// QuotaLimitPath and QuotaStatPath are the quota nodes of path.
func QuotaLimitPath(path string) string { return QuotaPath + path + "/" + QuotaLimitNode }
func QuotaStatPath(path string) string  { return QuotaPath + path + "/" + QuotaStatNode }

// StatsTrack is the content of a quota node: named values, -1 when absent.
type StatsTrack map[string]int64

// StatsTrack keys.
const (
	StatCount          = "count"
	StatBytes          = "bytes"
	StatCountHardLimit = "countHardLimit"
	StatByteHardLimit  = "byteHardLimit"
)

// ParseStatsTrack reads a quota node's data as ZooKeeper's StatsTrack does:
// pairs key=value separated by ',' or ';', an empty value being -1. Pairs
// it cannot read are skipped (ZooKeeper would throw).
func ParseStatsTrack(b []byte) StatsTrack {
	s := make(StatsTrack)
	for _, pair := range strings.FieldsFunc(string(b), func(r rune) bool { return r == ',' || r == ';' }) {
		kv := strings.Split(pair, "=")
		if len(kv) < 2 {
			continue
		}
		if kv[1] == "" {
			s[kv[0]] = -1
			continue
		}
		if v, err := strconv.ParseInt(kv[1], 10, 64); err == nil {
			s[kv[0]] = v
		}
	}
	return s
}

// Get returns the value of key, -1 if absent.
func (s StatsTrack) Get(key string) int64 {
	if v, ok := s[key]; ok {
		return v
	}
	return -1
}

// String formats s as StatsTrack.toString: count and bytes first (always),
// then, after an extra "=" that old parsers skip, the other keys sorted.
func (s StatsTrack) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "count=%d,bytes=%d", s.Get(StatCount), s.Get(StatBytes))
	var keys []string
	for k := range s {
		if k != StatCount && k != StatBytes {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		b.WriteByte('=')
		for _, k := range keys {
			fmt.Fprintf(&b, ";%s=%d", k, s[k])
		}
	}
	return b.String()
}

// quotaPrefix is getMaxPrefixWithQuota: the longest path with a quota
// that is path or one of its ancestors, or "".
func (t *Tree) quotaPrefix(path string) string {
	if len(t.quotas) == 0 {
		return ""
	}
	for p := path; ; p = ParentPath(p) {
		if _, ok := t.quotas[p]; ok {
			if p == ProcPath {
				return ""
			}
			return p
		}
		if p == RootPath || p == "" {
			return ""
		}
	}
}

// quotaCreatedSize is createNode's quota bookkeeping for a node just
// inserted, with size bytes of data.
func (t *Tree) quotaCreatedSize(path string, size int) {
	if parent := ParentPath(path); strings.HasPrefix(parent, QuotaPath) {
		switch BaseName(path) {
		case QuotaLimitNode:
			if q := parent[len(QuotaPath):]; q != "" {
				if t.quotas == nil {
					t.quotas = make(map[string]struct{})
				}
				t.quotas[q] = struct{}{}
			}
		case QuotaStatNode:
			t.recountQuota(parent[len(QuotaPath):])
		}
	}
	if p := t.quotaPrefix(path); p != "" {
		t.addQuotaUsage(p, int64(size), 1)
	}
}

// quotaDeleted is deleteNode's, for a node about to be removed.
func (t *Tree) quotaDeleted(path string, n *Node) {
	if parent := ParentPath(path); BaseName(path) == QuotaLimitNode && strings.HasPrefix(parent, ProcPath) {
		delete(t.quotas, strings.TrimPrefix(parent, QuotaPath))
	}
	if p := t.quotaPrefix(path); p != "" {
		t.addQuotaUsage(p, -int64(n.dataSize()), -1)
	}
}

// quotaDataChanged is setData's.
func (t *Tree) quotaDataChanged(path string, bytesDiff int64) {
	if p := t.quotaPrefix(path); p != "" {
		t.addQuotaUsage(p, bytesDiff, 0)
	}
}

// addQuotaUsage is updateQuotaStat.
func (t *Tree) addQuotaUsage(prefix string, bytesDiff, countDiff int64) {
	sp := QuotaStatPath(prefix)
	n := t.lookup(sp)
	if n == nil {
		return // ZooKeeper logs "Missing node for stat" and goes on
	}
	s := ParseStatsTrack(n.Data())
	s[StatCount] = s.Get(StatCount) + countDiff
	s[StatBytes] = s.Get(StatBytes) + bytesDiff
	t.setQuotaData(sp, n, []byte(s.String()))
}

// recountQuota is updateQuotaForPath: the stats node of path gets the
// count and bytes of path's subtree (a fresh StatsTrack: other keys in it
// are dropped, as ZooKeeper drops them).
func (t *Tree) recountQuota(path string) {
	sp := QuotaStatPath(path)
	sn := t.lookup(sp)
	if sn == nil {
		return
	}
	var count, bytes int64
	if n := t.lookup(path); n != nil {
		var walk func(n *Node)
		walk = func(n *Node) {
			count++
			bytes += int64(n.dataSize())
			t.eachPacked(n, func(_ string, _, _ int64, data []byte) {
				count++
				bytes += int64(len(data))
			})
			n.eachChild(walk)
		}
		walk(n)
	}
	t.setQuotaData(sp, sn, []byte(StatsTrack{StatCount: count, StatBytes: bytes}.String()))
}

// setQuotaData replaces a stats node's data without changing its stat,
// keeping the digest and the data size right.
func (t *Tree) setQuotaData(path string, n *Node, data []byte) {
	t.nodeSum -= t.term(n, path)
	t.dataSize += int64(len(data) - n.dataSize())
	f := n.recFields()
	t.recs.put(n, n.baseName(), data, f.version, n.czxid+f.dz, n.ctime+f.dt)
	t.nodeSum += t.term(n, path)
}

// setupQuota rebuilds the quota index and recomputes every stats node from
// the tree (DataTree.setupQuota, run after a snapshot is loaded).
func (t *Tree) setupQuota() {
	t.quotas = nil
	// The limit nodes are /zookeeper/quota/<path>/zookeeper_limits, at any
	// depth below the quota node.
	var walk func(path string, n *Node)
	walk = func(path string, n *Node) {
		n.eachChild(func(c *Node) {
			cp := path + "/" + c.baseName()
			// ZooKeeper takes only limit nodes that are leaves.
			if c.baseName() == QuotaLimitNode && c.numChildren() == 0 {
				if q := path[len(QuotaPath):]; q != "" {
					if t.quotas == nil {
						t.quotas = make(map[string]struct{})
					}
					t.quotas[q] = struct{}{}
				}
			}
			walk(cp, c)
		})
	}
	if qn := t.lookup(QuotaPath); qn != nil {
		walk(QuotaPath, qn)
	}
	for q := range t.quotas {
		t.recountQuota(q)
	}
}

// QuotaViolation is a limit a change would pass (ZooKeeperServer.checkQuota).
type QuotaViolation struct {
	Prefix  string // the path the quota is set on
	Bytes   bool   // the byte limit; otherwise the count limit
	Hard    bool   // a hard limit (the change is refused); otherwise soft
	Current int64  // the usage after the change
	Limit   int64
}

func (v QuotaViolation) String() string {
	kind := "soft"
	if v.Hard {
		kind = "hard"
	}
	if v.Bytes {
		return fmt.Sprintf("Quota exceeded: %s [current bytes=%d, %sByteLimit=%d]", v.Prefix, v.Current, kind, v.Limit)
	}
	return fmt.Sprintf("Quota exceeded: %s [current count=%d, %sCountLimit=%d]", v.Prefix, v.Current, kind, v.Limit)
}

// CheckQuota returns the limits a change of countDiff nodes and bytesDiff
// bytes at path would pass, count first; it stops at the first hard one,
// as ZooKeeper throws there. A hard limit, when set, replaces the soft one
// of the same kind.
func (t *Tree) CheckQuota(path string, bytesDiff, countDiff int64) []QuotaViolation {
	prefix := t.quotaPrefix(path)
	if prefix == "" {
		return nil
	}
	ln := t.lookup(QuotaLimitPath(prefix))
	if ln == nil {
		return nil
	}
	limits := ParseStatsTrack(ln.Data())
	checkCount := countDiff != 0 && (limits.Get(StatCount) > -1 || limits.Get(StatCountHardLimit) > -1)
	checkBytes := bytesDiff != 0 && (limits.Get(StatBytes) > -1 || limits.Get(StatByteHardLimit) > -1)
	if !checkCount && !checkBytes {
		return nil
	}
	sn := t.lookup(QuotaStatPath(prefix))
	if sn == nil {
		return nil
	}
	usage := ParseStatsTrack(sn.Data())
	var out []QuotaViolation
	check := func(bytes bool, cur, diff int64, soft, hard int64) bool {
		v := QuotaViolation{Prefix: prefix, Bytes: bytes, Current: cur + diff, Hard: hard > -1, Limit: soft}
		if v.Hard {
			v.Limit = hard
		}
		if v.Current > v.Limit {
			out = append(out, v)
			return v.Hard
		}
		return false
	}
	if checkCount && check(false, usage.Get(StatCount), countDiff, limits.Get(StatCount), limits.Get(StatCountHardLimit)) {
		return out
	}
	if checkBytes {
		check(true, usage.Get(StatBytes), bytesDiff, limits.Get(StatBytes), limits.Get(StatByteHardLimit))
	}
	return out
}
