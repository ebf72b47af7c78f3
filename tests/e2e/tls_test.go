package e2e

import (
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/zktls/zktlstest"
	"github.com/corral-db/corral/tests/harness"
)

// tlsEnv is a server with a TLS client port (secureClientPort, the ssl.*
// keys, ssl.clientAuth=need by default) and the certificates of its
// clients, all made by the test: alice and bob are signed by the
// server's CA, admin is X509AuthenticationProvider.superUser, and the
// "other" CA signed nobody the server trusts.
type tlsEnv struct {
	dir        string
	ca, other  *zktlstest.CA
	srv        *harness.Server
	secureAddr string
}

const tlsOrg = "corral tests"

func startTLSServer(t *testing.T) *tlsEnv {
	t.Helper()
	dir := t.TempDir()
	e := &tlsEnv{dir: dir, ca: zktlstest.NewCA(t, "clients and server"), other: zktlstest.NewCA(t, "other")}
	srvFiles := e.ca.Issue(t, pkix.Name{CommonName: "server", Organization: []string{tlsOrg}}).WritePKCS12(t, dir, "server", e.ca)
	port := harness.FreePort(t)
	e.secureAddr = fmt.Sprintf("127.0.0.1:%d", port)
	e.srv = env.StartWith(t, harness.Config{Extra: []string{
		// ZooKeeper serves TLS only with its Netty connection factory;
		// corral warns that the key is JVM-only.
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		fmt.Sprintf("secureClientPort=%d", port),
		"secureClientPortAddress=127.0.0.1",
		"ssl.keyStore.location=" + srvFiles.KeyStore,
		"ssl.keyStore.password=" + srvFiles.Password,
		"ssl.trustStore.location=" + srvFiles.TrustStore,
		"ssl.trustStore.password=" + srvFiles.Password,
		"authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
		"X509AuthenticationProvider.superUser=CN=admin,O=" + tlsOrg,
	}})
	return e
}

func (e *tlsEnv) leaf(t *testing.T, ca *zktlstest.CA, cn string) *zktlstest.Leaf {
	return ca.Issue(t, pkix.Name{CommonName: cn, Organization: []string{tlsOrg}})
}

// TestTLSJavaClient: ZooKeeper's Java client (Netty socket,
// zookeeper.client.secure=true) connects to the TLS port with a client
// certificate, is x509:CN=alice,O=corral tests there, and creates a node
// whose ACL is the x509 id the JDK derives from its own certificate: it
// reads it back, bob cannot, the x509 super user can; a client that does
// not trust the server's CA does not connect.
func TestTLSJavaClient(t *testing.T) {
	t.Parallel()
	j := env.JavaClient(t)
	classes := j.Compile(t, env.Root, "TLSClient")
	e := startTLSServer(t)
	// wait bounds the wait for a connection: generous where one must
	// come (a JVM's TLS start is slow on a busy machine), short where
	// none may.
	run := func(name string, files zktlstest.Files, wait string) (string, int) {
		t.Helper()
		cmd := exec.Command(j.Java, "-Xmx256m",
			"-Dlogback.configurationFile="+filepath.Join(classes, "logback-quiet.xml"),
			"-Dzookeeper.client.secure=true",
			"-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
			"-Dzookeeper.ssl.keyStore.location="+files.KeyStore,
			"-Dzookeeper.ssl.keyStore.password="+files.Password,
			"-Dzookeeper.ssl.trustStore.location="+files.TrustStore,
			"-Dzookeeper.ssl.trustStore.password="+files.Password,
			"-cp", classes+string(os.PathListSeparator)+j.Classpath,
			"TLSClient", e.secureAddr, "/java-x509", wait)
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		t.Logf("%s: %v\n%s", name, err, out)
		return string(out), code
	}
	alice, code := run("alice", e.leaf(t, e.ca, "alice").WritePKCS12(t, e.dir, "alice", e.ca), "30")
	for _, want := range []string{"connected\n", "whoami x509 CN=alice,O=" + tlsOrg + "\nwhoami ip 127.0.0.1\n",
		"subject CN=alice,O=" + tlsOrg + "\n", "read java\n"} {
		if code != 0 || !strings.Contains(alice, want) {
			t.Errorf("alice (exit %d): no %q", code, want)
		}
	}
	// The others at once: each is a JVM start.
	bob := e.leaf(t, e.ca, "bob").WritePKCS12(t, e.dir, "bob", e.ca)
	admin := e.leaf(t, e.ca, "admin").WritePKCS12(t, e.dir, "admin", e.ca)
	// mallory trusts another CA: the server's certificate is refused.
	mallory := e.leaf(t, e.other, "mallory").WritePKCS12(t, e.dir, "mallory", e.other)
	type result struct {
		out  string
		code int
	}
	var wg sync.WaitGroup
	res := make([]result, 3)
	for i, f := range []zktlstest.Files{bob, admin, mallory} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, code := run([]string{"bob", "admin", "untrusting"}[i], f, []string{"30", "30", "5"}[i])
			res[i] = result{out, code}
		}()
	}
	wg.Wait()
	if r := res[0]; r.code != 0 || !strings.Contains(r.out, "read error NOAUTH") {
		t.Errorf("bob (exit %d) read alice's node or failed otherwise", r.code)
	}
	if r := res[1]; r.code != 0 || !strings.Contains(r.out, "whoami super \nwhoami x509 CN=admin,O="+tlsOrg+"\n") ||
		!strings.Contains(r.out, "read java\n") {
		t.Errorf("the x509 super user (exit %d) could not read alice's node", r.code)
	}
	if r := res[2]; r.code != 3 || strings.Contains(r.out, "\nconnected") {
		t.Errorf("a client that does not trust the server's CA connected (exit %d)", r.code)
	}
}

