package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
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
	ts := startServer(t, Options{})
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
	// A write of the new connection is applied after anything prepped
	// before it.
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
	ts := startServer(t, Options{})
	a := dial(t, ts.addr)
	ts.prepMu.Lock()
	before := ts.lastZxid
	ts.prepMu.Unlock()

	ts.logMu.Lock()
	logHeld := true
	defer func() {
		if logHeld {
			ts.logMu.Unlock()
		}
	}()
	// Sent without waiting for the reply, which never comes: the
	// connection is replaced below.
	a.xid++
	a.write(func(e *wire.Encoder) {
		(&wire.RequestHeader{Xid: a.xid, Type: wire.OpCreate}).Encode(e)
		(&wire.CreateRequest{Path: "/early", ACL: wire.OpenACLUnsafe}).Encode(e)
	})
	testutil.Eventually(t, 20*time.Second, "create prepped", func() bool {
		ts.prepMu.Lock()
		defer ts.prepMu.Unlock()
		return ts.lastZxid > before
	})

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
	ts.logMu.Unlock()
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
