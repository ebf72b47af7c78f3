package transport

import (
	"crypto/x509/pkix"
	"fmt"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"

	"github.com/corral-db/corral/internal/zktls"
	"github.com/corral-db/corral/internal/zktls/zktlstest"
	"github.com/corral-db/corral/zab"
)

// quorumTLS loads a member's ssl.quorum.* stores as the server would.
func quorumTLS(t *testing.T, f zktlstest.Files) *TLS {
	t.Helper()
	s := zktls.Default()
	s.KeyStoreLocation, s.KeyStorePassword = f.KeyStore, f.Password
	s.TrustStoreLocation, s.TrustStorePassword = f.TrustStore, f.Password
	l, err := zktls.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := l.ServerConfig(true)
	if err != nil {
		t.Fatal(err)
	}
	return &TLS{Server: sc, Client: l.ClientConfig}
}

// TestTCPQuorumTLS: members 1 and 2 hold certificates of the ensemble's
// CA and talk over TLS; member 3's certificate comes from another CA
// (though it trusts the ensemble's), so both refuse it, whichever side
// dials.
func TestTCPQuorumTLS(t *testing.T) {
	checkGoroutines(t)
	dir := t.TempDir()
	ca := zktlstest.NewCA(t, "ensemble")
	other := zktlstest.NewCA(t, "intruder")
	conf := map[uint64]*TLS{}
	for _, id := range []uint64{1, 2} {
		leaf := ca.Issue(t, pkix.Name{CommonName: fmt.Sprintf("member%d", id)})
		conf[id] = quorumTLS(t, leaf.WritePKCS12(t, dir, fmt.Sprint("m", id), ca))
	}
	// Member 3: a key store of the other CA, a trust store of ours.
	bad := other.Issue(t, pkix.Name{CommonName: "member3"}).WritePKCS12(t, dir, "m3", other)
	bad.TrustStore = ca.Issue(t, pkix.Name{CommonName: "x"}).WritePKCS12(t, dir, "m3trust", ca).TrustStore
	conf[3] = quorumTLS(t, bad)

	ids := []uint64{1, 2, 3}
	var c *tcpCluster
	c = newTCPCluster(t, ids, nil)
	c.tweak = func(cfg *TCPConfig) { cfg.TLS = conf[cfg.ID] }
	for _, id := range ids {
		c.start(id)
	}
	c.waitConnected(1, 2)
	c.trs[2].Send([]zab.Message{seqMsg(zab.MsgProposal, 2, 1, 1)})
	c.trs[1].Send([]zab.Message{seqMsg(zab.MsgVote, 1, 2, 1)})
	checkSeq(t, recvN(t, c.trs[1].Recv(), 1), 1)
	checkSeq(t, recvN(t, c.trs[2].Recv(), 1), 1)

	// Member 3 dials 1 and 2 (it has the higher id); both refuse it.
	testutil.Eventually(t, waitLimit, "member 3 refused", func() bool {
		return c.logs.contains("incoming connection refused", "TLS")
	})
	// Refused, it stays out: watch a while for a connection that must not come.
	joined := func() bool {
		for _, peer := range []uint64{1, 2} {
			a, _ := c.trs[3].Stats().Peer(peer)
			b, _ := c.trs[peer].Stats().Peer(3)
			if a.Connected || b.Connected {
				return true
			}
		}
		return false
	}
	if testutil.Within(500*time.Millisecond, joined) {
		t.Fatal("member 3 connected to a member that refuses it")
	}
}

// TestTCPQuorumTLSPlaintextPeerRefused: a member without sslQuorum cannot
// join members that have it.
func TestTCPQuorumTLSPlaintextPeerRefused(t *testing.T) {
	checkGoroutines(t)
	dir := t.TempDir()
	ca := zktlstest.NewCA(t, "ensemble")
	tlsConf := quorumTLS(t, ca.Issue(t, pkix.Name{CommonName: "member1"}).WritePKCS12(t, dir, "m1", ca))
	c := newTCPCluster(t, []uint64{1, 2}, func(cfg *TCPConfig) {
		if cfg.ID == 1 {
			cfg.TLS = tlsConf
		}
	})
	c.start(1)
	c.start(2)
	testutil.Eventually(t, waitLimit, "plaintext member refused", func() bool {
		return c.logs.contains("incoming connection refused", "TLS")
	})
	if ps, _ := c.trs[1].Stats().Peer(2); ps.Connected {
		t.Fatal("member 1 (sslQuorum) accepted a plaintext member")
	}
}
