package zktls_test

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/corral-db/corral/internal/zktls"
	"github.com/corral-db/corral/internal/zktls/zktlstest"
)

// The expected names are what the JDK 17 printed for the same DER
// (new X500Principal(der).getName()).
func TestRDNNameMatchesJava(t *testing.T) {
	cases := []struct{ der, want string }{
		{"302f310b3009060355040613025553310f300d060355040a1306636f7272616c310f300d06035504031306636c69656e74",
			`CN=client,O=corral,C=US`},
		{"3081d0310b30090603550408130253543110300e06035504070c075ac3bc72696368310f300d0603550409130631204d61696e310d300b0603550411130438303030311d300c060355040b0c05236c656164300d060355040b0c06785f79407a2a311e301c06035504030c1520612c623d632b643c653e6623673b6822695c6a20310b30090603550405130234323114301206092a864886f70d0109010c056140622e6331173015060a0992268993f22c64011913076578616d706c6531143012060a0992268993f22c640101130475696431",
			`UID=uid1,DC=example,1.2.840.113549.1.9.1=#0c056140622e63,2.5.4.5=#13023432,CN=\ a\,b\=c\+d\<e\>f\#g\;h\"i\\j\ ,OU=\#lead+OU=x_y@z*,2.5.4.17=#130438303030,STREET=1 Main,L=Zürich,ST=ST`},
		{"30223114300806035504031301783008060355040b130179310a3008060355040a13016f", `O=o,CN=x+OU=y`},
	}
	for _, c := range cases {
		der, _ := hex.DecodeString(c.der)
		got, err := zktls.RDNName(der)
		if err != nil || got != c.want {
			t.Errorf("RDNName(%s) = %q, %v; want %q", c.der, got, err, c.want)
		}
	}
	if _, err := zktls.RDNName([]byte{0x30, 0x05, 1}); err == nil {
		t.Error("RDNName accepted garbage")
	}
}

func TestStoreType(t *testing.T) {
	for _, c := range []struct{ typ, path, want string }{
		{"", "a/b.jks", "JKS"}, {"", "x.PEM", "PEM"}, {"", "x.p12", "PKCS12"}, {"", "x.pfx", "PKCS12"},
		{"pkcs12", "x.pem", "PKCS12"}, {"jks", "x", "JKS"},
	} {
		if got, err := zktls.StoreType(c.typ, c.path); err != nil || got != c.want {
			t.Errorf("StoreType(%q, %q) = %q, %v; want %q", c.typ, c.path, got, err, c.want)
		}
	}
	for _, c := range [][2]string{{"", "x.crt"}, {"BCFKS", "x.bcfks"}, {"PKCS11", "x"}} {
		if _, err := zktls.StoreType(c[0], c[1]); err == nil {
			t.Errorf("StoreType(%q, %q) accepted", c[0], c[1])
		}
	}
}

// handshake runs a TLS handshake between the two configurations over a
// pipe and returns the server's view and the client's error.
func handshake(t *testing.T, server, client *tls.Config) (tls.ConnectionState, error, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		cs  tls.ConnectionState
		err error
	}
	ch := make(chan res, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			ch <- res{err: err}
			return
		}
		defer nc.Close()
		sc := tls.Server(nc, server)
		err = sc.Handshake()
		if err == nil {
			_, err = sc.Write([]byte("ok"))
		}
		ch <- res{sc.ConnectionState(), err}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cc := tls.Client(nc, client)
	cerr := cc.Handshake()
	if cerr == nil {
		// TLS 1.3 reports a refused client certificate on the first read.
		_, cerr = io.ReadFull(cc, make([]byte, 2))
	}
	cc.Close()
	r := <-ch
	return r.cs, r.err, cerr
}