// python is the project's virtualenv interpreter, with kazoo.
func python(t *testing.T) string {
	t.Helper()
	p := filepath.Join(env.Root, ".venv", "bin", "python")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" && os.Getenv("CI") != "false" && os.Getenv("CI") != "0" {
			t.Fatalf("kazoo unavailable (CI is set, so this fails): %v (run scripts/python-venv.sh)", err)
		}
		t.Skipf("kazoo unavailable: %v (run scripts/python-venv.sh)", err)
	}
	return p
}

// TestTLSKazoo: kazoo with use_ssl=True and PEM files connects with a
// client certificate and is held to x509 ACLs; without a client
// certificate (ssl.clientAuth=need) or without trusting the server's CA
// it does not connect.
func TestTLSKazoo(t *testing.T) {
	t.Parallel()
	py := python(t)
	e := startTLSServer(t)
	script := filepath.Join(env.Root, "tests", "python", "tls_client.py")
	// wait bounds the wait for a connection: generous where one must
	// come, short where none may.
	run := func(name, ca, cert, key, wait string) (string, int) {
		out, err := exec.Command(py, script, e.secureAddr, ca, cert, key, "/kazoo-x509", "CN=alice,O="+tlsOrg, wait).CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		t.Logf("%s: %v\n%s", name, err, out)
		return string(out), code
	}
	aliceF, aliceCert, aliceKey := e.leaf(t, e.ca, "alice").WritePEM(t, e.dir, "alice", e.ca)
	caPEM := aliceF.TrustStore
	if out, code := run("alice", caPEM, aliceCert, aliceKey, "20"); code != 0 || !strings.Contains(out, "read kazoo\n") {
		t.Errorf("alice (exit %d) could not create and read her node", code)
	}
	_, bobCert, bobKey := e.leaf(t, e.ca, "bob").WritePEM(t, e.dir, "bob", e.ca)
	if out, code := run("bob", caPEM, bobCert, bobKey, "20"); code != 0 || !strings.Contains(out, "read error NOAUTH\n") {
		t.Errorf("bob (exit %d) read alice's node or failed otherwise", code)
	}
	// The refusals at once: each waits for kazoo's connection timeout.
	otherF, _, _ := e.leaf(t, e.other, "x").WritePEM(t, e.dir, "other", e.other)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	outs := make([]string, 2)
	for i, args := range [][3]string{{caPEM, "-", "-"}, {otherF.TrustStore, aliceCert, aliceKey}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], codes[i] = run([]string{"no certificate", "untrusting"}[i], args[0], args[1], args[2], "3")
		}()
	}
	wg.Wait()
	if codes[0] != 3 || strings.Contains(outs[0], "\nconnected") {
		t.Errorf("a client without a certificate connected under ssl.clientAuth=need (exit %d)", codes[0])
	}
	if codes[1] != 3 {
		t.Errorf("a client that does not trust the server's CA connected (exit %d)", codes[1])
	}
}

