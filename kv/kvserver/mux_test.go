package kvserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/zab"
)

// TestMuxRoutesByGroup: two nodes' transports carry two RGs; a message
// reaches the queue of its RG untagged, one for an RG the node does not
// host is dropped and counted.
func TestMuxRoutesByGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	peers := map[uint64]transport.Peer{}
	ls := map[uint64][2]net.Listener{}
	for id := uint64(1); id <= 2; id++ {
		q, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		e, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls[id] = [2]net.Listener{q, e}
		peers[id] = transport.Peer{QuorumAddr: q.Addr().String(), ElectionAddr: e.Addr().String()}
	}
	type node struct {
		mx    *mux
		send  map[uint64]func([]zab.Message)
		queue map[uint64]<-chan zab.Message
	}
	nodes := map[uint64]*node{}
	for id := uint64(1); id <= 2; id++ {
		tr, err := transport.NewTCP(ctx, transport.TCPConfig{ID: id, Peers: peers, QuorumListener: ls[id][0], ElectionListener: ls[id][1]})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		n := &node{mx: newMux(tr, slog.New(slog.DiscardHandler)), send: map[uint64]func([]zab.Message){}, queue: map[uint64]<-chan zab.Message{}}
		for g := uint64(1); g <= 2; g++ {
			n.send[g], n.queue[g] = n.mx.link(g)
		}
		go n.mx.run(ctx)
		nodes[id] = n
	}
	// Node 1 has the lower id: it waits for node 2 to dial, so node 2
	// sends first and resends until the connection is up.
	recv := func(g uint64, want uint64) zab.Message {
		t.Helper()
		var m zab.Message
		testutil.Eventually(t, 20*time.Second, fmt.Sprintf("rg%d receives node 2's message", g), func() bool {
			nodes[2].send[g]([]zab.Message{{Type: zab.MsgPing, From: 2, To: 1, Zxid: zab.Zxid(want)}})
			select {
			case m = <-nodes[1].queue[g]:
				return true
			case <-time.After(50 * time.Millisecond):
				return false
			}
		})
		return m
	}
	m := recv(2, 22)
	if m.Group != 0 || m.Zxid != 22 || m.From != 2 {
		t.Fatalf("rg2 received %v (group %d)", m, m.Group)
	}
	select {
	case m := <-nodes[1].queue[1]:
		t.Fatalf("rg1 received rg2's message %v", m)
	default:
	}
	m = recv(1, 11)
	if m.Zxid != 11 {
		t.Fatalf("rg1 received %v", m)
	}
	// A message for rg3, which node 1 does not host, is dropped.
	nodes[2].mx.tr.Send([]zab.Message{{Type: zab.MsgPing, From: 2, To: 1, Group: 3}})
	testutil.Eventually(t, 20*time.Second, "a message for an RG not hosted is dropped", func() bool {
		return nodes[1].mx.dropped.Load() > 0
	})
}