func TestStoresAndClientAuth(t *testing.T) {
	dir := t.TempDir()
	ca := zktlstest.NewCA(t, "ca")
	other := zktlstest.NewCA(t, "other")
	srv := ca.Issue(t, pkix.Name{CommonName: "server"})
	cli := ca.Issue(t, pkix.Name{CommonName: "client", Organization: []string{"corral"}})
	rogue := other.Issue(t, pkix.Name{CommonName: "client"})

	srvFiles := map[string]zktlstest.Files{}
	pemF, _, _ := srv.WritePEM(t, dir, "server", ca)
	srvFiles["PEM"] = pemF
	srvFiles["PKCS12"] = srv.WritePKCS12(t, dir, "server", ca)
	srvFiles["JKS"] = srv.WriteJKS(t, dir, "server", ca)
	cliFiles := cli.WritePKCS12(t, dir, "client", ca)
	rogueFiles := rogue.WritePKCS12(t, dir, "rogue", other)

	settings := func(f zktlstest.Files) zktls.Settings {
		s := zktls.Default()
		s.KeyStoreLocation, s.KeyStorePassword = f.KeyStore, f.Password
		s.TrustStoreLocation, s.TrustStorePassword = f.TrustStore, f.Password
		return s
	}
	load := func(s zktls.Settings) *zktls.Loaded {
		t.Helper()
		l, err := zktls.Load(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	client := load(settings(cliFiles))
	for typ, f := range srvFiles {
		t.Run(typ, func(t *testing.T) {
			sc, err := load(settings(f)).ServerConfig(false)
			if err != nil {
				t.Fatal(err)
			}
			cs, serr, cerr := handshake(t, sc, client.ClientConfig("127.0.0.1"))
			if serr != nil || cerr != nil {
				t.Fatalf("handshake: server %v, client %v", serr, cerr)
			}
			name, err := zktls.PrincipalName(cs.PeerCertificates[0])
			if err != nil || name != "CN=client,O=corral" {
				t.Errorf("client principal %q, %v", name, err)
			}
		})
	}
	sc, err := load(settings(srvFiles["PEM"])).ServerConfig(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("untrusted client refused (need)", func(t *testing.T) {
		_, serr, _ := handshake(t, sc, load(settings(rogueFiles)).ClientConfig("127.0.0.1"))
		if serr == nil {
			t.Fatal("server accepted a certificate its trust store does not vouch for")
		}
	})
	t.Run("no client certificate refused (need)", func(t *testing.T) {
		s := zktls.Default()
		s.TrustStoreLocation, s.TrustStorePassword = cliFiles.TrustStore, cliFiles.Password
		_, serr, _ := handshake(t, sc, load(s).ClientConfig("127.0.0.1"))
		if serr == nil {
			t.Fatal("server accepted a client without a certificate under clientAuth=need")
		}
	})
	t.Run("no client certificate accepted (want)", func(t *testing.T) {
		s := settings(srvFiles["PEM"])
		s.ClientAuth = "want"
		wsc, err := load(s).ServerConfig(false)
		if err != nil {
			t.Fatal(err)
		}
		c := zktls.Default()
		c.TrustStoreLocation, c.TrustStorePassword = cliFiles.TrustStore, cliFiles.Password
		cs, serr, cerr := handshake(t, wsc, load(c).ClientConfig("127.0.0.1"))
		if serr != nil || cerr != nil || len(cs.PeerCertificates) != 0 {
			t.Fatalf("want: server %v, client %v, peer certs %d", serr, cerr, len(cs.PeerCertificates))
		}
	})
	t.Run("server not trusted by client", func(t *testing.T) {
		_, _, cerr := handshake(t, sc, load(settings(rogueFiles)).ClientConfig("127.0.0.1"))
		var uerr x509.UnknownAuthorityError
		if !errors.As(cerr, &uerr) {
			t.Fatalf("client accepted an untrusted server: %v", cerr)
		}
	})
	t.Run("hostname verification", func(t *testing.T) {
		if _, _, cerr := handshake(t, sc, client.ClientConfig("zk.example.com")); cerr == nil {
			t.Fatal("client accepted a certificate for another host")
		}
		s := settings(cliFiles)
		s.HostnameVerification = false
		if _, serr, cerr := handshake(t, sc, load(s).ClientConfig("zk.example.com")); serr != nil || cerr != nil {
			t.Fatalf("without hostname verification: server %v, client %v", serr, cerr)
		}
	})
}

func TestSettingsErrors(t *testing.T) {
	bad := []zktls.Settings{
		{Protocol: "SSLv3"},
		{Protocol: "TLSv1.3", EnabledProtocols: []string{"TLSv1.1", "TLSv1.3"}},
		{EnabledProtocols: []string{"TLSv9"}},
		{CipherSuites: []string{"TLS_NOPE"}},
		{Protocol: "TLSv1.2", CipherSuites: []string{"TLS_AES_128_GCM_SHA256"}},
		{ClientAuth: "maybe"},
		{KeyStoreLocation: "/nonexistent/x.pem"},
		{TrustStoreLocation: "x.crt"},
	}
	for _, s := range bad {
		if _, err := zktls.Load(s); err == nil {
			t.Errorf("Load(%+v) accepted", s)
		}
	}
	l, err := zktls.Load(zktls.Settings{Protocol: "TLSv1.2", CipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}})
	if err != nil {
		t.Fatal(err)
	}
	c := l.ClientConfig("h")
	if c.MinVersion != tls.VersionTLS12 || c.MaxVersion != tls.VersionTLS12 || len(c.CipherSuites) != 1 {
		t.Errorf("TLSv1.2 with one suite: min %x max %x suites %v", c.MinVersion, c.MaxVersion, c.CipherSuites)
	}
	l, err = zktls.Load(zktls.Default())
	if err != nil {
		t.Fatal(err)
	}
	if c := l.ClientConfig("h"); c.MinVersion != tls.VersionTLS12 || c.MaxVersion != tls.VersionTLS13 {
		t.Errorf("defaults: min %x max %x, want TLS 1.2-1.3", c.MinVersion, c.MaxVersion)
	}
	if _, err := l.ServerConfig(false); err == nil {
		t.Error("ServerConfig without a key store accepted")
	}
}

// TestQuorumClientHost: with client host verification (the quorum), the
// dialler's certificate must name its address, or a name the address
// resolves back to, as ZKTrustManager checks.
func TestQuorumClientHost(t *testing.T) {
	dir := t.TempDir()
	ca := zktlstest.NewCA(t, "ca")
	load := func(f zktlstest.Files) *zktls.Loaded {
		t.Helper()
		s := zktls.Default()
		s.KeyStoreLocation, s.KeyStorePassword = f.KeyStore, f.Password
		s.TrustStoreLocation, s.TrustStorePassword = f.TrustStore, f.Password
		l, err := zktls.Load(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	sc, err := load(ca.Issue(t, pkix.Name{CommonName: "member1"}).WritePKCS12(t, dir, "m1", ca)).ServerConfig(true)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := load(ca.IssueFor(t, pkix.Name{CommonName: "member2"}, []string{"zk2.invalid"}, []net.IP{net.IPv4(10, 9, 8, 7)}).WritePKCS12(t, dir, "m2", ca))
	if _, serr, _ := handshake(t, sc, elsewhere.ClientConfig("127.0.0.1")); serr == nil {
		t.Error("a member whose certificate names another host was accepted")
	}
	here := load(ca.Issue(t, pkix.Name{CommonName: "member3"}).WritePKCS12(t, dir, "m3", ca))
	if _, serr, cerr := handshake(t, sc, here.ClientConfig("127.0.0.1")); serr != nil || cerr != nil {
		t.Errorf("a member whose certificate names its address: server %v, client %v", serr, cerr)
	}
	names, _ := net.LookupAddr("127.0.0.1")
	for _, n := range names {
		if n := strings.TrimSuffix(n, "."); n != "" {
			byName := load(ca.IssueFor(t, pkix.Name{CommonName: "member4"}, []string{n}, nil).WritePKCS12(t, dir, "m4", ca))
			// The client checks the server by address; give it the name.
			if _, serr, cerr := handshake(t, sc, byName.ClientConfig("127.0.0.1")); serr != nil {
				t.Errorf("a member whose certificate names %s, what 127.0.0.1 resolves to: server %v (client %v)", n, serr, cerr)
			}
			break
		}
	}
}
