package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/client/recipes"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wire"
)

// reconnect opens a connection for the existing session of c, as a
// client does after losing its connection. It is safe on any goroutine:
// errors are returned.
func reconnect(addr string, c *tclient) (net.Conn, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	req := wire.ConnectRequest{Timeout: 30000, SessionID: c.sid, Passwd: c.pass, HasReadOnly: true}
	var e wire.Encoder
	e.Int(0)
	req.Encode(&e)
	binary.BigEndian.PutUint32(e.B, uint32(len(e.B)-4))
	if _, err := nc.Write(e.B); err != nil {
		nc.Close()
		return nil, err
	}
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	var h [4]byte
	if _, err := io.ReadFull(nc, h[:]); err != nil {
		nc.Close()
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(h[:]))
	if _, err := io.ReadFull(nc, b); err != nil {
		nc.Close()
		return nil, err
	}
	var resp wire.ConnectResponse
	if err := resp.Decode(wire.NewDecoder(b)); err != nil || resp.SessionID != c.sid {
		nc.Close()
		return nil, fmt.Errorf("reconnect refused: %v %+v", err, resp)
	}
	nc.SetReadDeadline(time.Time{})
	return nc, nil
}

// gateFS holds every file's Sync while the test holds the gate, so that
// writes stay proposed (logged, unsynced) and unapplied: a disk whose
// fsync stalls.
type gateFS struct {
	vfs.FS
	gate *sync.RWMutex
}

func (f gateFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return gateFile{file, f.gate}, nil
}

func (f gateFS) Create(name string) (vfs.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (f gateFS) Open(name string) (vfs.File, error) { return f.OpenFile(name, os.O_RDONLY, 0) }

type gateFile struct {
	vfs.File
	gate *sync.RWMutex
}

func (f gateFile) Sync() error {
	f.gate.RLock()
	defer f.gate.RUnlock()
	return f.File.Sync()
}

// startGatedServer starts a server whose syncs wait while gate is held.
func startGatedServer(t *testing.T) (*testServer, *sync.RWMutex) {
	gate := &sync.RWMutex{}
	return startServer(t, Options{FS: gateFS{vfs.OS(), gate}}), gate
}

// proposed is the zxid of the newest write the server proposed.
func proposed(ts *testServer) int64 { return int64(ts.rep.d.LastZxid()) }

// requestFrame is a request as a connection's reader hands it to
// handleFrame: header and body, without the length.
func requestFrame(xid int32, op wire.Op, body wire.Record) []byte {
	var e wire.Encoder
	(&wire.RequestHeader{Xid: xid, Type: op}).Encode(&e)
	body.Encode(&e)
	return e.B
}

// TestWriteAfterSessionMovedIsRefused: a write that the old connection's
// reader hands over after its session moved to a new connection (a frame
// it had already read from the socket) must not apply. The client, on
// the new connection, may already have looked for its effect and found
// none; a lock request that landed then would stay queued for a session
// that does not know it, in front of every later waiter.
func TestWriteAfterSessionMovedIsRefused(t *testing.T) {
	lateWriteAfterMoveIsRefused(t, startServer(t, Options{}))
}

// lateWriteAfterMoveIsRefused moves a session of ts to a new connection,
// has the old connection's reader hand over a create of /late after the
// move, and checks that the create did not apply: a write of the new
// connection (/after) is applied after anything the old one prepped or
// forwarded before it, so /late is absent once /after is answered.
func lateWriteAfterMoveIsRefused(t *testing.T, ts *testServer) {
	t.Helper()
	a := dial(t, ts.addr)
	old := ts.sessions.get(a.sid).owner.Load()
	nc, err := reconnect(ts.addr, a)
	if err != nil {
		t.Fatal(err)
	}
	b := &tclient{t: t, nc: nc, sid: a.sid, pass: a.pass}
	t.Cleanup(func() { nc.Close() })
	// The move closed the old connection; its reader is done once it has
	// left the server's set, and the test plays its part from here.
	testutil.Eventually(t, 20*time.Second, "old connection closed", func() bool {
		ts.connMu.Lock()
		defer ts.connMu.Unlock()
		_, open := ts.conns[old]
		return !open
	})
	old.handleFrame(requestFrame(7, wire.OpCreate, &wire.CreateRequest{
		Path: "/late", ACL: wire.OpenACLUnsafe, Flags: int32(wire.ModeEphemeral)}), false)
	if _, code := b.create("/after", nil, 0); code != 0 {
		t.Fatalf("create /after: %v", code)
	}
	if _, code := b.get("/late"); code != wire.CodeNoNode {
		t.Fatalf("the old connection's write after the move was applied (get /late: %v, want NoNode)", code)
	}
}

// TestReconnectWaitsForEarlierWrites: a write the old connection handed
// over before the session moved is applied before the new connection is
// answered, so the client's first read there sees it. The test holds the
// log so that the write stays prepped and unapplied while the client
// reconnects.
func TestReconnectWaitsForEarlierWrites(t *testing.T) {
	ts, gate := startGatedServer(t)
	a := dial(t, ts.addr)
	before := proposed(ts)

	gate.Lock()
	logHeld := true
	defer func() {
		if logHeld {
			gate.Unlock()
		}
	}()
	// Sent without waiting for the reply, which never comes: the
	// connection is replaced below.
	a.xid++
	a.write(func(e *wire.Encoder) {
		(&wire.RequestHeader{Xid: a.xid, Type: wire.OpCreate}).Encode(e)
		(&wire.CreateRequest{Path: "/early", ACL: wire.OpenACLUnsafe}).Encode(e)
	})
	testutil.Eventually(t, 20*time.Second, "create prepped", func() bool { return proposed(ts) > before })

	type result struct {
		nc  net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := reconnect(ts.addr, a)
		done <- result{nc, err}
	}()
	var r result
	answered := false
	testutil.Eventually(t, 20*time.Second, "reconnect answered or waiting", func() bool {
		select {
		case r = <-done:
			answered = true
			return true
		default:
		}
		ts.waitMu.Lock()
		defer ts.waitMu.Unlock()
		return len(ts.appliedWaits) > 0
	})
	if answered {
		// Answered while the write is still held in the log: a read now
		// must already see it.
		if r.err != nil {
			t.Fatal(r.err)
		}
		t.Cleanup(func() { r.nc.Close() })
		b := &tclient{t: t, nc: r.nc, sid: a.sid, pass: a.pass}
		if _, code := b.get("/early"); code != 0 {
			t.Fatalf("reconnect answered before the write prepped ahead of it was applied (get /early: %v)", code)
		}
		return
	}
	gate.Unlock()
	logHeld = false
	r = <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.nc.Close() })
	b := &tclient{t: t, nc: r.nc, sid: a.sid, pass: a.pass}
	if _, code := b.get("/early"); code != 0 {
		t.Fatalf("get /early on the new connection: %v, want it there", code)
	}
}

