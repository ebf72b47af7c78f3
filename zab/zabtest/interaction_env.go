package zabtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/corral-db/corral/zab"
)

// InteractionEnv is an ensemble of zab nodes driven one step at a time.
// Delivery is FIFO per queue and happens only when a script asks for it.
type InteractionEnv struct {
	Nodes    []*Node
	Messages []zab.Message // in flight, in the order they were sent

	// Output collects the trace of the command being run.
	Output *strings.Builder

	// isolated servers neither send nor receive: their messages are
	// dropped at delivery.
	isolated map[uint64]bool
	log      logState
}

// Node is one server: the zab node (nil while crashed), its storage and
// what its driver has done.
type Node struct {
	ID     uint64
	Node   *zab.Node
	Config zab.Config
	// Storage is the node's log, snapshot and hard state. It survives a
	// crash except for entries past Durable when ManualPersist is set.
	Storage *zab.MemoryStorage
	// ManualPersist: the node's log becomes durable only with the persist
	// command (a sync-mode driver waiting for fsync); otherwise the driver
	// reports every Ready's entries persisted right after it (diskless).
	ManualPersist bool
	// Durable is the zxid the driver last reported with Persisted.
	Durable zab.Zxid
	// Applied are the entries applied since the last restart, after the
	// snapshot the node started from.
	Applied []zab.Entry
}

// NewInteractionEnv returns an empty environment.
func NewInteractionEnv() *InteractionEnv {
	env := &InteractionEnv{
		Output:   &strings.Builder{},
		isolated: map[uint64]bool{},
	}
	env.log.out = env.Output
	return env
}

