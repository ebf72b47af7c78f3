package zab

import "slices"

// quorumZxid returns the largest zxid that at least q of acks reach: the
// q-th largest. Only majority quorums are supported (ZooKeeper's
// QuorumMaj); hierarchical quorums would replace this file.
func quorumZxid(acks []Zxid, q int) Zxid {
	if len(acks) < q || q == 0 {
		return 0
	}
	slices.SortFunc(acks, func(a, b Zxid) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	return acks[q-1]
}