// cutter is a client.DialFunc whose connections the test can close, as
// a network failure would.
type cutter struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (d *cutter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, network, addr)
	if err == nil {
		d.mu.Lock()
		d.conns = append(d.conns, nc)
		d.mu.Unlock()
	}
	return nc, err
}

func (d *cutter) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, nc := range d.conns {
		nc.Close()
	}
	d.conns = nil
}

// TestLockRequestSurvivesReconnect runs the recipes' Mutex through the
// real client with the interleaving that left a lock queue blocked for
// good (client/recipes TestChaos): the lock's create is prepped but not
// yet applied (the test holds the log) when the client loses its
// connection, so the create's outcome is unknown. The client reconnects
// and looks for its node by the GUID in its name. Had the reconnect been
// answered before the create was applied, the look-up would miss it, the
// client would queue a second node, and the first, owned by the same
// live session, would stay in front of it forever.
func TestLockRequestSurvivesReconnect(t *testing.T) {
	ts, gate := startGatedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := &cutter{}
	c, err := client.Connect(ctx, []string{ts.addr}, client.Dialer(d.dial), client.SessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	obs, err := client.Connect(ctx, []string{ts.addr}, client.SessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	if _, err := obs.Create(ctx, "/lock", nil, client.WorldACL(wire.PermAll), client.ModePersistent); err != nil {
		t.Fatal(err)
	}
	lastZxid := func() int64 { return proposed(ts) }
	before := lastZxid()

	gate.Lock()
	logHeld := true
	defer func() {
		if logHeld {
			gate.Unlock()
		}
	}()
	type result struct {
		h   *recipes.Held
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := recipes.NewMutex(c, "/lock").Lock(ctx)
		done <- result{h, err}
	}()
	testutil.Eventually(t, 20*time.Second, "lock create prepped", func() bool { return lastZxid() > before })
	d.cut()
	// Either the reconnect waits for the log (as it must), or the client,
	// answered at once, missed its node and queued a second one.
	testutil.Eventually(t, 20*time.Second, "reconnect waiting, or a second create", func() bool {
		ts.waitMu.Lock()
		waiting := len(ts.appliedWaits) > 0
		ts.waitMu.Unlock()
		return waiting || lastZxid() > before+1
	})
	gate.Unlock()
	logHeld = false

	// The only client queues one node, ever: a second is the fault, and
	// the Lock would then never return.
	var r result
	var kids []string
	returned := false
	testutil.Within(20*time.Second, func() bool {
		select {
		case r = <-done:
			returned = true
			return true
		default:
		}
		kids, _ = obs.Children(ctx, "/lock")
		return len(kids) > 1
	})
	if !returned {
		t.Fatalf("Lock has not returned; /lock holds %v (one request, queued twice?)", kids)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	kids, err = obs.Children(ctx, "/lock")
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 1 || !strings.HasSuffix(r.h.Path(), "/"+kids[0]) {
		t.Fatalf("/lock holds %v, want only the holder's node %s", kids, r.h.Path())
	}
	if err := r.h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if kids, err := obs.Children(ctx, "/lock"); err != nil || len(kids) != 0 {
		t.Fatalf("after Release /lock holds %v (%v), want nothing", kids, err)
	}
}

// awaitClosed reads c's connection until the server closes it, and fails
// the test if a reply comes instead: the server answers a refused
// SessionMoved write by closing the connection that sent it.
func awaitClosed(t *testing.T, nc net.Conn, what string) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	var h [4]byte
	if _, err := io.ReadFull(nc, h[:]); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("%s: neither answered nor closed", what)
		}
		return // closed
	}
	b := make([]byte, binary.BigEndian.Uint32(h[:]))
	io.ReadFull(nc, b)
	var rh wire.ReplyHeader
	rh.Decode(wire.NewDecoder(b))
	t.Fatalf("%s: answered (xid %d, err %d) instead of refused with SessionMoved", what, rh.Xid, rh.Err)
}

