package ensemble

import (
	"crypto/x509/pkix"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/internal/zktls/zktlstest"
)

// TestQuorumTLS: three members with sslQuorum=true and certificates of
// the ensemble's CA (made by the test) form a quorum and replicate. A
// member restarted with a certificate of another CA is refused by the
// others: it never serves and misses the writes made meanwhile; given
// its own certificate back, it joins and catches up.
func TestQuorumTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := zktlstest.NewCA(t, "ensemble")
	good := ca.Issue(t, pkix.Name{CommonName: "member"}).WritePKCS12(t, dir, "member", ca)
	other := zktlstest.NewCA(t, "intruder")
	bad := other.Issue(t, pkix.Name{CommonName: "member"}).WritePKCS12(t, dir, "intruder", other)

	cfg := ensembleConfig()
	cfg.Server.Extra = []string{
		"sslQuorum=true",
		"ssl.quorum.keyStore.location=" + good.KeyStore,
		"ssl.quorum.keyStore.password=" + good.Password,
		"ssl.quorum.trustStore.location=" + good.TrustStore,
		"ssl.quorum.trustStore.password=" + good.Password,
	}
	en := env.StartEnsemble(t, 3, cfg)
	c := connectOne(t, en, 0)
	if _, err := c.Create("/before", []byte("1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	// Member 3 comes back with the intruder's key store.
	s := en.Server(2)
	s.Stop()
	swapKeyStore(t, s.CfgPath, good.KeyStore, bad.KeyStore)
	en.Launch(2)
	if _, err := c.Create("/while-refused", []byte("2"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if !env.IsZooKeeper() {
		// The members say why; ZooKeeper logs its own exceptions.
		testutil.Eventually(t, 30*time.Second, "members 1 and 2 refusing member 3", func() bool {
			return logHas(t, en.Server(0).LogPath, "incoming connection refused", "TLS") &&
				logHas(t, en.Server(1).LogPath, "incoming connection refused", "TLS")
		})
	}
	// However long we look, member 3 does not serve.
	var m string
	if testutil.Within(3*time.Second, func() bool { m = en.Mode(2); return m != "" }) {
		t.Fatalf("member 3 with an untrusted certificate serves as %s", m)
	}

	// Its own certificate back: it joins and has every write.
	s.Stop()
	swapKeyStore(t, s.CfgPath, bad.KeyStore, good.KeyStore)
	s.StartAgain()
	en.WaitAll()
	c3 := connectOne(t, en, 2)
	for _, p := range []string{"/before", "/while-refused"} {
		if _, _, err := c3.Get(p); err != nil {
			t.Errorf("member 3 after rejoining: get %s: %v", p, err)
		}
	}
}

func swapKeyStore(t *testing.T, cfgPath, from, to string) {
	t.Helper()
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	key := "ssl.quorum.keyStore.location="
	s := strings.Replace(string(b), key+from+"\n", key+to+"\n", 1)
	if s == string(b) {
		t.Fatalf("%s has no %s%s line", cfgPath, key, from)
	}
	if err := os.WriteFile(cfgPath, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// logHas reports whether one line of the log at path has every sub.
func logHas(t *testing.T, path string, subs ...string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
lines:
	for _, line := range strings.Split(string(b), "\n") {
		for _, s := range subs {
			if !strings.Contains(line, s) {
				continue lines
			}
		}
		return true
	}
	return false
}
