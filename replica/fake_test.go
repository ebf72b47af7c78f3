package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/zab"
)

// listSM is a StateMachine that keeps the zxids and payloads it applied.
type listSM struct {
	mu      sync.Mutex
	applied []zab.Entry
	durable zab.Zxid
	snaps   int
}

func (m *listSM) Apply(ents []zab.Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range ents {
		if n := len(m.applied); n > 0 && m.applied[n-1].Zxid >= e.Zxid {
			return fmt.Errorf("apply %v after %v", e.Zxid, m.applied[n-1].Zxid)
		}
		m.applied = append(m.applied, e)
	}
	return nil
}

func (m *listSM) Applied() zab.Zxid {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastLocked()
}

func (m *listSM) lastLocked() zab.Zxid {
	if n := len(m.applied); n > 0 {
		return m.applied[n-1].Zxid
	}
	return 0
}

func (m *listSM) Durable() zab.Zxid {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.durable
}

func (m *listSM) Snapshot(context.Context) (zab.Zxid, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.durable = m.lastLocked()
	m.snaps++
	return m.durable, nil
}

func (m *listSM) WriteSnapshot(_ context.Context, w io.Writer) (zab.Zxid, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b []byte
	for _, e := range m.applied {
		b = binary.AppendUvarint(b, uint64(e.Zxid))
		b = binary.AppendUvarint(b, uint64(len(e.Data)))
		b = append(b, e.Data...)
	}
	_, err := w.Write(b)
	return m.lastLocked(), err
}

func (m *listSM) InstallSnapshot(_ context.Context, r io.Reader) (zab.Zxid, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	var ents []zab.Entry
	for len(b) > 0 {
		z, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errors.New("bad image")
		}
		b = b[n:]
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return 0, errors.New("bad image")
		}
		ents = append(ents, zab.Entry{Zxid: zab.Zxid(z), Data: b[n : n+int(l)]})
		b = b[n+int(l):]
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applied = ents
	m.durable = m.lastLocked()
	return m.durable, nil
}

func (m *listSM) zxids() []zab.Zxid {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []zab.Zxid
	for _, e := range m.applied {
		out = append(out, e.Zxid)
	}
	return out
}

// fakeLog is a log store in memory; synced is what a crash would keep.
type fakeLog struct {
	ents   []zab.Entry
	synced zab.Zxid
	syncs  int
}

func (l *fakeLog) Append(ents []zab.Entry) error { l.ents = append(l.ents, ents...); return nil }
func (l *fakeLog) Sync() error {
	l.syncs++
	if n := len(l.ents); n > 0 {
		l.synced = l.ents[n-1].Zxid
	}
	return nil
}
func (l *fakeLog) TruncateAfter(z zab.Zxid) error {
	i := slices.IndexFunc(l.ents, func(e zab.Entry) bool { return e.Zxid > z })
	if i >= 0 {
		l.ents = l.ents[:i]
	}
	l.synced = min(l.synced, z)
	return nil
}

// weighFakeLog is a fakeLog that is a Weigher: every record weighs
// weighFakeBytes, whatever the entry's size.
type weighFakeLog struct{ *fakeLog }

const weighFakeBytes = 16

func (l weighFakeLog) Weight(zab.Entry) int64 { return weighFakeBytes }

// slimFakeLog is a fakeLog that is a Slimmer: the slim form of an entry
// is "slim" and its zxid, which Expand looks up.
type slimFakeLog struct{ *fakeLog }

func fakeSlimForm(z zab.Zxid) []byte { return fmt.Appendf(nil, "slim %v", z) }

func (l slimFakeLog) Slim(e zab.Entry) ([]byte, bool) {
	if e.Zxid > l.synced {
		panic(fmt.Sprintf("slim of %v, synced up to %v", e.Zxid, l.synced))
	}
	return fakeSlimForm(e.Zxid), true
}