// TestEnsembleWriteFromOldMemberAfterMoveIsRefused: a client's session
// moves from one member to a learner B; a write that the old member
// hands to the leader afterwards (a frame of the old connection, which
// that member does not know has been left) must not apply, or it could
// land after the client looked on B and found nothing. The leader knows
// B owns the session from B's revalidation, and refuses writes from any
// other member (ZooKeeper's checkSession with the LearnerHandler as
// owner). The old member is a learner, then the leader itself.
func TestEnsembleWriteFromOldMemberAfterMoveIsRefused(t *testing.T) {
	e := startEnsemble(t, 3, nil)
	lead := e.waitLeader()
	var learners []int
	for i := range e.servers {
		if i != lead {
			learners = append(learners, i)
		}
	}
	for _, tc := range []struct {
		name     string
		old, new int
	}{
		{"from a learner", learners[0], learners[1]},
		{"from the leader", lead, learners[1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := dial(t, e.servers[tc.old].addr)
			if _, code := a.create("/before-"+tc.name[5:], nil, 0); code != 0 {
				t.Fatalf("create on the old connection: %v", code)
			}
			nc, err := reconnect(e.servers[tc.new].addr, a)
			if err != nil {
				t.Fatal(err)
			}
			b := &tclient{t: t, nc: nc, sid: a.sid, pass: a.pass, xid: 100}
			t.Cleanup(func() { nc.Close() })
			// The session is on B now; the old connection is still open
			// (the client left it, its member did not notice). A frame
			// the client had sent on it reaches its member only now.
			late := "/late-" + tc.name[5:]
			a.write(func(e *wire.Encoder) {
				(&wire.RequestHeader{Xid: 50, Type: wire.OpCreate}).Encode(e)
				(&wire.CreateRequest{Path: late, ACL: wire.OpenACLUnsafe, Flags: int32(wire.ModeEphemeral)}).Encode(e)
			})
			awaitClosed(t, a.nc, "the old connection's write after the move")
			// The refusal took a zxid like any error transaction; a write
			// on B is applied after it, and B reads its own writes.
			if _, code := b.create("/after-"+tc.name[5:], nil, 0); code != 0 {
				t.Fatalf("create on the new connection: %v", code)
			}
			if _, code := b.get(late); code != wire.CodeNoNode {
				t.Fatalf("the old member's write after the move was applied (get %s: %v, want NoNode)", late, code)
			}
			e.waitConverged()
		})
	}
}