// TestTLSCLI: corral cli with -tls and a client certificate creates and
// reads a node only its certificate may read, over the TLS port; another
// certificate may not.
func TestTLSCLI(t *testing.T) {
	t.Parallel()
	bin := env.CorralBin()
	if bin == "" {
		t.Skip("corral cli is corral's; the target is ZooKeeper")
	}
	e := startTLSServer(t)
	// zkCli's ACL syntax splits on commas, so this subject has none.
	carol := e.ca.Issue(t, pkix.Name{CommonName: "carol"}).WritePKCS12(t, e.dir, "carol", e.ca)
	cli := func(files zktlstest.Files, args ...string) (string, error) {
		argv := append([]string{"cli", "-server", e.secureAddr, "-timeout", "10000", "-tls",
			"-tls-keystore", files.KeyStore, "-tls-keystore-password", files.Password,
			"-tls-truststore", files.TrustStore, "-tls-truststore-password", files.Password}, args...)
		out, err := exec.Command(bin, argv...).CombinedOutput()
		return string(out), err
	}
	if out, err := cli(carol, "create", "/cli-x509", "hello", "x509:CN=carol:cdrwa"); err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	if out, err := cli(carol, "get", "/cli-x509"); err != nil || out != "hello\n" {
		t.Errorf("carol get: %q, %v", out, err)
	}
	bob := e.leaf(t, e.ca, "bob").WritePKCS12(t, e.dir, "bob", e.ca)
	if out, err := cli(bob, "get", "/cli-x509"); err == nil || !strings.Contains(out, "Insufficient permission") {
		t.Errorf("bob get: %q, %v; want NoAuth", out, err)
	}
}

// TestTLSConfigErrorsStopStartup: a TLS setting corral cannot honour
// stops corral at start-up with a message naming it, never a server that
// quietly serves plaintext.
func TestTLSConfigErrorsStopStartup(t *testing.T) {
	t.Parallel()
	bin := env.CorralBin()
	if bin == "" {
		t.Skip("corral's start-up; the target is ZooKeeper")
	}
	dir := t.TempDir()
	ca := zktlstest.NewCA(t, "ca")
	good := ca.Issue(t, pkix.Name{CommonName: "server"}).WritePKCS12(t, dir, "server", ca)
	for _, c := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"missing key store", []string{"ssl.keyStore.location=" + filepath.Join(dir, "nope.p12")}, "nope.p12"},
		{"wrong password", []string{"ssl.keyStore.location=" + good.KeyStore, "ssl.keyStore.password=wrong"}, "key store"},
		{"no key store", nil, "ssl.keyStore.location"},
		{"revocation", []string{"ssl.keyStore.location=" + good.KeyStore, "ssl.keyStore.password=" + good.Password, "ssl.crl=true"}, "ssl.crl"},
		{"quorum without stores", []string{"ssl.keyStore.location=" + good.KeyStore, "ssl.keyStore.password=" + good.Password, "sslQuorum=true"}, "ssl.quorum.keyStore.location"},
	} {
		cfg := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".cfg")
		z := config.Default()
		z.DataDir = filepath.Join(dir, "data-"+strings.ReplaceAll(c.name, " ", "-"))
		z.ClientPort, z.SecureClientPort = harness.FreePort(t), harness.FreePort(t)
		if err := os.WriteFile(cfg, []byte(harness.ZooCfg(z, c.lines...)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "server", cfg).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: %v, output %q; want a failure naming %s", c.name, err, out, c.want)
		}
	}
}