func (l slimFakeLog) Expand(e zab.Entry) ([]byte, error) {
	if string(e.Data) != string(fakeSlimForm(e.Zxid)) {
		return e.Data, nil
	}
	for _, le := range l.ents {
		if le.Zxid == e.Zxid {
			return le.Data, nil
		}
	}
	return nil, fmt.Errorf("no entry %v", e.Zxid)
}

type fakeHS struct{ hs zab.HardState }

func (h *fakeHS) SaveHardState(hs zab.HardState) error { h.hs = hs; return nil }

// fakeCkpt records diskless checkpoints.
type fakeCkpt struct {
	n        int
	at       zab.Zxid // the last zxid the last checkpoint holds
	complete bool
	ents     []zab.Entry
	sm       *listSM
}

func (c *fakeCkpt) Checkpoint(entries func(after zab.Zxid) ([]zab.Entry, error)) error {
	z, _ := c.sm.Snapshot(context.Background())
	ents, err := entries(z)
	if err != nil {
		return err
	}
	c.n++
	c.at = z
	if n := len(ents); n > 0 {
		c.at = ents[n-1].Zxid
	}
	c.complete = true
	c.ents = ents
	return nil
}

func (c *fakeCkpt) Invalidate() error { c.complete = false; return nil }

type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

// member is one driver of a group and its fakes.
type member struct {
	d    *Driver
	sm   *listSM
	log  *fakeLog
	hs   *fakeHS
	ckpt *fakeCkpt
	down bool
}

// group runs drivers over a fake network: messages are queued and
// delivered by step, in order, except to and from isolated members.
type group struct {
	t       *testing.T
	clock   *fakeClock
	ids     []uint64
	m       map[uint64]*member
	q       []zab.Message
	cut     map[uint64]bool
	mode    Mode
	sched   Schedule
	breaks  Breaks
	noSync  bool // leave log syncs to the test (SyncLog)
	slim    bool // log stores are Slimmers (slimFakeLog)
	weigh   bool // log stores are Weighers (weighFakeLog)
	tickNum int
}

func newGroup(t *testing.T, n int, mode Mode, sched Schedule) *group {
	g := &group{t: t, clock: &fakeClock{t: time.Unix(1000, 0)}, m: map[uint64]*member{}, cut: map[uint64]bool{}, mode: mode, sched: sched}
	for i := 1; i <= n; i++ {
		g.ids = append(g.ids, uint64(i))
	}
	for _, id := range g.ids {
		sm := &listSM{}
		g.start(id, &member{sm: sm, log: &fakeLog{}, hs: &fakeHS{}, ckpt: &fakeCkpt{sm: sm}}, false)
	}
	return g
}

func (g *group) start(id uint64, mb *member, complete bool) {
	g.t.Helper()
	env := Env{
		HardState: mb.hs,
		Send: func(msgs []zab.Message) {
			g.q = append(g.q, msgs...)
		},
		Clock: g.clock,
	}
	if g.mode == Diskless {
		env.Checkpoints = mb.ckpt
	} else if g.slim {
		env.Log = slimFakeLog{mb.log}
	} else if g.weigh {
		env.Log = weighFakeLog{mb.log}
	} else {
		env.Log = mb.log
	}
	var logged []zab.Entry
	if g.mode == Diskless {
		if complete {
			logged = mb.ckpt.ents
		}
	} else {
		for _, e := range mb.log.ents {
			if e.Zxid <= mb.log.synced {
				logged = append(logged, e)
			}
		}
	}
	d, err := New(Config{
		ID: id, Voters: g.ids, Mode: g.mode, Env: env, SM: mb.sm,
		HardState: mb.hs.hs, Log: logged, Complete: complete,
		Schedule: g.sched, Breaks: g.breaks,
		Rand: rand.New(rand.NewPCG(id, 7)),
	})
	if err != nil {
		g.t.Fatal(err)
	}
	mb.d = d
	mb.down = false
	g.m[id] = mb
}

// follower returns the stable leader and one of its followers.
func (g *group) follower() (leader, follower uint64) {
	g.t.Helper()
	l := g.stable()
	for _, id := range g.ids {
		if id != l {
			return l, id
		}
	}
	g.t.Fatal("a group of one has no follower")
	return l, 0
}