// TestLearnerOldConnectionWriteAfterMoveIsRefused: a session moves
// between two connections of one learner; a frame the old connection's
// reader had already taken hands over a write after the move. The
// leader cannot tell the learner's connections apart, so the learner
// must not forward it.
func TestLearnerOldConnectionWriteAfterMoveIsRefused(t *testing.T) {
	e := startEnsemble(t, 3, nil)
	lead := e.waitLeader()
	lateWriteAfterMoveIsRefused(t, e.servers[(lead+1)%3])
}

// TestCheckSessionOwnerRules: the leader's owner test, as ZooKeeper's
// SessionTrackerImpl.checkSession: an unknown owner (a new leader's) is
// adopted by the first checked write's member; a write from another
// member, the leader's own included, is refused with SessionMoved; a
// closing session's writes get SessionExpired.
func TestCheckSessionOwnerRules(t *testing.T) {
	ts := startServer(t, Options{})
	a := dial(t, ts.addr)
	sess := ts.sessions.get(a.sid)
	sess.member.Store(0) // as after a leader change
	write := func(from uint64, op wire.Op) *request {
		return &request{sid: a.sid, from: from, op: op, kind: kindWrite}
	}
	if err := ts.checkSession(write(2, wire.OpSetData)); err != nil {
		t.Fatalf("first write, from member 2: %v", err)
	}
	if got := sess.member.Load(); got != 2 {
		t.Fatalf("owner after the first write: %d, want 2 (adopted)", got)
	}
	if err := ts.checkSession(write(2, wire.OpCreate)); err != nil {
		t.Fatalf("second write from the owner: %v", err)
	}
	for _, from := range []uint64{3, 0} { // another learner; the leader's own
		if err := ts.checkSession(write(from, wire.OpSetData)); err != wire.CodeSessionMoved {
			t.Fatalf("write from member %d (owner 2): %v, want SessionMoved", from, err)
		}
	}
	sess.closing.Store(true)
	if err := ts.checkSession(write(2, wire.OpSetData)); err != wire.CodeSessionExpired {
		t.Fatalf("write of a closing session: %v, want SessionExpired", err)
	}
	sess.closing.Store(false)
}

// TestLearnerReconnectRefusedWhenLeaderSaysNotLive: a learner answers a
// reconnect only after the leader revalidated the session; a session the
// leader no longer knows as live (here: closing there, not yet here) is
// refused, as ZooKeeper's learner refuses when REVALIDATE says invalid.
func TestLearnerReconnectRefusedWhenLeaderSaysNotLive(t *testing.T) {
	e := startEnsemble(t, 3, nil)
	lead := e.waitLeader()
	ls := e.servers[(lead+1)%3]
	a := dial(t, ls.addr)
	testutil.Eventually(t, 20*time.Second, "the session known to the leader", func() bool {
		return e.servers[lead].sessions.get(a.sid) != nil
	})
	if got := e.servers[lead].sessions.get(a.sid).member.Load(); got != ls.rep.id {
		t.Fatalf("owner of a session created through member %d: %d", ls.rep.id, got)
	}
	ls2 := e.servers[(lead+2)%3]
	if _, err := reconnect(ls2.addr, a); err != nil {
		t.Fatalf("reconnect to another learner: %v", err)
	}
	if got := e.servers[lead].sessions.get(a.sid).member.Load(); got != ls2.rep.id {
		t.Fatalf("owner after the reconnect to member %d: %d", ls2.rep.id, got)
	}
	lsess := e.servers[lead].sessions.get(a.sid)
	lsess.closing.Store(true)
	defer lsess.closing.Store(false)
	if _, err := reconnect(ls.addr, a); err == nil {
		t.Fatal("the learner accepted a reconnect the leader refused")
	}
}
