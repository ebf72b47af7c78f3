package e2e

import (
	"bytes"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

// TestSessions covers the handshake, session lifetime, close and expiry
// (PROTOCOL §3, §11).
func TestSessions(t *testing.T) {
	srv := env.Start(t)
	watcher, _ := connect(t, srv)
	open := zk.WorldACL(zk.PermAll)

	t.Run("Handshake", func(t *testing.T) {
		t.Parallel()
		// With the readOnly byte: a 37-byte reply that mirrors it.
		r := harness.Dial(t, srv.Addr())
		f := false
		resp, err := r.Connect(harness.ConnectRequest{TimeOut: 100000, Passwd: make([]byte, 16), ReadOnly: &f})
		if err != nil {
			t.Fatal(err)
		}
		if resp.FrameLen != 37 || resp.ReadOnly == nil || *resp.ReadOnly || resp.ProtocolVersion != 0 ||
			len(resp.Passwd) != 16 || resp.SessionID == 0 {
			t.Errorf("connect response with readOnly: %+v", resp)
		}
		// Requested timeouts are clamped to [2, 20] ticks.
		if resp.TimeOut != 40000 {
			t.Errorf("timeout 100000 negotiated to %d, want 40000", resp.TimeOut)
		}
		// Without it (go-zk, node): a 36-byte reply without it.
		r2 := harness.Dial(t, srv.Addr())
		resp2, err := r2.Connect(harness.ConnectRequest{TimeOut: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if resp2.FrameLen != 36 || resp2.ReadOnly != nil || resp2.TimeOut != 4000 || resp2.SessionID == resp.SessionID {
			t.Errorf("connect response without readOnly: %+v", resp2)
		}
		// Creating a session consumes a zxid.
		_, p1, _ := r.Exists("/", false)
		r3 := harness.DialSession(t, srv.Addr(), 30000)
		_, p3, _ := r3.Exists("/", false)
		if p3.Zxid <= p1.Zxid {
			t.Errorf("zxid after a new session %#x, before %#x: createSession must consume one", p3.Zxid, p1.Zxid)
		}
	})

	t.Run("RenewMovesConnection", func(t *testing.T) {
		t.Parallel()
		r := harness.DialSession(t, srv.Addr(), 30000)
		if p := r.Auth("digest", []byte("alice:secret")); p.Err != wire.CodeOK {
			t.Fatalf("auth: %v", p.Err)
		}
		_, p, _ := r.Exists("/", true)
		// Same id and password on a new connection: accepted, same session,
		// the old connection is closed.
		r2 := harness.Dial(t, srv.Addr())
		resp, err := r2.Connect(harness.ConnectRequest{LastZxidSeen: p.Zxid, TimeOut: 30000, SessionID: r.SessionID, Passwd: r.Passwd})
		if err != nil || resp.SessionID != r.SessionID || !bytes.Equal(resp.Passwd, r.Passwd) || resp.TimeOut != 30000 {
			t.Fatalf("renew: %+v %v", resp, err)
		}
		r.ExpectClosed()
		// Auth ids belong to the connection and do not carry over.
		infos, _ := r2.WhoAmI()
		if !sameInfos(infos, []harness.ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}}) {
			t.Errorf("whoAmI on the renewed connection = %+v, want only ip", infos)
		}

		// A wrong password: timeout 0, session 0, 16 zero bytes, then close.
		bad := harness.Dial(t, srv.Addr())
		f := false
		wrong := bytes.Repeat([]byte{7}, 16)
		resp, err = bad.Connect(harness.ConnectRequest{TimeOut: 30000, SessionID: r.SessionID, Passwd: wrong, ReadOnly: &f})
		if err != nil {
			t.Fatalf("connect with a wrong password: %v", err)
		}
		if resp.TimeOut != 0 || resp.SessionID != 0 || !bytes.Equal(resp.Passwd, make([]byte, 16)) || resp.ReadOnly == nil {
			t.Errorf("connect with a wrong password: %+v", resp)
		}
		bad.ExpectClosed()
	})

	t.Run("ZxidAheadRefused", func(t *testing.T) {
		t.Parallel()
		r := harness.Dial(t, srv.Addr())
		f := false
		_, err := r.Connect(harness.ConnectRequest{LastZxidSeen: 1 << 40, TimeOut: 30000, Passwd: make([]byte, 16), ReadOnly: &f})
		if err == nil || !harness.IsClosed(err) {
			t.Fatalf("connect with lastZxidSeen ahead: err %v, want the connection closed without a response", err)
		}
		// The server keeps serving others.
		harness.DialSession(t, srv.Addr(), 30000)
	})

	t.Run("CloseSession", func(t *testing.T) {
		t.Parallel()
		base := root(t, watcher)
		c, _ := connect(t, srv)
		try(c.Create(base+"/e", nil, zk.FlagEphemeral, open)).must(t)
		ok, _, ch, err := watcher.ExistsW(base + "/e")
		if err != nil || !ok {
			t.Fatalf("exists: %v %v", ok, err)
		}
		c.Close()
		expectEvent(t, ch, zk.EventNodeDeleted, base+"/e")
		if ok, _ := must2(t, watcher.Exists, base+"/e"); ok {
			t.Error("ephemeral survives closeSession")
		}

		// Raw: the reply to closeSession has no body; then the socket closes.
		r := harness.DialSession(t, srv.Addr(), 30000)
		r.Create2(base+"/r", nil, openACL, wire.ModeEphemeral)
		p, _ := r.Call(wire.OpCloseSession, nil)
		if p.Err != wire.CodeOK || len(p.Body) != 0 {
			t.Errorf("closeSession reply: %+v", p)
		}
		r.ExpectClosed()
		if ok, _ := must2(t, watcher.Exists, base+"/r"); ok {
			t.Error("raw session's ephemeral survives closeSession")
		}
		// The closed session cannot be resumed.
		again := harness.Dial(t, srv.Addr())
		resp, err := again.Connect(harness.ConnectRequest{LastZxidSeen: r.LastZxid, TimeOut: 30000, SessionID: r.SessionID, Passwd: r.Passwd})
		if err != nil || resp.SessionID != 0 || resp.TimeOut != 0 {
			t.Errorf("resume a closed session: %+v %v", resp, err)
		}
	})

	t.Run("ExpirySilentClient", func(t *testing.T) {
		t.Parallel()
		base := root(t, watcher)
		// A raw session that never pings expires after its 4 s timeout.
		r := harness.DialSession(t, srv.Addr(), 4000)
		if r.Timeout != 4000 {
			t.Fatalf("negotiated %d", r.Timeout)
		}
		r.Create2(base+"/e", nil, openACL, wire.ModeEphemeral)
		_, _, ch, err := watcher.ExistsW(base + "/e")
		mustOK(t, err)
		expectEvent(t, ch, zk.EventNodeDeleted, base+"/e")
		// The server closes the expired session's connection and sends
		// nothing on it.
		if frames := r.ExpectClosed(); len(frames) != 0 {
			t.Errorf("expired client got %d frames", len(frames))
		}
		again := harness.Dial(t, srv.Addr())
		resp, err := again.Connect(harness.ConnectRequest{LastZxidSeen: r.LastZxid, TimeOut: 4000, SessionID: r.SessionID, Passwd: r.Passwd})
		if err != nil || resp.SessionID != 0 || resp.TimeOut != 0 {
			t.Errorf("resume an expired session: %+v %v", resp, err)
		}
	})

	t.Run("ExpiryCutOffClient", func(t *testing.T) {
		t.Parallel()
		base := root(t, watcher)
		// A go-zk client cut off from the server (connection closed, dials
		// blocked) for longer than its timeout: the server expires the
		// session, and the client learns it when it reconnects.
		gate := newGatedDialer()
		c, events := connectWith(t, srv, 4*time.Second, gate.dial)
		try(c.Create(base+"/e", nil, zk.FlagEphemeral, open)).must(t)
		_, _, ch, err := watcher.ExistsW(base + "/e")
		mustOK(t, err)
		gate.Cut()
		expectEvent(t, ch, zk.EventNodeDeleted, base+"/e")
		gate.Heal()
		waitState(t, events, zk.StateExpired)
	})

	t.Run("PingKeepsSessionAlive", func(t *testing.T) {
		if testing.Short() {
			t.Skip("idles for 12 s")
		}
		t.Parallel()
		base := root(t, watcher)
		c, events := connectWith(t, srv, 4*time.Second, nil)
		sid := c.SessionID()
		try(c.Create(base+"/e", nil, zk.FlagEphemeral, open)).must(t)
		// Idle for three session timeouts; only pings keep it alive.
		time.Sleep(12 * time.Second)
		if ok, _ := must2(t, c.Exists, base+"/e"); !ok {
			t.Fatal("ephemeral gone after an idle period with pings")
		}
		if c.SessionID() != sid {
			t.Errorf("session changed: %#x -> %#x", sid, c.SessionID())
		}
		for _, st := range events.unconsumed() {
			if st != zk.StateHasSession && st != zk.StateConnected {
				t.Errorf("session event while idle: %v", st)
			}
		}
	})

	t.Run("SetWatchesOnReconnect", func(t *testing.T) {
		t.Parallel()
		base := root(t, watcher)
		try(watcher.Create(base+"/d", nil, 0, open)).must(t)
		try(watcher.Create(base+"/c", nil, 0, open)).must(t)
		gate := newGatedDialer()
		c, events := connectWith(t, srv, sessionTimeout, gate.dial)
		sid := c.SessionID()
		_, _, dataCh, err := c.GetW(base + "/d")
		mustOK(t, err)
		_, _, existCh, err := c.ExistsW(base + "/x")
		mustOK(t, err)
		_, _, childCh, err := c.ChildrenW(base + "/c")
		mustOK(t, err)

		// Cut the connection; change /d while the client is away. On
		// reconnect go-zk sends SetWatches with its last zxid: the missed
		// change fires at once, the other watches are re-armed.
		gate.Cut()
		waitState(t, events, zk.StateDisconnected)
		try(watcher.Set(base+"/d", []byte("changed"), -1)).must(t)
		gate.Heal()
		waitState(t, events, zk.StateHasSession)
		if c.SessionID() != sid {
			t.Fatalf("reconnected with session %#x, want %#x", c.SessionID(), sid)
		}
		expectEvent(t, dataCh, zk.EventNodeDataChanged, base+"/d")

		try(watcher.Create(base+"/x", nil, 0, open)).must(t)
		expectEvent(t, existCh, zk.EventNodeCreated, base+"/x")
		try(watcher.Create(base+"/c/k", nil, 0, open)).must(t)
		expectEvent(t, childCh, zk.EventNodeChildrenChanged, base+"/c")

		// A plain connection drop (immediate reconnect) re-arms as well.
		_, _, dataCh, err = c.GetW(base + "/d")
		mustOK(t, err)
		gate.Drop()
		waitState(t, events, zk.StateHasSession)
		try(watcher.Set(base+"/d", []byte("again"), -1)).must(t)
		expectEvent(t, dataCh, zk.EventNodeDataChanged, base+"/d")
	})
}
