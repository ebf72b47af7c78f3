package server

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"io"
	"net"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/zktls"
	"github.com/corral-db/corral/internal/zktls/zktlstest"
	"github.com/corral-db/corral/wire"
)

type tlsFixture struct {
	server            *tls.Config
	alice, bob, admin *zktls.Loaded // clients with certificates of the CA
	rogue             *zktls.Loaded // a certificate of another CA
	anon              *zktls.Loaded // trusts the CA, no certificate
}

func newTLSFixture(t *testing.T, clientAuth string) *tlsFixture {
	t.Helper()
	dir := t.TempDir()
	ca := zktlstest.NewCA(t, "ca")
	other := zktlstest.NewCA(t, "other")
	load := func(f zktlstest.Files, noKey bool) *zktls.Loaded {
		t.Helper()
		s := zktls.Default()
		s.TrustStoreLocation, s.TrustStorePassword = f.TrustStore, f.Password
		if !noKey {
			s.KeyStoreLocation, s.KeyStorePassword = f.KeyStore, f.Password
		}
		s.ClientAuth = clientAuth
		l, err := zktls.Load(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	srvFiles, _, _ := ca.Issue(t, pkix.Name{CommonName: "server"}).WritePEM(t, dir, "server", ca)
	sc, err := load(srvFiles, false).ServerConfig(false)
	if err != nil {
		t.Fatal(err)
	}
	aliceFiles := ca.Issue(t, pkix.Name{CommonName: "alice", Organization: []string{"corral"}}).WritePKCS12(t, dir, "alice", ca)
	return &tlsFixture{
		server: sc,
		alice:  load(aliceFiles, false),
		bob:    load(ca.Issue(t, pkix.Name{CommonName: "bob"}).WritePKCS12(t, dir, "bob", ca), false),
		admin:  load(ca.Issue(t, pkix.Name{CommonName: "admin"}).WriteJKS(t, dir, "admin", ca), false),
		rogue:  load(other.Issue(t, pkix.Name{CommonName: "alice", Organization: []string{"corral"}}).WritePKCS12(t, dir, "rogue", ca), false),
		anon:   load(aliceFiles, true),
	}
}

// dialTLS connects with TLS and opens a session; it returns nil if the
// server refuses the handshake or closes the connection.
func dialTLS(t *testing.T, addr string, l *zktls.Loaded) *tclient {
	t.Helper()
	nc, err := tls.Dial("tcp", addr, l.ClientConfig("127.0.0.1"))
	if err != nil {
		return nil
	}
	req := wire.ConnectRequest{Timeout: 30000, Passwd: make([]byte, 16)}
	var e wire.Encoder
	e.Int(0)
	req.Encode(&e)
	e.B[3] = byte(len(e.B) - 4)
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(e.B); err != nil {
		nc.Close()
		return nil
	}
	var h [4]byte
	if _, err := io.ReadFull(nc, h[:]); err != nil {
		nc.Close()
		return nil
	}
	b := make([]byte, int(h[0])<<24|int(h[1])<<16|int(h[2])<<8|int(h[3]))
	if _, err := io.ReadFull(nc, b); err != nil {
		nc.Close()
		return nil
	}
	nc.SetDeadline(time.Time{})
	c := &tclient{t: t, nc: nc}
	var resp wire.ConnectResponse
	if err := resp.Decode(wire.NewDecoder(b)); err != nil || resp.SessionID == 0 {
		t.Fatalf("handshake: %v %+v", err, resp)
	}
	t.Cleanup(func() { nc.Close() })
	return c
}

func (c *tclient) whoAmI() []wire.ClientInfo {
	c.t.Helper()
	h, d := c.call(wire.OpWhoAmI, nil)
	if h.Err != 0 {
		c.t.Fatalf("whoAmI: %d", h.Err)
	}
	var r wire.WhoAmIResponse
	r.Decode(d)
	return r.ClientInfo
}

func TestSecureClientPort(t *testing.T) {
	f := newTLSFixture(t, "need")
	ts := startServer(t, Options{ListenAddr: "127.0.0.1:0", SecureListenAddr: "127.0.0.1:0", TLS: f.server, X509SuperUser: "CN=admin"})
	secure := ts.SecureAddr().String()

	alice := dialTLS(t, secure, f.alice)
	if alice == nil {
		t.Fatal("a client with a trusted certificate was refused")
	}
	ids := alice.whoAmI()
	if len(ids) != 2 || ids[0].AuthScheme != "x509" || ids[0].User != "CN=alice,O=corral" || ids[1].AuthScheme != "ip" {
		t.Errorf("alice's ids: %+v, want x509 CN=alice,O=corral and ip, as ZooKeeper lists them", ids)
	}
	// A node only alice's certificate may read.
	acl := []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "x509", ID: "CN=alice,O=corral"}}}
	h, _ := alice.call(wire.OpCreate, &wire.CreateRequest{Path: "/alice", Data: []byte("secret"), ACL: acl})
	if h.Err != 0 {
		t.Fatalf("create with an x509 ACL: %d", h.Err)
	}
	if data, code := alice.get("/alice"); code != 0 || string(data) != "secret" {
		t.Errorf("alice reads /alice: %q, %v", data, code)
	}
	bob := dialTLS(t, secure, f.bob)
	if bob == nil {
		t.Fatal("bob refused")
	}
	if _, code := bob.get("/alice"); code != wire.CodeNoAuth {
		t.Errorf("bob reads /alice: %v, want NoAuth", code)
	}
	plain := dial(t, ts.addr)
	if _, code := plain.get("/alice"); code != wire.CodeNoAuth {
		t.Errorf("a plaintext client reads /alice: %v, want NoAuth", code)
	}
	admin := dialTLS(t, secure, f.admin)
	if admin == nil {
		t.Fatal("admin refused")
	}
	if data, code := admin.get("/alice"); code != 0 || string(data) != "secret" {
		t.Errorf("the x509 super user reads /alice: %q, %v", data, code)
	}

	if dialTLS(t, secure, f.rogue) != nil {
		t.Error("a certificate of another CA was accepted")
	}
	if dialTLS(t, secure, f.anon) != nil {
		t.Error("a client without a certificate was accepted with clientAuth=need")
	}
	// Plaintext on the TLS port gets nowhere.
	nc, err := net.Dial("tcp", secure)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte{0, 0, 0, 44, 0, 0, 0, 0})
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, _ := io.ReadFull(nc, make([]byte, 8)); n == 8 {
		t.Error("a plaintext client got a reply on the TLS port")
	}
}

