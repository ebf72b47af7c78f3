package datatree

import "slices"

// ReapCandidates appends, sorted, the paths the container/TTL reaper should
// try to delete at wall-clock time nowMs (ZooKeeper's
// ContainerManager.getCandidates):
//
//   - containers with no children that have had at least one (create
//     counter > 0);
//   - containers with no children that never had one, if maxNeverUsedMs > 0
//     and nowMs - mtime > maxNeverUsedMs;
//   - TTL nodes with no children and nowMs - mtime > ttl.
//
// A candidate is only a suggestion: the reaper submits a deleteContainer
// (or delete) that re-checks emptiness when it is prepared.
func (t *Tree) ReapCandidates(nowMs int64, maxNeverUsedMs int64, dst []string) []string {
	start := len(dst)
	for n := range t.containers {
		if n.numChildren() != 0 {
			continue
		}
		if n.cversion() > 0 || (maxNeverUsedMs > 0 && nowMs-n.mtime() > maxNeverUsedMs) {
			dst = append(dst, t.pathOf(n))
		}
	}
	for n := range t.ttls {
		if n.numChildren() != 0 {
			continue
		}
		if ttl, ok := n.TTL(); ok && ttl != 0 && nowMs-n.mtime() > ttl {
			dst = append(dst, t.pathOf(n))
		}
	}
	slices.Sort(dst[start:])
	return dst
}
