package vfs

import (
	"math/rand/v2"
	"sort"
)

// Crash simulates a power loss: every file goes back to its content as of
// its last Sync, every directory to its entries as of its last SyncDir, and
// every open handle returns ErrCrashed from then on.
func (m *MemFS) Crash() {
	m.crash(nil)
}

// CrashRandom is Crash, except that each file and each directory keeps a
// random prefix (drawn from r) of the changes made since it was last
// synced, as a disk that wrote some of its queue before losing power. When
// a file's kept prefix stops before a write, that write is kept torn, cut at
// a random byte, half of the time. Given the same history and the same r,
// the outcome is the same.
func (m *MemFS) CrashRandom(r *rand.Rand) {
	m.crash(r)
}

func (m *MemFS) crash(r *rand.Rand) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++

	// Visit directories and their nodes in a fixed order so that r's draws
	// do not depend on map iteration order.
	dirNames := make([]string, 0, len(m.dirs))
	for p := range m.dirs {
		dirNames = append(dirNames, p)
	}
	sort.Strings(dirNames)

	seen := map[*memNode]bool{}
	var nodes []*memNode
	collect := func(entries map[string]*memNode) {
		names := make([]string, 0, len(entries))
		for name := range entries {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if n := entries[name]; !seen[n] {
				seen[n] = true
				nodes = append(nodes, n)
			}
		}
	}

	for _, p := range dirNames {
		d := m.dirs[p]
		keep := 0
		if r != nil {
			keep = r.IntN(len(d.pending) + 1)
		}
		for _, op := range d.pending[:keep] {
			applyDirOp(d.durable, op)
		}
		d.pending = nil
		d.live = make(map[string]*memNode, len(d.durable))
		for name, n := range d.durable {
			d.live[name] = n
		}
		collect(d.live)
	}

	for _, n := range nodes {
		keep := 0
		if r != nil {
			keep = r.IntN(len(n.pending) + 1)
		}
		for _, op := range n.pending[:keep] {
			n.durable = applyFileOp(n.durable, op)
		}
		if r != nil && keep < len(n.pending) && r.IntN(2) == 0 {
			if op := n.pending[keep]; !op.trunc && len(op.data) > 1 {
				op.data = op.data[:1+r.IntN(len(op.data)-1)]
				n.durable = applyFileOp(n.durable, op)
			}
		}
		n.pending = nil
		n.data = append(n.data[:0:0], n.durable...)
	}
}
