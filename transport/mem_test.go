package transport

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/corral-db/corral/zab"
)

func joinAll(t *testing.T, nw *Network, ids ...uint64) map[uint64]*Endpoint {
	t.Helper()
	eps := map[uint64]*Endpoint{}
	for _, id := range ids {
		ep, err := nw.Join(id)
		if err != nil {
			t.Fatal(err)
		}
		eps[id] = ep
	}
	return eps
}

func sendSeq(ep Transport, typ zab.MsgType, from, to uint64, first, n uint64) {
	for s := first; s < first+n; s++ {
		ep.Send([]zab.Message{seqMsg(typ, from, to, s)})
	}
}

func peerStats(t *testing.T, tr Transport, id uint64) PeerStats {
	t.Helper()
	ps, ok := tr.Stats().Peer(id)
	if !ok {
		t.Fatalf("no stats for peer %d", id)
	}
	return ps
}

func TestNetworkFIFOPartitionIsolateHeal(t *testing.T) {
	checkGoroutines(t)
	nw := NewNetwork(NetworkConfig{})
	defer nw.Close()
	eps := joinAll(t, nw, 1, 2, 3)

	sendSeq(eps[1], zab.MsgProposal, 1, 2, 1, 100)
	// Without delays delivery happens inside Send.
	if n := len(eps[2].Recv()); n != 100 {
		t.Fatalf("%d messages queued, want 100", n)
	}
	checkSeq(t, recvN(t, eps[2].Recv(), 100), 1)

	nw.Partition(1, 2)
	sendSeq(eps[1], zab.MsgPing, 1, 2, 1, 10)
	sendSeq(eps[2], zab.MsgAck, 2, 1, 1, 10)
	sendSeq(eps[1], zab.MsgPing, 1, 3, 1, 10)
	if len(eps[2].Recv()) != 0 || len(eps[1].Recv()) != 0 {
		t.Fatal("a message crossed the partition")
	}
	checkSeq(t, recvN(t, eps[3].Recv(), 10), 1)
	if ps := peerStats(t, eps[1], 2); ps.DroppedDown != 10 || ps.Connected {
		t.Fatalf("1's stats for 2 across a partition: %+v", ps)
	}

	nw.Heal()
	nw.Isolate(3)
	sendSeq(eps[1], zab.MsgPing, 1, 2, 11, 5)
	sendSeq(eps[1], zab.MsgPing, 1, 3, 11, 5)
	sendSeq(eps[3], zab.MsgAck, 3, 2, 1, 5)
	checkSeq(t, recvN(t, eps[2].Recv(), 5), 11)
	if len(eps[3].Recv()) != 0 || len(eps[2].Recv()) != 0 {
		t.Fatal("a message reached or left an isolated server")
	}
	nw.Heal()
	sendSeq(eps[3], zab.MsgAck, 3, 2, 6, 5)
	checkSeq(t, recvN(t, eps[2].Recv(), 5), 6)

	// Unknown recipients: itself and id 0 are not peers; a server that
	// never joined is down; a message must come from its sender.
	eps[1].Send([]zab.Message{{Type: zab.MsgPing, From: 1, To: 1}, {Type: zab.MsgPing, From: 1, To: 0}, {Type: zab.MsgPing, From: 1, To: 9}, {Type: zab.MsgPing, From: 2, To: 3}})
	st := eps[1].Stats()
	if st.DroppedUnknown != 3 {
		t.Fatalf("DroppedUnknown %d, want 3", st.DroppedUnknown)
	}
	if len(eps[3].Recv()) != 0 {
		t.Fatal("a message with a forged sender was delivered")
	}
	if ps, _ := st.Peer(9); ps.DroppedDown != 1 || ps.Connected {
		t.Fatalf("stats for a server that never joined: %+v", ps)
	}
}

// TestNetworkDropsAreDeterministic: the same seed and the same sends drop
// the same messages.
func TestNetworkDropsAreDeterministic(t *testing.T) {
	run := func() []uint64 {
		nw := NewNetwork(NetworkConfig{Rand: rand.New(rand.NewPCG(42, 0))})
		defer nw.Close()
		eps := joinAll(t, nw, 1, 2)
		nw.SetDrop(Any, Any, 0.5)
		sendSeq(eps[1], zab.MsgPing, 1, 2, 1, 1000)
		var got []uint64
		for len(eps[2].Recv()) > 0 {
			got = append(got, uint64((<-eps[2].Recv()).Zxid))
		}
		ps := peerStats(t, eps[1], 2)
		if ps.Sent+ps.DroppedDown != 1000 || ps.Sent != uint64(len(got)) {
			t.Fatalf("stats %+v for %d received", ps, len(got))
		}
		return got
	}
	a, b := run(), run()
	if len(a) < 300 || len(a) > 700 {
		t.Fatalf("%d of 1000 delivered at a drop rate of 0.5", len(a))
	}
	if len(a) != len(b) {
		t.Fatalf("runs delivered %d and %d messages", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("runs differ at %d: %d vs %d", i, a[i], b[i])
		}
	}
	// In order despite the drops.
	for i := 1; i < len(a); i++ {
		if a[i] <= a[i-1] {
			t.Fatalf("out of order: %d after %d", a[i], a[i-1])
		}
	}
}