// isolateFollower cuts a follower of the stable leader off, as a broken
// TCP connection is (both ends learn it), and returns both.
func (g *group) isolateFollower() (leader, follower uint64) {
	g.t.Helper()
	l, f := g.follower()
	g.cut[f] = true
	g.m[l].d.ReportUnreachable(f)
	g.m[f].d.ReportUnreachable(l)
	return l, f
}

// crash stops a member: its state machine keeps only what is durable.
func (g *group) crash(id uint64) {
	mb := g.m[id]
	mb.down = true
	mb.sm.mu.Lock()
	i := slices.IndexFunc(mb.sm.applied, func(e zab.Entry) bool { return e.Zxid > mb.sm.durable })
	if i >= 0 {
		mb.sm.applied = mb.sm.applied[:i]
	}
	mb.sm.mu.Unlock()
	mb.log.TruncateAfter(mb.log.synced)
}

func (g *group) restart(id uint64) {
	mb := g.m[id]
	g.start(id, &member{sm: mb.sm, log: mb.log, hs: mb.hs, ckpt: mb.ckpt}, mb.ckpt.complete)
}

// step delivers the queued messages, processes every member, syncs
// their logs (unless noSync) and ticks every tenth step.
func (g *group) step() {
	g.t.Helper()
	g.clock.t = g.clock.t.Add(10 * time.Millisecond)
	q := g.q
	g.q = nil
	for _, m := range q {
		to := g.m[m.To]
		if to.down || g.m[m.From].down || g.cut[m.To] || g.cut[m.From] {
			continue
		}
		if err := to.d.Step(m); err != nil {
			g.t.Logf("step %v: %v", m, err)
		}
	}
	g.tickNum++
	for _, id := range g.ids {
		mb := g.m[id]
		if mb.down {
			continue
		}
		if g.tickNum%3 == 0 {
			mb.d.Tick()
		}
		if err := mb.d.Process(); err != nil {
			g.t.Fatal(err)
		}
		if !g.noSync && g.mode != Diskless {
			if err := mb.d.SyncLog(); err != nil {
				g.t.Fatal(err)
			}
		}
		if err := mb.d.Process(); err != nil {
			g.t.Fatal(err)
		}
	}
}

func (g *group) leader() uint64 {
	for _, id := range g.ids {
		if mb := g.m[id]; !mb.down && !g.cut[id] && mb.d.SoftState().Established() {
			return id
		}
	}
	return 0
}

func (g *group) runUntil(n int, cond func() bool) bool {
	for i := 0; i < n; i++ {
		if cond() {
			return true
		}
		g.step()
	}
	return cond()
}

func (g *group) stable() uint64 {
	g.t.Helper()
	var l uint64
	if !g.runUntil(3000, func() bool {
		l = g.leader()
		if l == 0 {
			return false
		}
		for _, id := range g.ids {
			mb := g.m[id]
			if !mb.down && !g.cut[id] {
				if ss := mb.d.SoftState(); ss.Leader != l || ss.Phase != zab.PhaseBroadcast {
					return false
				}
			}
		}
		return true
	}) {
		g.t.Fatalf("no stable leader")
	}
	return l
}

// write proposes n entries at the leader and waits until every live
// member applied them.
func (g *group) write(n int) zab.Zxid {
	g.t.Helper()
	l := g.stable()
	var z zab.Zxid
	for i := 0; i < n; i++ {
		var err error
		z, err = g.m[l].d.Propose([]byte(fmt.Sprintf("w%d", i)))
		if err != nil {
			g.t.Fatal(err)
		}
	}
	if !g.runUntil(3000, func() bool {
		for _, id := range g.ids {
			if mb := g.m[id]; !mb.down && !g.cut[id] && mb.sm.Applied() < z {
				return false
			}
		}
		return true
	}) {
		g.t.Fatalf("write %v not applied everywhere", z)
	}
	return z
}