func TestPortUnification(t *testing.T) {
	f := newTLSFixture(t, "want")
	ts := startServer(t, Options{ListenAddr: "127.0.0.1:0", PortUnification: true, TLS: f.server})
	plain := dial(t, ts.addr)
	if _, code := plain.create("/p", nil, 0); code != 0 {
		t.Fatalf("plaintext create: %v", code)
	}
	alice := dialTLS(t, ts.addr, f.alice)
	if alice == nil {
		t.Fatal("TLS client refused on the unified port")
	}
	if ids := alice.whoAmI(); len(ids) != 2 || ids[0].User != "CN=alice,O=corral" {
		t.Errorf("alice's ids on the unified port: %+v", ids)
	}
	if _, code := alice.get("/p"); code != 0 {
		t.Errorf("TLS read of a plaintext write: %v", code)
	}
	// clientAuth=want: no certificate, no x509 id, still served.
	anon := dialTLS(t, ts.addr, f.anon)
	if anon == nil {
		t.Fatal("a client without a certificate was refused with clientAuth=want")
	}
	if ids := anon.whoAmI(); len(ids) != 1 || ids[0].AuthScheme != "ip" {
		t.Errorf("anonymous TLS client's ids: %+v", ids)
	}
	// A certificate of another CA is not even offered (the server names
	// the CAs it accepts), so that client is anonymous too.
	if rogue := dialTLS(t, ts.addr, f.rogue); rogue != nil {
		if ids := rogue.whoAmI(); len(ids) != 1 || ids[0].AuthScheme != "ip" {
			t.Errorf("a certificate of another CA gave ids %+v", ids)
		}
	}
}

func TestTLSPortNeedsConfig(t *testing.T) {
	if _, err := New(Options{DataDir: t.TempDir(), SecureListenAddr: "127.0.0.1:0"}); err == nil {
		t.Error("New accepted a secure port without a TLS configuration")
	}
}