func (env *InteractionEnv) node(id uint64) (*Node, error) {
	for _, n := range env.Nodes {
		if n.ID == id {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no node %d", id)
}

func (env *InteractionEnv) ids() []uint64 {
	var out []uint64
	for _, n := range env.Nodes {
		out = append(out, n.ID)
	}
	return out
}

// AddNodes creates servers with the given voters and observers and starts
// them (each starts looking for a leader).
func (env *InteractionEnv) AddNodes(voters, observers []uint64, tweak func(*zab.Config), manual bool) error {
	for _, ids := range [][]uint64{voters, observers} {
		for _, id := range ids {
			cfg := zab.Config{
				ID:        id,
				Voters:    voters,
				Observers: observers,
				Storage:   zab.NewMemoryStorage(),
				Rand:      rand.New(rand.NewPCG(id, 1)),
				Logger:    env.log.logger(),
			}
			if tweak != nil {
				tweak(&cfg)
			}
			n := &Node{ID: id, Config: cfg, Storage: cfg.Storage.(*zab.MemoryStorage), ManualPersist: manual}
			env.Nodes = append(env.Nodes, n)
			if err := env.start(n); err != nil {
				return err
			}
		}
	}
	slices.SortFunc(env.Nodes, func(a, b *Node) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return nil
}

// Join creates and starts server id with the configuration (voters,
// observers), which need not include it: a server joining the ensemble.
func (env *InteractionEnv) Join(id uint64, voters, observers []uint64) error {
	if _, err := env.node(id); err == nil {
		return fmt.Errorf("node %d exists", id)
	}
	st := zab.NewMemoryStorage()
	cfg := zab.Config{
		ID:        id,
		Voters:    voters,
		Observers: observers,
		Storage:   st,
		Rand:      rand.New(rand.NewPCG(id, 1)),
		Logger:    env.log.logger(),
	}
	n := &Node{ID: id, Config: cfg, Storage: st}
	env.Nodes = append(env.Nodes, n)
	slices.SortFunc(env.Nodes, func(a, b *Node) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return env.start(n)
}

func (env *InteractionEnv) start(n *Node) error {
	n.Config.Storage = n.Storage
	zn, err := zab.NewNode(n.Config)
	if err != nil {
		return err
	}
	n.Node = zn
	n.Durable, _ = n.Storage.LastZxid()
	n.Applied = nil
	return nil
}

// Crash stops a node, and the messages it sent or was sent are lost. With ManualPersist its log loses the entries the
// driver never reported durable, as a sync-mode server loses what it had
// not fsynced.
func (env *InteractionEnv) Crash(id uint64) error {
	n, err := env.node(id)
	if err != nil {
		return err
	}
	if n.Node == nil {
		return fmt.Errorf("node %d is down already", id)
	}
	n.Node = nil
	// Its connections close: what it sent and what was sent to it is lost.
	var kept []zab.Message
	for _, m := range env.Messages {
		if m.From == id || m.To == id {
			fmt.Fprintf(env.Output, "lost: %s\n", zab.DescribeMessage(m, nil))
			continue
		}
		kept = append(kept, m)
	}
	env.Messages = kept
	if n.ManualPersist {
		if last, _ := n.Storage.LastZxid(); last > n.Durable {
			fmt.Fprintf(env.Output, "%d loses the entries after %s\n", id, zab.DescribeZxid(n.Durable))
			if err := n.Storage.Truncate(n.Durable); err != nil {
				return err
			}
		}
	}
	return nil
}

// Restart starts a crashed node from its storage. With wipe it keeps only
// its snapshot and hard state (a diskless server restarted from its last
// checkpoint); recovering sets Config.Recovering.
func (env *InteractionEnv) Restart(id uint64, recovering, wipe bool) error {
	n, err := env.node(id)
	if err != nil {
		return err
	}
	if n.Node != nil {
		return fmt.Errorf("node %d is running", id)
	}
	if wipe {
		snap, _ := n.Storage.Snapshot()
		hs, _ := n.Storage.HardState()
		st := zab.NewMemoryStorage()
		st.ApplySnapshot(snap)
		st.SetHardState(hs)
		n.Storage = st
	}
	n.Config.Recovering = recovering
	return env.start(n)
}

// ProcessReady handles one Ready of node id, in the order Ready asks for,
// and reports whether there was one.
func (env *InteractionEnv) ProcessReady(id uint64) (bool, error) {
	n, err := env.node(id)
	if err != nil || n.Node == nil || !n.Node.HasReady() {
		return false, err
	}
	fmt.Fprintf(env.Output, "> %d handling Ready\n", id)
	rd := n.Node.Ready()
	env.log.indent = "  "
	defer func() { env.log.indent = "" }()
	env.Output.WriteString(indent(zab.DescribeReady(rd, nil), "  "))
	if rd.Snapshot != nil {
		n.Storage.ApplySnapshot(*rd.Snapshot)
		n.Durable = rd.Snapshot.Zxid
		n.Applied = nil
	}
	if rd.Truncate != nil {
		if err := n.Storage.Truncate(*rd.Truncate); err != nil {
			return true, err
		}
		n.Durable = min(n.Durable, *rd.Truncate)
	}
	if err := n.Storage.Append(rd.Entries); err != nil {
		return true, err
	}
	if rd.HardState != nil {
		n.Storage.SetHardState(*rd.HardState)
	}
	env.Messages = append(env.Messages, rd.Messages...)
	n.Applied = append(n.Applied, rd.Committed...)
	n.Node.Advance(rd)
	if !n.ManualPersist {
		last, _ := n.Storage.LastZxid()
		if last > n.Durable {
			env.persist(n, last)
		}
	}
	return true, nil
}

func (env *InteractionEnv) persist(n *Node, z zab.Zxid) {
	fmt.Fprintf(env.Output, "%sPersisted: %s\n", env.log.indent, zab.DescribeZxid(z))
	n.Durable = z
	n.Node.Persisted(z)
}

// Persist reports node id's log durable up to z (its last entry if z is 0).
func (env *InteractionEnv) Persist(id uint64, z zab.Zxid) error {
	n, err := env.node(id)
	if err != nil {
		return err
	}
	if n.Node == nil {
		return fmt.Errorf("node %d is down", id)
	}
	last, _ := n.Storage.LastZxid()
	if z == 0 || z > last {
		z = last
	}
	env.persist(n, z)
	return nil
}

// DeliverMsgs delivers every message in flight to the given servers (all
// when none is given), in order, and returns how many it took off the
// queue. With drop set they are lost instead.
func (env *InteractionEnv) DeliverMsgs(drop bool, ids ...uint64) int {
	return env.DeliverMsgsFrom(drop, 0, ids...)
}

// DeliverMsgsFrom is DeliverMsgs for the messages from one sender only
// (from 0: every sender); the others stay in flight, so a message from
// one server can overtake one sent earlier by another.
func (env *InteractionEnv) DeliverMsgsFrom(drop bool, from uint64, ids ...uint64) int {
	if len(ids) == 0 {
		ids = env.ids()
	}
	count := 0
	for _, id := range ids {
		var mine, rest []zab.Message
		for _, m := range env.Messages {
			if m.To == id && (from == 0 || m.From == from) {
				mine = append(mine, m)
			} else {
				rest = append(rest, m)
			}
		}
		if len(mine) == 0 {
			continue
		}
		env.Messages = rest
		count += len(mine)
		n, err := env.node(id)
		switch {
		case drop:
			fmt.Fprintf(env.Output, "> %d dropping messages\n", id)
		case err != nil || n.Node == nil:
			fmt.Fprintf(env.Output, "> %d is down: messages lost\n", id)
		default:
			fmt.Fprintf(env.Output, "> %d receiving messages\n", id)
		}
		for _, m := range mine {
			desc := zab.DescribeMessage(m, nil)
			if drop || err != nil || n.Node == nil {
				fmt.Fprintf(env.Output, "  %s\n", desc)
				continue
			}
			if env.isolated[m.From] || env.isolated[m.To] {
				fmt.Fprintf(env.Output, "  %s DROPPED (isolated)\n", desc)
				continue
			}
			fmt.Fprintf(env.Output, "  %s\n", desc)
			env.log.indent = "    "
			if err := n.Node.Step(m); err != nil {
				fmt.Fprintf(env.Output, "    error: %v\n", err)
			}
			env.log.indent = ""
		}
	}
	return count
}

// Stabilize handles Readies and delivers messages among the given servers
// (all when none is given) until nothing is left to do.
func (env *InteractionEnv) Stabilize(ids ...uint64) error {
	if len(ids) == 0 {
		ids = env.ids()
	}
	for range 10000 {
		done := true
		for _, id := range ids {
			did, err := env.ProcessReady(id)
			if err != nil {
				return err
			}
			if did {
				done = false
			}
		}
		for _, id := range ids {
			if env.DeliverMsgs(false, id) > 0 {
				done = false
			}
		}
		if done {
			return nil
		}
	}
	return fmt.Errorf("no quiescence after 10000 rounds")
}

func indent(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix)
			b.WriteString(l)
		}
	}
	return b.String()
}
