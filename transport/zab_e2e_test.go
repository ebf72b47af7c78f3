package transport

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"

	"github.com/corral-db/corral/zab"
)

// zabDriver is a minimal driver loop for one zab.Node: diskless (Persisted
// at once), MemoryStorage, applied entries recorded for the test.
type zabDriver struct {
	id    uint64
	node  *zab.Node
	st    *zab.MemoryStorage
	tr    Transport
	props chan proposeReq

	mu      sync.Mutex
	soft    zab.SoftState
	applied []zab.Entry
	err     error
}

type proposeReq struct {
	data []byte
	res  chan error
}

func (d *zabDriver) run(ctx context.Context, tick time.Duration) {
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			d.node.Tick()
		case m, ok := <-d.tr.Recv():
			if !ok {
				return
			}
			if err := d.node.Step(m); err != nil {
				d.fail(fmt.Errorf("step %v: %w", m, err))
				return
			}
		case p := <-d.props:
			_, err := d.node.Propose(p.data)
			p.res <- err
		}
		for d.node.HasReady() {
			rd := d.node.Ready()
			if rd.Snapshot != nil {
				d.st.ApplySnapshot(*rd.Snapshot)
			}
			if rd.Truncate != nil {
				if err := d.st.Truncate(*rd.Truncate); err != nil {
					d.fail(err)
					return
				}
			}
			if err := d.st.Append(rd.Entries); err != nil {
				d.fail(err)
				return
			}
			if rd.HardState != nil {
				d.st.SetHardState(*rd.HardState)
			}
			d.tr.Send(rd.Messages)
			d.mu.Lock()
			if rd.SoftState != nil {
				d.soft = *rd.SoftState
			}
			d.applied = append(d.applied, rd.Committed...)
			d.mu.Unlock()
			d.node.Advance(rd)
			last, err := d.st.LastZxid()
			if err != nil {
				d.fail(err)
				return
			}
			d.node.Persisted(last)
		}
	}
}

func (d *zabDriver) fail(err error) {
	d.mu.Lock()
	d.err = err
	d.mu.Unlock()
}

func (d *zabDriver) state() (zab.SoftState, []zab.Entry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.soft, slices.Clone(d.applied), d.err
}

