package client_test

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/internal/zktls"
	"github.com/corral-db/corral/internal/zktls/zktlstest"
	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

// TestTLS: with client.TLS and a certificate of the server's CA the
// client's session is x509:<subject> on the server's secureClientPort
// and is held to x509 ACLs; a client that does not trust the server's CA
// does not connect.
func TestTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := zktlstest.NewCA(t, "ca")
	srvFiles := ca.Issue(t, pkix.Name{CommonName: "server"}).WritePKCS12(t, dir, "server", ca)
	port := harness.FreePort(t)
	env.StartWith(t, harness.Config{Extra: []string{
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		fmt.Sprintf("secureClientPort=%d", port),
		"secureClientPortAddress=127.0.0.1",
		"ssl.keyStore.location=" + srvFiles.KeyStore,
		"ssl.keyStore.password=" + srvFiles.Password,
		"ssl.trustStore.location=" + srvFiles.TrustStore,
		"ssl.trustStore.password=" + srvFiles.Password,
	}})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	tlsFor := func(f zktlstest.Files) client.Option {
		s := zktls.Default()
		s.KeyStoreLocation, s.KeyStorePassword = f.KeyStore, f.Password
		s.TrustStoreLocation, s.TrustStorePassword = f.TrustStore, f.Password
		l, err := zktls.Load(s)
		if err != nil {
			t.Fatal(err)
		}
		return client.TLS(l.ClientConfig(""))
	}
	ctx := testCtx(t)
	alice := connect(t, addr, tlsFor(ca.Issue(t, pkix.Name{CommonName: "alice"}).WritePKCS12(t, dir, "alice", ca)))
	ids, err := alice.WhoAmI(ctx)
	if err != nil || len(ids) == 0 || ids[0] != (client.ClientInfo{AuthScheme: "x509", User: "CN=alice"}) {
		t.Fatalf("alice's ids: %+v, %v", ids, err)
	}
	acl := []client.ACL{{Perms: client.PermAll, ID: client.ID{Scheme: "x509", ID: "CN=alice"}}}
	if _, err := alice.Create(ctx, "/tls-alice", []byte("a"), acl, client.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Get(ctx, "/tls-alice"); err != nil {
		t.Errorf("alice reads her node: %v", err)
	}
	bob := connect(t, addr, tlsFor(ca.Issue(t, pkix.Name{CommonName: "bob"}).WritePKCS12(t, dir, "bob", ca)))
	_, _, err = bob.Get(ctx, "/tls-alice")
	wantErr(t, "bob reads alice's node", err, wire.CodeNoAuth)

	other := zktlstest.NewCA(t, "other")
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := client.Connect(cctx, []string{addr}, client.SessionTimeout(sessionTimeout),
		tlsFor(other.Issue(t, pkix.Name{CommonName: "mallory"}).WritePKCS12(t, dir, "mallory", other)))
	if err == nil {
		c.Close()
		t.Fatal("a client that does not trust the server's CA connected")
	}
}

// TestTLSPortUnification: with client.portUnification=true one port
// serves plaintext and TLS clients; the TLS one is x509:<subject>, the
// plaintext one only ip, and they see each other's writes.
func TestTLSPortUnification(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := zktlstest.NewCA(t, "ca")
	srvFiles := ca.Issue(t, pkix.Name{CommonName: "server"}).WritePKCS12(t, dir, "server", ca)
	srv := env.StartWith(t, harness.Config{Extra: []string{
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"client.portUnification=true",
		// ZooKeeper registers the x509 provider itself only for a
		// secureClientPort; on a unified port without this line it drops
		// TLS clients that present a certificate. corral does not need it.
		"authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
		"ssl.keyStore.location=" + srvFiles.KeyStore,
		"ssl.keyStore.password=" + srvFiles.Password,
		"ssl.trustStore.location=" + srvFiles.TrustStore,
		"ssl.trustStore.password=" + srvFiles.Password,
	}})
	carol := ca.Issue(t, pkix.Name{CommonName: "carol"}).WritePKCS12(t, dir, "carol", ca)
	s := zktls.Default()
	s.KeyStoreLocation, s.KeyStorePassword = carol.KeyStore, carol.Password
	s.TrustStoreLocation, s.TrustStorePassword = carol.TrustStore, carol.Password
	l, err := zktls.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	secure := connect(t, srv.Addr(), client.TLS(l.ClientConfig("")))
	plain := connect(t, srv.Addr())
	ids, err := secure.WhoAmI(ctx)
	if err != nil || len(ids) != 2 || ids[0] != (client.ClientInfo{AuthScheme: "x509", User: "CN=carol"}) {
		t.Errorf("TLS client's ids on the unified port: %+v, %v", ids, err)
	}
	if ids, err := plain.WhoAmI(ctx); err != nil || len(ids) != 1 || ids[0].AuthScheme != "ip" {
		t.Errorf("plaintext client's ids on the unified port: %+v, %v", ids, err)
	}
	if _, err := plain.Create(ctx, "/unified", []byte("p"), client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if d, _, err := secure.Get(ctx, "/unified"); err != nil || string(d) != "p" {
		t.Errorf("TLS client reads the plaintext client's write: %q, %v", d, err)
	}
}
