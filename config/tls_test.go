package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTLSKeys(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := base + `secureClientPort=2281
secureClientPortAddress=[::1]
client.portUnification=true
zookeeper.ssl.keyStore.location=/etc/zk/server.p12
ssl.keyStore.password=secret
ssl.keyStore.type=pkcs12
ssl.trustStore.location=/etc/zk/ca.pem
ssl.trustStore.passwordPath=` + pwFile + `
ssl.trustStore.password=overridden
ssl.protocol=TLSv1.2
ssl.enabledProtocols=TLSv1.2, TLSv1.3
ssl.ciphersuites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256
ssl.clientAuth=want
ssl.hostnameVerification=false
ssl.handshakeDetectionTimeoutMillis=1000
ssl.crl=false
sslQuorum=true
ssl.quorum.keyStore.location=/etc/zk/member.jks
ssl.quorum.trustStore.location=/etc/zk/members.jks
X509AuthenticationProvider.superUser=CN=admin,O=corral
authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider
ssl.authProvider=x509
`
	c, warnings := mustParse(t, in)
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	if c.SecureClientPort != 2281 || c.SecureClientPortAddress != "::1" || !c.PortUnification || !c.SSLQuorum ||
		c.X509SuperUser != "CN=admin,O=corral" {
		t.Errorf("top-level TLS keys: %+v", c)
	}
	if got := c.SecureClientListenAddr(); got != "[::1]:2281" {
		t.Errorf("SecureClientListenAddr = %q", got)
	}
	s := c.SSL
	if s.KeyStoreLocation != "/etc/zk/server.p12" || s.KeyStorePassword != "secret" || s.KeyStoreType != "pkcs12" ||
		s.TrustStoreLocation != "/etc/zk/ca.pem" || s.TrustStorePassword != "from-file" || s.Protocol != "TLSv1.2" ||
		!reflect.DeepEqual(s.EnabledProtocols, []string{"TLSv1.2", "TLSv1.3"}) || len(s.CipherSuites) != 2 ||
		s.ClientAuth != "want" || s.HostnameVerification || s.HandshakeDetectionTimeoutMs != 1000 {
		t.Errorf("ssl.*: %+v", s)
	}
	q := c.QuorumSSL
	if q.KeyStoreLocation != "/etc/zk/member.jks" || q.TrustStoreLocation != "/etc/zk/members.jks" || !q.HostnameVerification {
		t.Errorf("ssl.quorum.*: %+v", q)
	}

	// Written and read back, the configuration is the same.
	var buf bytes.Buffer
	if err := c.WriteZooCfg(&buf); err != nil {
		t.Fatal(err)
	}
	c2, _ := mustParse(t, buf.String())
	if !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip:\n%+v\n%+v\n%s", c, c2, buf.String())
	}
}

func TestTLSKeyErrors(t *testing.T) {
	cases := []struct{ in, key string }{
		{"ssl.clientAuth=sometimes\n", "ssl.clientAuth"},
		{"ssl.protocol=SSLv3\n", "ssl.protocol"},
		{"ssl.enabledProtocols=TLSv1,TLSv1.3\n", "ssl.enabledProtocols"},
		{"ssl.ciphersuites=TLS_FOO\n", "ssl.ciphersuites"},
		{"ssl.keyStore.type=BCFKS\n", "ssl.keyStore.type"},
		{"ssl.quorum.trustStore.type=PKCS11\n", "ssl.quorum.trustStore.type"},
		{"ssl.hostnameVerification=yes\n", "ssl.hostnameVerification"},
		{"ssl.crl=true\n", "ssl.crl"},
		{"ssl.quorum.ocsp=true\n", "ssl.quorum.ocsp"},
		{"ssl.context.supplier.class=com.example.Ctx\n", "ssl.context.supplier.class"},
		{"ssl.authProvider=myx509\n", "ssl.authProvider"},
		{"ssl.keyStore.passwordPath=/nonexistent/pw\n", "ssl.keyStore.passwordPath"},
		{"secureClientPort=2281\n", "ssl.keyStore.location"},
		{"secureClientPortAddress=127.0.0.1\n", "secureClientPortAddress"},
		{"client.portUnification=true\n", "ssl.keyStore.location"},
		{"sslQuorum=true\nssl.quorum.trustStore.location=/x.pem\n", "ssl.quorum.keyStore.location"},
		{"sslQuorum=true\nssl.quorum.keyStore.location=/x.pem\n", "ssl.quorum.trustStore.location"},
		{"secureClientPort=2181\nssl.keyStore.location=/x.pem\n", "secureClientPort"},
	}
	for _, tc := range cases {
		_, _, err := Parse(strings.NewReader(base+tc.in), nil)
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != tc.key || !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want a KeyError for %s", tc.in, err, tc.key)
		}
	}
}

func TestSecureClientPortAlone(t *testing.T) {
	c, _ := mustParse(t, "dataDir=/var/zk\nsecureClientPort=2281\nssl.keyStore.location=/k.pem\n")
	if c.ClientListenAddr() != "" || c.SecureClientListenAddr() != "127.0.0.1:2281" {
		t.Errorf("listen addresses %q, %q", c.ClientListenAddr(), c.SecureClientListenAddr())
	}
}

func TestParseClientConfig(t *testing.T) {
	in := `zookeeper.client.secure=true
zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty
zookeeper.ssl.keyStore.location=/c.p12
zookeeper.ssl.keyStore.password=pw
ssl.trustStore.location=/ca.pem
zookeeper.ssl.hostnameVerification=false
`
	cc, warnings, err := ParseClientConfig(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cc.Secure || cc.SSL.KeyStoreLocation != "/c.p12" || cc.SSL.KeyStorePassword != "pw" ||
		cc.SSL.TrustStoreLocation != "/ca.pem" || cc.SSL.HostnameVerification {
		t.Errorf("client config: %+v", cc)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "clientCnxnSocket") {
		t.Errorf("warnings %q", warnings)
	}
	if _, _, err := ParseClientConfig(strings.NewReader("zookeeper.ssl.clientAuth=x\n"), nil); err == nil {
		t.Error("bad ssl key accepted")
	}
}
