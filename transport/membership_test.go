package transport

import (
	"maps"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"

	"github.com/corral-db/corral/zab"
)

// TestTCPMembershipChange: servers 1 and 2 know each other; 3 knows all
// three (a joiner) and, with AcceptUnknown, 1 and 2 accept it. SetPeers
// then names it on 1 and 2, and later removes 2 from 1 and 3: their
// connections to 2 close and messages to 2 are dropped as unknown.
func TestTCPMembershipChange(t *testing.T) {
	checkGoroutines(t)
	c := newTCPCluster(t, []uint64{1, 2, 3}, func(cfg *TCPConfig) { cfg.AcceptUnknown = true })
	all := maps.Clone(c.peers)
	two := map[uint64]Peer{1: all[1], 2: all[2]}
	c.peers = two
	tr1, tr2 := c.start(1), c.start(2)
	c.peers = all
	tr3 := c.start(3)
	c.waitConnected(1, 2, 3)
	tr3.Send([]zab.Message{{Type: zab.MsgProposal, From: 3, To: 1, Epoch: 1, Zxid: 1}})
	recvProposals(t, tr1.Recv(), 3, 1)

	// Without AcceptUnknown, a server outside Peers is refused.
	c2 := newTCPCluster(t, []uint64{1, 2}, nil)
	only := map[uint64]Peer{1: c2.peers[1]}
	all2 := c2.peers
	c2.peers = only
	a := c2.start(1)
	c2.peers = all2
	c2.start(2)
	testutil.Eventually(t, waitLimit, "refusal logged", func() bool { return c2.logs.contains("unknown server id") })
	if ps, _ := a.Stats().Peer(2); ps.Connected {
		t.Fatal("server 1 connected to a server it does not know")
	}

	for _, tr := range []*TCP{tr1, tr2} {
		if err := tr.SetPeers(all); err != nil {
			t.Fatal(err)
		}
	}
	c.waitConnected(1, 2, 3)
	without2 := map[uint64]Peer{1: all[1], 3: all[3]}
	for _, tr := range []*TCP{tr1, tr3} {
		if err := tr.SetPeers(without2); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, waitLimit, "2 disconnected", func() bool {
		_, known := tr1.Stats().Peer(2)
		return !known
	})
	before := tr1.Stats().DroppedUnknown
	tr1.Send([]zab.Message{{Type: zab.MsgProposal, From: 1, To: 2, Epoch: 1, Zxid: 1}})
	if tr1.Stats().DroppedUnknown != before+1 {
		t.Fatal("a message to a removed peer was not dropped as unknown")
	}
	tr1.Send([]zab.Message{{Type: zab.MsgProposal, From: 1, To: 3, Epoch: 1, Zxid: 1}})
	recvProposals(t, tr3.Recv(), 1, 1)
	if err := tr1.SetPeers(map[uint64]Peer{3: {}}); err == nil {
		t.Fatal("SetPeers accepted a peer without an address")
	}
}

// TestTCPLowerIDJoiner: a joiner whose id is below the members' reaches
// them by dialing (AcceptUnknown's reverse dial): 2 and 3 know only each
// other, 1 knows all three.
func TestTCPLowerIDJoiner(t *testing.T) {
	checkGoroutines(t)
	c := newTCPCluster(t, []uint64{1, 2, 3}, func(cfg *TCPConfig) { cfg.AcceptUnknown = true })
	all := maps.Clone(c.peers)
	c.peers = map[uint64]Peer{2: all[2], 3: all[3]}
	tr2, tr3 := c.start(2), c.start(3)
	c.peers = all
	tr1 := c.start(1)
	c.waitConnected(1, 2, 3)
	sendUntilReceived(t, tr1, 1, 3, tr3.Recv())
	sendUntilReceived(t, tr2, 2, 1, tr1.Recv())
	// Once 2 and 3 know it, they dial it (the higher id dials) and
	// replace the connections 1 opened. A message queued on a connection
	// being replaced is lost, as on a broken TCP connection, so the
	// proposal is sent until one arrives.
	for _, tr := range []*TCP{tr2, tr3} {
		if err := tr.SetPeers(all); err != nil {
			t.Fatal(err)
		}
	}
	c.waitConnected(1, 2, 3)
	sendUntilReceived(t, tr3, 3, 1, tr1.Recv())
	sendUntilReceived(t, tr2, 2, 1, tr1.Recv())
}

// sendUntilReceived sends a proposal from one transport to a peer every
// 100 ms until recv (the peer's) delivers one from it. While connections
// are being replaced the transport may drop what it queued on the old one
// (zab reconnects and resends); what is checked is that messages flow.
func sendUntilReceived(t *testing.T, tr *TCP, from, to uint64, recv <-chan zab.Message) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		tr.Send([]zab.Message{{Type: zab.MsgProposal, From: from, To: to, Epoch: 1, Zxid: 1}})
		for wait := true; wait; {
			select {
			case m := <-recv:
				if m.From == from && m.Type == zab.MsgProposal {
					return
				}
			case <-tick.C:
				wait = false
			case <-timeout:
				t.Fatalf("no proposal from %d reached %d", from, to)
			}
		}
	}
}
