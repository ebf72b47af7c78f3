package zab

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// testNet is a tiny deterministic ensemble for unit tests: FIFO delivery,
// storage that persists at once (unless manualPersist), and partitions by
// cutting a server off.
type testNet struct {
	t       *testing.T
	ids     []uint64
	nodes   map[uint64]*tnode
	queue   []Message
	cut     map[uint64]bool // cut off from everyone
	manual  bool            // drivers report Persisted only via persistAll
	syncs   []SyncMode      // sync modes sent, in order
	maxStep int
	// drop, if set, loses the messages it returns true for.
	drop func(Message) bool
}

type tnode struct {
	cfg     Config
	n       *Node
	st      *MemoryStorage
	applied []Entry
	soft    SoftState
	down    bool
}

func newTestNet(t *testing.T, voters, observers []uint64, tweak func(*Config)) *testNet {
	tn := &testNet{t: t, nodes: map[uint64]*tnode{}, cut: map[uint64]bool{}, maxStep: 100000}
	for _, ids := range [][]uint64{voters, observers} {
		for _, id := range ids {
			tn.ids = append(tn.ids, id)
			tn.nodes[id] = &tnode{st: NewMemoryStorage()}
		}
	}
	slices.Sort(tn.ids)
	for _, id := range tn.ids {
		cfg := Config{
			ID:        id,
			Voters:    voters,
			Observers: observers,
			Storage:   tn.nodes[id].st,
			Rand:      rand.New(rand.NewPCG(id, 1)),
		}
		if tweak != nil {
			tweak(&cfg)
		}
		tn.nodes[id].cfg = cfg
	}
	return tn
}

// start creates the nodes (after tests have filled storages).
func (tn *testNet) start() {
	for _, id := range tn.ids {
		tn.restart(id)
	}
}

func (tn *testNet) restart(id uint64) {
	x := tn.nodes[id]
	n, err := NewNode(x.cfg)
	if err != nil {
		tn.t.Fatalf("NewNode(%d): %v", id, err)
	}
	x.n = n
	x.down = false
	snap, _ := x.st.Snapshot()
	x.applied = nil
	_ = snap
	tn.process(id)
}

func (tn *testNet) crash(id uint64) {
	tn.nodes[id].down = true
	tn.nodes[id].n = nil
}

func (tn *testNet) process(id uint64) {
	x := tn.nodes[id]
	for x.n != nil && x.n.HasReady() {
		rd := x.n.Ready()
		if rd.SoftState != nil {
			x.soft = *rd.SoftState
		}
		if rd.Snapshot != nil {
			x.st.ApplySnapshot(*rd.Snapshot)
		}
		if rd.Truncate != nil {
			if err := x.st.Truncate(*rd.Truncate); err != nil {
				tn.t.Fatalf("node %d truncate: %v", id, err)
			}
		}
		if err := x.st.Append(rd.Entries); err != nil {
			tn.t.Fatalf("node %d append: %v", id, err)
		}
		if rd.HardState != nil {
			x.st.SetHardState(*rd.HardState)
		}
		for _, m := range rd.Messages {
			if m.Type == MsgSync {
				tn.syncs = append(tn.syncs, m.Sync)
			}
			tn.queue = append(tn.queue, m)
		}
		// The queue holds copies, so the slice goes back to the node,
		// as the server's driver does: every test runs with reuse.
		x.n.RecycleMessages(rd.Messages)
		x.applied = append(x.applied, rd.Committed...)
		x.n.Advance(rd)
		if !tn.manual {
			last, _ := x.st.LastZxid()
			x.n.Persisted(last)
		}
	}
}

func (tn *testNet) persistAll() {
	for _, id := range tn.ids {
		if x := tn.nodes[id]; x.n != nil {
			last, _ := x.st.LastZxid()
			x.n.Persisted(last)
			tn.process(id)
		}
	}
}

// deliver delivers queued messages until none is left.
func (tn *testNet) deliver() {
	for steps := 0; len(tn.queue) > 0; steps++ {
		if steps > tn.maxStep {
			tn.t.Fatalf("no quiescence after %d messages", steps)
		}
		m := tn.queue[0]
		tn.queue = tn.queue[1:]
		to := tn.nodes[m.To]
		if to == nil || to.n == nil || tn.cut[m.To] || tn.cut[m.From] || (tn.drop != nil && tn.drop(m)) {
			continue
		}
		if err := to.n.Step(m); err != nil {
			tn.t.Fatalf("node %d step %v: %v", m.To, m, err)
		}
		tn.process(m.To)
	}
}

func (tn *testNet) tick() {
	for _, id := range tn.ids {
		if x := tn.nodes[id]; x.n != nil {
			x.n.Tick()
			tn.process(id)
		}
	}
	tn.deliver()
}

// run ticks until cond holds or the budget runs out.
func (tn *testNet) run(ticks int, cond func() bool) bool {
	tn.deliver()
	for i := 0; i < ticks; i++ {
		if cond() {
			return true
		}
		tn.tick()
	}
	return cond()
}

// leader returns the established leader seen by a quorum of live nodes, or 0.
func (tn *testNet) leader() uint64 {
	for _, id := range tn.ids {
		x := tn.nodes[id]
		if x.n != nil && !tn.cut[id] && x.n.Status().Established() {
			return id
		}
	}
	return 0
}

func (tn *testNet) allFollow(l uint64) bool {
	for _, id := range tn.ids {
		x := tn.nodes[id]
		if x.n == nil || tn.cut[id] {
			continue
		}
		s := x.n.Status()
		if s.Leader != l || s.Phase != PhaseBroadcast {
			return false
		}
	}
	return true
}

func (tn *testNet) mustElect(ticks int) uint64 {
	var l uint64
	if !tn.run(ticks, func() bool { l = tn.leader(); return l != 0 && tn.allFollow(l) }) {
		tn.t.Fatalf("no stable leader after %d ticks: %s", ticks, tn.dump())
	}
	return l
}

func (tn *testNet) propose(data string) Zxid {
	l := tn.leader()
	if l == 0 {
		tn.t.Fatalf("propose %q: no leader", data)
	}
	z, err := tn.nodes[l].n.Propose([]byte(data))
	if err != nil {
		tn.t.Fatalf("propose %q: %v", data, err)
	}
	tn.process(l)
	return z
}

func (tn *testNet) dump() string {
	s := ""
	for _, id := range tn.ids {
		x := tn.nodes[id]
		if x.n == nil {
			s += fmt.Sprintf("\n  %d: down", id)
			continue
		}
		st := x.n.Status()
		s += fmt.Sprintf("\n  %d: %v/%v leader=%d epoch=%d hs=%+v last=%v commit=%v applied=%d rec=%v",
			id, st.State, st.Phase, st.Leader, st.Epoch, st.HardState, st.LastZxid, st.Commit, len(x.applied), st.Recovering)
	}
	return s
}

// others returns every server but id, in id order.
func (tn *testNet) others(id uint64) []uint64 {
	var out []uint64
	for _, x := range tn.ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// appliedData returns the data of the entries a node applied.
func (tn *testNet) appliedData(id uint64) []string {
	var out []string
	for _, e := range tn.nodes[id].applied {
		out = append(out, string(e.Data))
	}
	return out
}
