package server

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/corral-db/corral/wire"
)

// TestDialLocal: a connection from DialLocal is a client connection like
// one on the client port, here of a member whose only client port is
// TLS, which a plaintext client of its own could not use: it opens a
// session, writes and reads, authenticates as ip 127.0.0.1, is listed and
// counted like a loopback connection, and ends when the server stops,
// after which DialLocal fails.
func TestDialLocal(t *testing.T) {
	f := newTLSFixture(t, "need")
	unstarted, err := New(Options{ListenAddr: "127.0.0.1:0", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unstarted.DialLocal(context.Background()); err == nil {
		t.Fatal("DialLocal before Serve succeeded")
	}
	ts := startServer(t, Options{SecureListenAddr: "127.0.0.1:0", TLS: f.server})
	s := ts.Server
	nc, err := s.DialLocal(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := handshakeOn(t, nc)
	if p, code := c.create("/local", []byte("in process"), 0); code != wire.CodeOK || p != "/local" {
		t.Fatalf("create: %q %v", p, code)
	}
	if d, code := c.get("/local"); code != wire.CodeOK || !bytes.Equal(d, []byte("in process")) {
		t.Fatalf("get: %q %v", d, code)
	}
	if ids := c.whoAmI(); len(ids) != 1 || ids[0].AuthScheme != "ip" || ids[0].User != "127.0.0.1" {
		t.Errorf("ids: %+v, want ip 127.0.0.1 only", ids)
	}
	s.connMu.Lock()
	conns, perIP := len(s.conns), s.perIP["127.0.0.1"]
	s.connMu.Unlock()
	if conns != 1 || perIP != 1 {
		t.Errorf("%d connections, %d from 127.0.0.1; want 1 and 1", conns, perIP)
	}

	ts.stop(t)
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err == nil {
		t.Error("the local connection is still open after the server stopped")
	}
	if _, err := s.DialLocal(context.Background()); err == nil {
		t.Error("DialLocal after the server stopped succeeded")
	}
}
