package rlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/zab"
)

type memHS struct {
	mu sync.Mutex
	hs zab.HardState
}

func (h *memHS) SaveHardState(hs zab.HardState) error {
	h.mu.Lock()
	h.hs = hs
	h.mu.Unlock()
	return nil
}

// groupMember is one member of an in-process group: its disk, State,
// Store, Driver and the goroutine running it.
type groupMember struct {
	id     uint64
	fs     *vfs.MemFS
	hs     *memHS
	s      *State
	st     *Store
	mb     *Member
	cancel context.CancelFunc
	done   chan struct{}
}

type group struct {
	t   *testing.T
	nw  *transport.Network
	ids []uint64
	ms  map[uint64]*groupMember
}

func newGroup(t *testing.T, n int) *group {
	g := &group{t: t, nw: transport.NewNetwork(transport.NetworkConfig{Codec: true}), ms: map[uint64]*groupMember{}}
	for i := range n {
		g.ids = append(g.ids, uint64(i+1))
	}
	for _, id := range g.ids {
		g.start(id, vfs.NewMem(), &memHS{})
	}
	t.Cleanup(func() {
		for _, id := range g.ids {
			g.stop(id)
		}
		g.nw.Close()
	})
	return g
}

func (g *group) start(id uint64, fsys *vfs.MemFS, hs *memHS) {
	t := g.t
	s, err := Open(Options{FS: fsys, Dir: "m", DataLog: datalog.Options{SegmentSize: 1 << 18, PrepareInline: true}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(s, fsys, "m", wal.Options{SegmentSize: 1 << 18, PrepareInline: true})
	if err != nil {
		t.Fatal(err)
	}
	ents, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	ep, err := g.nw.Join(id)
	if err != nil {
		t.Fatal(err)
	}
	hs.mu.Lock()
	cfg := replica.Config{ID: id, Voters: g.ids, Mode: replica.Sync, SM: s, HardState: hs.hs, Log: ents,
		Schedule: replica.Schedule{SnapCount: 20},
		Env:      replica.Env{Log: st, HardState: hs, Send: ep.Send}}
	hs.mu.Unlock()
	mb := NewMember(s, &cfg)
	d, err := replica.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mb.Attach(d)
	ctx, cancel := context.WithCancel(context.Background())
	m := &groupMember{id: id, fs: fsys, hs: hs, s: s, st: st, mb: mb, cancel: cancel, done: make(chan struct{})}
	g.ms[id] = m
	go func() {
		defer close(m.done)
		d.Run(ctx, ep.Recv(), 2*time.Millisecond)
		ep.Close()
	}()
}

func (g *group) stop(id uint64) {
	m := g.ms[id]
	if m == nil {
		return
	}
	m.cancel()
	<-m.done
	m.st.Close()
	m.s.Close()
	delete(g.ms, id)
}

// do sends req to whichever member leads, retrying while there is none.
func (g *group) do(req Mutation) Result {
	var res Result
	testutil.Eventually(g.t, 20*time.Second, fmt.Sprintf("%v done by a leader", req.Op), func() bool {
		for _, m := range g.ms {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r, err := m.mb.Do(ctx, req)
			cancel()
			if err == nil {
				res = r
				return true
			}
			if !errors.Is(err, ErrNotLeader) && !errors.Is(err, context.DeadlineExceeded) {
				g.t.Fatalf("%v on member %d: %v", req.Op, m.id, err)
			}
		}
		return false
	})
	return res
}

// waitSame waits until every member has committed end bytes of name and
// checks they hold the same bytes as want.
func (g *group) waitSame(name string, start int64, want []byte) {
	end := start + int64(len(want))
	for _, m := range g.ms {
		testutil.Eventually(g.t, 20*time.Second, fmt.Sprintf("member %d committed %s to %d", m.id, name, end), func() bool {
			st, err := m.s.Stat(name)
			return err == nil && st.Committed >= end
		})
		if got := readAll(g.t, m.s, name, start); !bytes.Equal(got, want) {
			g.t.Fatalf("member %d: %s holds %d bytes that differ from the %d appended", m.id, name, len(got), len(want))
		}
	}
}

// TestGroupReplicatesLogs runs three members in-process over the
// in-memory transport: appends from the leader reach every member's data
// log with identical bytes; a member restarted on its own disk catches
// up; a member restarted from an empty disk catches up by SNAP with the
// payloads (the logs are cut every ~20 entries).
func TestGroupReplicatesLogs(t *testing.T) {
	g := newGroup(t, 3)
	if r := g.do(Mutation{Op: OpCreate, Name: "g"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	var want []byte
	appendSome := func(n int) {
		for range n {
			p := make([]byte, 1+r.IntN(16<<10))
			for i := range p {
				p[i] = byte(r.IntN(256))
			}
			res := g.do(NewAppend("g", NoOffset, p))
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.Offset != int64(len(want)) {
				t.Fatalf("append at %d, want %d", res.Offset, len(want))
			}
			want = append(want, p...)
		}
	}
	appendSome(30)
	g.waitSame("g", 0, want)
	if e := g.do(NewAppend("g", 3, []byte("x"))).Err; e == nil {
		t.Fatal("a wrong expected offset was accepted")
	}

	// Restart member 3 on its own disk (crash: unsynced state lost).
	m3 := g.ms[3]
	fs3, hs3 := m3.fs, m3.hs
	g.stop(3)
	appendSome(10)
	fs3.Crash()
	g.start(3, fs3, hs3)
	appendSome(5)
	g.waitSame("g", 0, want)

	// Member 2 from an empty disk: the others cut their logs long ago.
	g.stop(2)
	appendSome(30)
	g.start(2, vfs.NewMem(), &memHS{})
	appendSome(3)
	g.waitSame("g", 0, want)
	if n := g.ms[2].mb.Driver().SnapInstalls(); n == 0 {
		t.Fatal("member 2 caught up from an empty disk without a SNAP")
	}
}

// TestStorePurgesWAL: a local snapshot lets the Store drop the WAL
// segments it covers, and a restart still finds everything.
func TestStorePurgesWAL(t *testing.T) {
	mem := vfs.NewMem()
	open := func() (*State, *Store) {
		s, err := Open(Options{FS: mem, Dir: "p", DataLog: datalog.Options{SegmentSize: 1 << 16, PrepareInline: true}})
		if err != nil {
			t.Fatal(err)
		}
		st, err := OpenStore(s, mem, "p", wal.Options{SegmentSize: 1024, PrepareInline: true})
		if err != nil {
			t.Fatal(err)
		}
		return s, st
	}
	s, st := open()
	z := zab.Zxid(1 << 32)
	var ents []zab.Entry
	next := func(m Mutation) zab.Entry {
		z++
		return zab.Entry{Zxid: z, Data: Encode(nil, &m)}
	}
	ents = append(ents, next(Mutation{Op: OpCreate, Name: "w"}))
	id := uint64(z)
	var want []byte
	for i := range 100 {
		p := bytes.Repeat([]byte{byte(i)}, 100)
		m := NewAppend("w", NoOffset, p)
		m.Log, m.Offset = id, int64(len(want))
		want = append(want, p...)
		ents = append(ents, next(m))
	}
	if err := st.Append(ents); err != nil {
		t.Fatal(err)
	}
	if err := st.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ents); err != nil {
		t.Fatal(err)
	}
	walFiles := func() int {
		names, _ := mem.List("p/wal")
		return len(names)
	}
	before := walFiles()
	if _, err := s.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := walFiles(); after >= before || before < 3 {
		t.Fatalf("WAL files: %d before the snapshot, %d after", before, after)
	}
	st.Close()
	s.Close()
	mem.Crash()
	s, st = open()
	defer s.Close()
	defer st.Close()
	if ents, err := st.Load(); err != nil || len(ents) != 0 {
		t.Fatalf("load after the snapshot: %d entries, %v", len(ents), err)
	}
	if got := readAll(t, s, "w", 0); !bytes.Equal(got, want) {
		t.Fatal("the log differs after the restart")
	}
}