func (d *zabDriver) propose(ctx context.Context, data []byte) error {
	p := proposeReq{data: data, res: make(chan error, 1)}
	select {
	case d.props <- p:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-p.res:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// zabEnsemble runs zab nodes, each with its driver goroutine, over any
// Transport.
type zabEnsemble struct {
	t            *testing.T
	ids          []uint64
	ctx          context.Context
	wg           sync.WaitGroup
	drivers      map[uint64]*zabDriver
	cancels      map[uint64]context.CancelFunc
	newTransport func(id uint64) Transport
}

func newZabEnsemble(t *testing.T, ids []uint64, newTransport func(id uint64) Transport) *zabEnsemble {
	ctx, cancel := context.WithCancel(context.Background())
	e := &zabEnsemble{
		t: t, ids: ids, ctx: ctx,
		drivers:      map[uint64]*zabDriver{},
		cancels:      map[uint64]context.CancelFunc{},
		newTransport: newTransport,
	}
	t.Cleanup(func() {
		cancel()
		e.wg.Wait()
	})
	return e
}

// start runs server id on storage st (everything in it counts as
// durable: the driver reports entries persisted at once).
func (e *zabEnsemble) start(id uint64, st *zab.MemoryStorage) {
	e.t.Helper()
	node, err := zab.NewNode(zab.Config{
		ID:        id,
		Voters:    e.ids,
		Storage:   st,
		InitLimit: 100,
		SyncLimit: 50,
		Rand:      rand.New(rand.NewPCG(id, 7)),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	d := &zabDriver{id: id, node: node, st: st, tr: e.newTransport(id), props: make(chan proposeReq)}
	e.drivers[id] = d
	dctx, dcancel := context.WithCancel(e.ctx)
	e.cancels[id] = dcancel
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		d.run(dctx, 10*time.Millisecond)
	}()
}

// stop stops server id's driver (its transport is the caller's).
func (e *zabEnsemble) stop(id uint64) { e.cancels[id]() }

func (e *zabEnsemble) leader(alive []uint64) *zabDriver {
	e.t.Helper()
	for _, id := range alive {
		soft, _, err := e.drivers[id].state()
		if err != nil {
			e.t.Fatalf("driver %d: %v", id, err)
		}
		if soft.Established() {
			return e.drivers[id]
		}
	}
	return nil
}

func (e *zabEnsemble) applied(id uint64) map[string]bool {
	_, ents, _ := e.drivers[id].state()
	got := map[string]bool{}
	for _, x := range ents {
		got[string(x.Data)] = true
	}
	return got
}

// commitAll proposes values until each is applied on every alive server
// (a proposal lost to a leader change is proposed again), then checks
// that the alive servers applied the same history.
func (e *zabEnsemble) commitAll(alive []uint64, values []string) {
	t := e.t
	t.Helper()
	testutil.Eventually(t, 25*time.Second, fmt.Sprintf("values committed on every server of %v", alive), func() bool {
		everywhere, somewhere := true, map[string]bool{}
		for _, id := range alive {
			got := e.applied(id)
			for _, v := range values {
				everywhere = everywhere && got[v]
				somewhere[v] = somewhere[v] || got[v]
			}
		}
		if everywhere {
			return true
		}
		if l := e.leader(alive); l != nil {
			for _, v := range values {
				if !somewhere[v] {
					_ = l.propose(e.ctx, []byte(v))
				}
			}
		}
		return false
	})
	// Same history everywhere (the laggards may still be applying).
	testutil.Eventually(t, waitLimit, "equal histories", func() bool {
		_, first, _ := e.drivers[alive[0]].state()
		for _, id := range alive[1:] {
			_, ents, _ := e.drivers[id].state()
			if !slices.EqualFunc(first, ents, func(a, b zab.Entry) bool {
				return a.Zxid == b.Zxid && string(a.Data) == string(b.Data)
			}) {
				return false
			}
		}
		return true
	})
}

func values(prefix string, n int) []string {
	var vs []string
	for i := 0; i < n; i++ {
		vs = append(vs, fmt.Sprintf("%s-%d", prefix, i))
	}
	return vs
}

// TestZabOverTCP: three zab nodes driven over the TCP transport elect a
// leader and commit proposals on every server; with one follower killed,
// the other two go on committing; restarted, it catches up. This is real
// Zab traffic (votes, FOLLOWERINFO ... UPTODATE, proposals, acks, commits,
// pings) through the codec and the connections.
func TestZabOverTCP(t *testing.T) {
	checkGoroutines(t)
	ids := []uint64{1, 2, 3}
	c := newTCPCluster(t, ids, nil)
	e := newZabEnsemble(t, ids, func(id uint64) Transport { return c.start(id) })
	for _, id := range ids {
		e.start(id, zab.NewMemoryStorage())
	}
	testutil.Eventually(t, waitLimit, "an established leader", func() bool { return e.leader(ids) != nil })
	all := values("value", 50)
	e.commitAll(ids, all)

	// Kill a follower: driver and transport.
	var victim uint64
	for _, id := range ids {
		if soft, _, _ := e.drivers[id].state(); !soft.Established() {
			victim = id
			break
		}
	}
	e.stop(victim)
	c.stop(victim)
	alive := slices.DeleteFunc(slices.Clone(ids), func(id uint64) bool { return id == victim })
	all = append(all, values("after", 20)...)
	e.commitAll(alive, all)
	// The leader kept sending to the dead follower (pings, proposals)
	// until it gave up on it; those messages were dropped, not queued.
	l := e.leader(alive)
	if l == nil {
		t.Fatal("no leader after the commits")
	}
	testutil.Eventually(t, waitLimit, "drops for the dead server", func() bool {
		ps, _ := c.trs[l.id].Stats().Peer(victim)
		return ps.DroppedDown > 0 && !ps.Connected
	})

	// The dead server comes back with its log and catches up over new
	// connections.
	e.start(victim, e.drivers[victim].st)
	e.commitAll(ids, append(all, values("back", 10)...))
}

// TestZabOverNetworkPartition: the same ensemble over the in-memory
// network (through the codec): the leader is cut off, the others elect a
// new one and commit; after the heal everyone converges.
func TestZabOverNetworkPartition(t *testing.T) {
	checkGoroutines(t)
	ids := []uint64{1, 2, 3}
	nw := NewNetwork(NetworkConfig{Codec: true})
	t.Cleanup(nw.Close)
	e := newZabEnsemble(t, ids, func(id uint64) Transport {
		ep, err := nw.Join(id)
		if err != nil {
			t.Fatal(err)
		}
		return ep
	})
	for _, id := range ids {
		e.start(id, zab.NewMemoryStorage())
	}
	testutil.Eventually(t, waitLimit, "an established leader", func() bool { return e.leader(ids) != nil })
	all := values("value", 30)
	e.commitAll(ids, all)

	old := e.leader(ids)
	nw.Isolate(old.id)
	rest := slices.DeleteFunc(slices.Clone(ids), func(id uint64) bool { return id == old.id })
	testutil.Eventually(t, waitLimit, "a new leader among the others", func() bool { return e.leader(rest) != nil })
	all = append(all, values("partitioned", 20)...)
	e.commitAll(rest, all)
	if got := e.applied(old.id); got["partitioned-0"] {
		t.Fatal("the isolated server applied a write of the majority")
	}

	nw.Heal()
	e.commitAll(ids, append(all, values("healed", 10)...))
}