func TestNetworkDelayKeepsOrder(t *testing.T) {
	checkGoroutines(t)
	nw := NewNetwork(NetworkConfig{})
	defer nw.Close()
	eps := joinAll(t, nw, 1, 2)
	nw.SetDelay(1, 2, 30*time.Millisecond)
	sendSeq(eps[1], zab.MsgPing, 1, 2, 1, 50)
	// The delay is lifted while messages are in flight: later messages
	// must still queue behind them.
	nw.SetDelay(1, 2, 0)
	sendSeq(eps[1], zab.MsgPing, 1, 2, 51, 50)
	checkSeq(t, recvN(t, eps[2].Recv(), 100), 1)
	// A wildcard delay applies too.
	nw.SetDelay(Any, 2, 10*time.Millisecond)
	sendSeq(eps[1], zab.MsgPing, 1, 2, 101, 10)
	checkSeq(t, recvN(t, eps[2].Recv(), 10), 101)
}

func TestNetworkHoldRelease(t *testing.T) {
	nw := NewNetwork(NetworkConfig{})
	defer nw.Close()
	eps := joinAll(t, nw, 1, 2, 3)
	nw.Hold(1, Any)
	sendSeq(eps[1], zab.MsgPing, 1, 2, 1, 10)
	sendSeq(eps[1], zab.MsgPing, 1, 3, 1, 10)
	sendSeq(eps[2], zab.MsgPing, 2, 3, 1, 10)
	if len(eps[2].Recv()) != 0 || len(eps[3].Recv()) != 10 {
		t.Fatalf("held: 2 has %d messages, 3 has %d; want 0 and 10 (from 2 only)", len(eps[2].Recv()), len(eps[3].Recv()))
	}
	checkSeq(t, recvN(t, eps[3].Recv(), 10), 1)
	nw.Release(1, Any)
	// Release delivers before returning: deterministic.
	if len(eps[2].Recv()) != 10 || len(eps[3].Recv()) != 10 {
		t.Fatalf("released: 2 has %d, 3 has %d, want 10 each", len(eps[2].Recv()), len(eps[3].Recv()))
	}
	checkSeq(t, recvN(t, eps[2].Recv(), 10), 1)
	checkSeq(t, recvN(t, eps[3].Recv(), 10), 1)
}

// TestNetworkCrashLosesInFlight: messages in flight to a server that
// crashes never reach its next incarnation, and its Recv is closed.
func TestNetworkCrashLosesInFlight(t *testing.T) {
	nw := NewNetwork(NetworkConfig{})
	defer nw.Close()
	eps := joinAll(t, nw, 1, 2)
	nw.Hold(1, 2)
	sendSeq(eps[1], zab.MsgPing, 1, 2, 1, 5)
	if err := eps[2].Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-eps[2].Recv(); ok {
		t.Fatal("Recv of a closed endpoint not closed")
	}
	if _, err := nw.Join(1); err == nil {
		t.Fatal("joined twice")
	}
	again, err := nw.Join(2)
	if err != nil {
		t.Fatal(err)
	}
	nw.Release(1, 2)
	if n := len(again.Recv()); n != 0 {
		t.Fatalf("new incarnation got %d messages of the old one", n)
	}
	if ps := peerStats(t, eps[1], 2); ps.DroppedDown != 5 {
		t.Fatalf("stats %+v, want 5 dropped", ps)
	}
	sendSeq(eps[1], zab.MsgPing, 1, 2, 6, 1)
	checkSeq(t, recvN(t, again.Recv(), 1), 6)
	// Send after Close is harmless.
	eps[2].Send([]zab.Message{seqMsg(zab.MsgPing, 2, 1, 1)})
}

func TestNetworkRecvFullDrops(t *testing.T) {
	nw := NewNetwork(NetworkConfig{RecvBuffer: 4})
	defer nw.Close()
	eps := joinAll(t, nw, 1, 2)
	sendSeq(eps[1], zab.MsgPing, 1, 2, 1, 10)
	if ps := peerStats(t, eps[1], 2); ps.Sent != 4 || ps.DroppedFull != 6 {
		t.Fatalf("stats %+v, want 4 sent and 6 dropped", ps)
	}
	checkSeq(t, recvN(t, eps[2].Recv(), 4), 1)
	if ps := peerStats(t, eps[2], 1); ps.Received != 4 {
		t.Fatalf("receiver stats %+v", ps)
	}
}

// TestNetworkCodecCopies: with Codec set the receiver's bytes are its
// own, as over TCP.
func TestNetworkCodecCopies(t *testing.T) {
	nw := NewNetwork(NetworkConfig{Codec: true})
	defer nw.Close()
	eps := joinAll(t, nw, 1, 2)
	data := []byte("abc")
	m := zab.Message{Type: zab.MsgProposal, From: 1, To: 2, Entries: []zab.Entry{{Zxid: 1, Data: data}}}
	eps[1].Send([]zab.Message{m})
	got := recvN(t, eps[2].Recv(), 1)[0]
	data[0] = 'X'
	if string(got.Entries[0].Data) != "abc" {
		t.Fatalf("received data aliases the sender's: %q", got.Entries[0].Data)
	}
}
