package transport

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/zab"
)

// tcpCluster is a set of TCP transports on 127.0.0.1 ephemeral ports.
// Addresses are fixed when the cluster is made, so a server can be
// stopped and started again on the same ports.
type tcpCluster struct {
	t     *testing.T
	peers map[uint64]Peer
	lns   map[uint64][2]net.Listener // listeners not yet handed to a transport
	trs   map[uint64]*TCP
	logs  *logSink
	tweak func(*TCPConfig)
}

func newTCPCluster(t *testing.T, ids []uint64, tweak func(*TCPConfig)) *tcpCluster {
	t.Helper()
	c := &tcpCluster{
		t:     t,
		peers: map[uint64]Peer{},
		lns:   map[uint64][2]net.Listener{},
		trs:   map[uint64]*TCP{},
		logs:  newLogSink(t),
		tweak: tweak,
	}
	for _, id := range ids {
		q := listen(t, "127.0.0.1:0")
		e := listen(t, "127.0.0.1:0")
		c.lns[id] = [2]net.Listener{q, e}
		c.peers[id] = Peer{QuorumAddr: q.Addr().String(), ElectionAddr: e.Addr().String()}
	}
	t.Cleanup(func() {
		for _, tr := range c.trs {
			tr.Close()
		}
		for _, l := range c.lns {
			l[0].Close()
			l[1].Close()
		}
	})
	return c
}

func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	var ln net.Listener
	var err error
	// A restarted server binds the ports its predecessor just closed.
	testutil.Eventually(t, waitLimit, "listen on "+addr, func() bool {
		ln, err = net.Listen("tcp", addr)
		return err == nil
	})
	return ln
}

func (c *tcpCluster) config(id uint64) TCPConfig {
	cfg := TCPConfig{
		ID:         id,
		Peers:      c.peers,
		BackoffMin: 5 * time.Millisecond,
		BackoffMax: 100 * time.Millisecond,
		Rand:       rand.New(rand.NewPCG(id, 99)),
		Logger:     c.logs.logger(),
	}
	if c.tweak != nil {
		c.tweak(&cfg)
	}
	return cfg
}

// start starts server id, on the listeners made for it or, after a stop,
// on the same addresses again.
func (c *tcpCluster) start(id uint64) *TCP {
	c.t.Helper()
	cfg := c.config(id)
	l, ok := c.lns[id]
	if !ok {
		l = [2]net.Listener{listen(c.t, c.peers[id].QuorumAddr), listen(c.t, c.peers[id].ElectionAddr)}
	}
	delete(c.lns, id)
	cfg.QuorumListener, cfg.ElectionListener = l[0], l[1]
	tr, err := NewTCP(context.Background(), cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.trs[id] = tr
	return tr
}

func (c *tcpCluster) stop(id uint64) {
	c.trs[id].Close()
	delete(c.trs, id)
}

// waitConnected waits until every pair of running servers among ids is
// connected on both lanes, seen from both ends.
func (c *tcpCluster) waitConnected(ids ...uint64) {
	c.t.Helper()
	testutil.Eventually(c.t, waitLimit, "connections", func() bool {
		for _, a := range ids {
			for _, b := range ids {
				if a == b {
					continue
				}
				if ps, _ := c.trs[a].Stats().Peer(b); !ps.Connected {
					return false
				}
			}
		}
		return true
	})
}

// TestTCPDeliversInOrder: three servers send to each other on both lanes;
// every message arrives, in order per sender and lane.
func TestTCPDeliversInOrder(t *testing.T) {
	checkGoroutines(t)
	ids := []uint64{1, 2, 3}
	c := newTCPCluster(t, ids, func(cfg *TCPConfig) {
		// Election queues keep only the newest votes by default; this
		// test counts every one.
		cfg.MaxElectionQueue = 1000
	})
	for _, id := range ids {
		c.start(id)
	}
	c.waitConnected(ids...)

	const n = 300
	for seq := uint64(1); seq <= n; seq++ {
		for _, from := range ids {
			var batch []zab.Message
			for _, to := range ids {
				if to != from {
					batch = append(batch, seqMsg(zab.MsgProposal, from, to, seq))
					if seq%10 == 0 {
						batch = append(batch, seqMsg(zab.MsgVote, from, to, seq/10))
					}
				}
			}
			c.trs[from].Send(batch)
		}
	}
	for _, to := range ids {
		got := recvN(t, c.trs[to].Recv(), 2*(n+n/10))
		for _, from := range ids {
			if from == to {
				continue
			}
			var props, votes []zab.Message
			for _, m := range got {
				if m.From != from || m.To != to {
					continue
				}
				if m.Type == zab.MsgVote {
					votes = append(votes, m)
				} else {
					props = append(props, m)
				}
			}
			if len(props) != n || len(votes) != n/10 {
				t.Fatalf("%d got %d proposals and %d votes from %d", to, len(props), len(votes), from)
			}
			checkSeq(t, props, 1)
			checkSeq(t, votes, 1)
			if want := seqMsg(zab.MsgProposal, from, to, 7); string(props[6].Entries[0].Data) != string(want.Entries[0].Data) {
				t.Fatalf("entry data %q, want %q", props[6].Entries[0].Data, want.Entries[0].Data)
			}
		}
	}
	// A sender counts a message sent once flushed, which may be just
	// after the receiver has it.
	for _, id := range ids {
		testutil.Eventually(t, waitLimit, "sent counters", func() bool {
			for _, ps := range c.trs[id].Stats().Peers {
				if ps.Sent != n+n/10 {
					return false
				}
			}
			return true
		})
		for _, ps := range c.trs[id].Stats().Peers {
			if ps.DroppedFull+ps.DroppedDown != 0 || ps.Received != n+n/10 {
				t.Fatalf("server %d stats %+v", id, ps)
			}
		}
	}
}

// sendLoop sends count rounds of a proposal and a vote to every target,
// from its own goroutine; the channel is closed when it is done. A Send
// that blocked would keep it open.
func sendLoop(tr *TCP, from uint64, targets []uint64, count int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for seq := uint64(1); seq <= uint64(count); seq++ {
			var batch []zab.Message
			for _, to := range targets {
				batch = append(batch, seqMsg(zab.MsgProposal, from, to, seq), seqMsg(zab.MsgVote, from, to, seq))
			}
			tr.Send(batch)
			if seq%100 == 0 {
				time.Sleep(time.Millisecond) // let dial loops run meanwhile
			}
		}
	}()
	return done
}

func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: Send blocked", what)
	}
}

// recvProposals receives until n quorum messages from one sender arrived,
// ignoring the rest (votes may be dropped: their queues keep only the
// newest), and checks they are in order.
func recvProposals(t *testing.T, ch <-chan zab.Message, from uint64, n int) {
	t.Helper()
	var got []zab.Message
	timeout := time.After(20 * time.Second)
	for len(got) < n {
		select {
		case m := <-ch:
			if m.From == from && m.Type == zab.MsgProposal {
				got = append(got, m)
			}
		case <-timeout:
			t.Fatalf("received %d of %d proposals from %d", len(got), n, from)
		}
	}
	checkSeq(t, got, 1)
}

// TestTCPDownPeerDoesNotStall: a server that hangs (its port accepts
// connections nobody answers), one that is down (nothing listens), and one
// that is killed cost the others neither blocked sends nor goroutines.
func TestTCPDownPeerDoesNotStall(t *testing.T) {
	checkGoroutines(t)
	ids := []uint64{1, 2, 3}
	c := newTCPCluster(t, ids, func(cfg *TCPConfig) {
		cfg.HandshakeTimeout = 200 * time.Millisecond
		cfg.MaxElectionQueue = 1 << 20 // keep every vote, to count them
	})
	// Server 1 is not started: 2 and 3 keep dialing it. First its ports
	// are bound but nobody accepts (a hung process).
	c.start(2)
	c.start(3)
	c.waitConnected(2, 3)
	testutil.Eventually(t, waitLimit, "handshake timeouts logged", func() bool {
		return c.logs.contains("server=2", "cannot connect", "peer=1", "handshake") &&
			c.logs.contains("server=3", "cannot connect", "peer=1", "handshake")
	})
	const n = 3000
	done := sendLoop(c.trs[2], 2, []uint64{1, 3}, n)
	recvProposals(t, c.trs[3].Recv(), 2, n)
	waitDone(t, done, "sending to a hung server")

	// Then nothing listens at all.
	for _, ln := range c.lns[1] {
		ln.Close()
	}
	delete(c.lns, 1)
	testutil.Eventually(t, waitLimit, "refused connections logged", func() bool {
		return c.logs.contains("server=2", "cannot connect", "peer=1", "refused")
	})
	base := runtime.NumGoroutine()
	done = sendLoop(c.trs[2], 2, []uint64{1, 3}, n)
	recvProposals(t, c.trs[3].Recv(), 2, n)
	waitDone(t, done, "sending to a server never started")
	ps, _ := c.trs[2].Stats().Peer(1)
	if ps.Connected || ps.DroppedDown != 4*n || ps.Sent != 0 {
		t.Fatalf("2's stats for the down server: %+v", ps)
	}
	// The dial loops kept failing meanwhile; that costs no goroutines.
	if g := runtime.NumGoroutine(); g > base+2 {
		t.Fatalf("goroutines grew from %d to %d while a peer was down", base, g)
	}

	// Now 1 comes up, then 3 is killed.
	c.start(1)
	c.waitConnected(1, 2, 3)
	c.stop(3)
	testutil.Eventually(t, waitLimit, "2 to notice 3 is gone, on both lanes", func() bool {
		ps, _ := c.trs[2].Stats().Peer(3)
		return ps.Connects > 0 && ps.Disconnects == ps.Connects
	})
	done = sendLoop(c.trs[2], 2, []uint64{1, 3}, n)
	recvProposals(t, c.trs[1].Recv(), 2, n)
	waitDone(t, done, "sending to a killed server")
	if ps, _ := c.trs[2].Stats().Peer(3); ps.DroppedDown < 2*n {
		t.Fatalf("2's stats for the killed server: %+v", ps)
	}
}

// TestTCPReconnectAfterRestart: a restarted server is reconnected, whether
// it is the one that dials (higher id) or the one that accepts (lower).
func TestTCPReconnectAfterRestart(t *testing.T) {
	checkGoroutines(t)
	ids := []uint64{1, 2, 3}
	c := newTCPCluster(t, ids, nil)
	for _, id := range ids {
		c.start(id)
	}
	c.waitConnected(ids...)
	for round, victim := range []uint64{3, 1, 2} {
		c.stop(victim)
		c.start(victim)
		c.waitConnected(ids...)
		// Traffic flows both ways between the restarted server and the
		// others (the lower id cannot send before the higher has dialed;
		// waitConnected covered that).
		for _, other := range ids {
			if other == victim {
				continue
			}
			seq := uint64(100*round + 1)
			c.trs[other].Send([]zab.Message{seqMsg(zab.MsgProposal, other, victim, seq)})
			c.trs[victim].Send([]zab.Message{seqMsg(zab.MsgProposal, victim, other, seq)})
			if m := recvN(t, c.trs[victim].Recv(), 1)[0]; m.From != other || uint64(m.Zxid) != seq {
				t.Fatalf("restarted %d got %v", victim, m)
			}
			if m := recvN(t, c.trs[other].Recv(), 1)[0]; m.From != victim || uint64(m.Zxid) != seq {
				t.Fatalf("%d got %v from the restarted %d", other, m, victim)
			}
		}
	}
}

// fakePeer dials a transport's port and handshakes as server from.
func fakePeer(t *testing.T, addr string, l lane, from, to uint64) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := nc.Write(hello{lane: l, from: from, to: to}.marshal()); err != nil {
		t.Fatal(err)
	}
	status, id, err := readReply(nc)
	if err != nil || status != statusOK || id != to {
		t.Fatalf("fake peer handshake: status %v id %d err %v", status, id, err)
	}
	return nc
}

// expectClosed waits for the other end to close nc, reading and
// discarding anything before the close.
func expectClosed(t *testing.T, nc net.Conn, what string) {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: connection not closed", what)
	}
}

// TestTCPQueueOverflowAndStalledPeer: a peer that stops reading fills its
// queue (messages dropped and counted, Send never blocks), then the write
// deadline closes its connection.
func TestTCPQueueOverflowAndStalledPeer(t *testing.T) {
	checkGoroutines(t)
	c := newTCPCluster(t, []uint64{1, 2}, func(cfg *TCPConfig) {
		cfg.MaxQueueMessages = 8
		cfg.IOTimeout = 300 * time.Millisecond
	})
	tr := c.start(1)
	// Server 2 is a fake that handshakes, then never reads.
	nc := fakePeer(t, c.peers[1].QuorumAddr, laneQuorum, 2, 1)
	testutil.Eventually(t, waitLimit, "the fake peer's connection", func() bool {
		ps, _ := tr.Stats().Peer(2)
		return ps.Connects == 1
	})
	big := make([]byte, 64<<10)
	send := func(i int) {
		tr.Send([]zab.Message{{Type: zab.MsgProposal, From: 1, To: 2, Entries: []zab.Entry{{Zxid: zab.Zxid(i + 1), Data: big}}}})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20000; i++ {
			if ps, _ := tr.Stats().Peer(2); ps.DroppedFull > 0 {
				return
			}
			send(i)
		}
	}()
	waitDone(t, done, "overflowing a stalled peer")
	if ps, _ := tr.Stats().Peer(2); ps.DroppedFull == 0 {
		t.Fatalf("no drop counted: %+v", ps)
	}
	// Keep the writer supplied until the socket buffers are full and it
	// blocks: its progress deadline then ends the connection.
	for i := 0; ; i++ {
		if ps, _ := tr.Stats().Peer(2); ps.Disconnects > 0 {
			break
		}
		if i == 20000 {
			t.Fatal("the stalled connection was not closed")
		}
		send(i)
		time.Sleep(time.Millisecond)
	}
	testutil.Eventually(t, waitLimit, "the disconnection logged with the write timeout as reason", func() bool {
		return c.logs.contains("disconnected", "peer=2", "write", "i/o timeout")
	})
	if ps, _ := tr.Stats().Peer(2); ps.Connected || ps.DroppedDown == 0 {
		t.Fatalf("after the stalled connection closed: %+v", ps)
	}
	expectClosed(t, nc, "stalled peer")
}

// TestTCPBadInputClosesOnlyThatConnection: refused handshakes and bad
// frames close the offending connection with a logged reason, and the
// connection between the real servers carries on.
func TestTCPBadInputClosesOnlyThatConnection(t *testing.T) {
	checkGoroutines(t)
	// 3 is configured but played by the test.
	c := newTCPCluster(t, []uint64{1, 2, 3}, func(cfg *TCPConfig) {
		cfg.HandshakeTimeout = 300 * time.Millisecond
		cfg.MaxFrameBytes = 1 << 20
	})
	one, two := c.start(1), c.start(2)
	c.waitConnected(1, 2)
	q1, e1 := c.peers[1].QuorumAddr, c.peers[1].ElectionAddr

	refused := func(what, addr string, h []byte, want handshakeStatus) {
		t.Helper()
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if _, err := nc.Write(h); err != nil {
			t.Fatal(err)
		}
		status, _, err := readReply(nc)
		if err != nil || status != want {
			t.Fatalf("%s: status %v err %v, want %v", what, status, err, want)
		}
		expectClosed(t, nc, what)
	}
	refused("unknown id", q1, hello{lane: laneQuorum, from: 9, to: 1}.marshal(), statusUnknownID)
	refused("wrong lane", e1, hello{lane: laneQuorum, from: 3, to: 1}.marshal(), statusBadLane)
	refused("wrong target", q1, hello{lane: laneQuorum, from: 3, to: 2}.marshal(), statusWrongTarget)
	refused("lower id dialing", c.peers[2].QuorumAddr, hello{lane: laneQuorum, from: 1, to: 2}.marshal(), statusWrongDirection)
	badVersion := hello{lane: laneQuorum, from: 3, to: 1}.marshal()
	badVersion[4] = 99
	refused("bad version", q1, badVersion, statusBadVersion)

	// Not our protocol: closed without a reply.
	for what, payload := range map[string][]byte{
		"http":    []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"silence": nil,
	} {
		nc, err := net.Dial("tcp", q1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(payload); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
		// A close with unread bytes is a reset: any error but a timeout.
		b, err := io.ReadAll(nc)
		var ne net.Error
		if len(b) != 0 || (errors.As(err, &ne) && ne.Timeout()) {
			t.Fatalf("%s: read %q, %v; want a bare close", what, b, err)
		}
		nc.Close()
	}

	// After a valid handshake as 3: a good message is delivered, then
	// each kind of bad frame closes the connection.
	frame := func(m zab.Message) []byte {
		var b []byte
		w := writerFunc(func(p []byte) (int, error) { b = append(b, p...); return len(p), nil })
		head, tail := encodeHead(nil, m)
		if err := writeFrame(w, head, tail); err != nil {
			t.Fatal(err)
		}
		return b
	}
	good := frame(seqMsg(zab.MsgProposal, 3, 1, 1))
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 0xff
	huge := []byte{0x7f, 0, 0, 0, 0, 0, 0, 0}
	cases := []struct {
		name   string
		lane   lane
		bytes  []byte
		reason string
	}{
		{"bad crc", laneQuorum, badCRC, "checksum"},
		{"too large", laneQuorum, huge, "too large"},
		{"garbage body", laneQuorum, frameBody([]byte("garbage!")), "malformed"},
		{"forged sender", laneQuorum, frame(seqMsg(zab.MsgProposal, 2, 1, 1)), "claims to be from 2"},
		{"wrong recipient", laneQuorum, frame(seqMsg(zab.MsgProposal, 3, 2, 1)), "addressed to 2"},
		{"vote on the quorum port", laneQuorum, frame(seqMsg(zab.MsgVote, 3, 1, 1)), "on the quorum connection"},
		{"proposal on the election port", laneElection, frame(seqMsg(zab.MsgProposal, 3, 1, 1)), "on the election connection"},
	}
	for _, tc := range cases {
		addr := q1
		if tc.lane == laneElection {
			addr = e1
		}
		nc := fakePeer(t, addr, tc.lane, 3, 1)
		if tc.lane == laneQuorum {
			if _, err := nc.Write(good); err != nil {
				t.Fatal(err)
			}
			if m := recvN(t, one.Recv(), 1)[0]; m.From != 3 || m.Zxid != 1 {
				t.Fatalf("%s: got %v from the fake peer", tc.name, m)
			}
		}
		if _, err := nc.Write(tc.bytes); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, nc, tc.name)
		testutil.Eventually(t, waitLimit, tc.name+" logged", func() bool {
			return c.logs.contains("server=1", "disconnected", "peer=3", tc.reason)
		})
	}

	// The real pair never noticed.
	one.Send([]zab.Message{seqMsg(zab.MsgProposal, 1, 2, 1)})
	two.Send([]zab.Message{seqMsg(zab.MsgProposal, 2, 1, 1)})
	checkSeq(t, recvN(t, two.Recv(), 1), 1)
	checkSeq(t, recvN(t, one.Recv(), 1), 1)
	for _, pair := range [][2]*TCP{{one, two}, {two, one}} {
		id := uint64(2)
		if pair[0] == two {
			id = 1
		}
		if ps, _ := pair[0].Stats().Peer(id); ps.Disconnects != 0 || ps.Connects != 2 {
			t.Fatalf("real link disturbed: %+v", ps)
		}
	}
	if r := one.Stats().Rejected; r < 6 {
		t.Fatalf("server 1 counted %d refused handshakes, want at least 6", r)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// frameBody frames arbitrary bytes with a correct CRC.
func frameBody(body []byte) []byte {
	var b []byte
	w := writerFunc(func(p []byte) (int, error) { b = append(b, p...); return len(p), nil })
	_ = writeFrame(w, body, nil)
	return b
}

// TestTCPSendRules: unknown recipients, forged senders and oversized
// messages are dropped and counted; Send after Close is harmless; Recv closes.
func TestTCPSendRules(t *testing.T) {
	checkGoroutines(t)
	c := newTCPCluster(t, []uint64{1, 2}, func(cfg *TCPConfig) { cfg.MaxFrameBytes = 4096 })
	one := c.start(1)
	c.start(2)
	c.waitConnected(1, 2)
	one.Send([]zab.Message{
		{Type: zab.MsgPing, From: 1, To: 1},
		{Type: zab.MsgPing, From: 1, To: 7},
		{Type: zab.MsgPing, From: 2, To: 2},
		{Type: zab.MsgSync, From: 1, To: 2, Snapshot: &zab.Snapshot{Data: make([]byte, 5000)}},
	})
	st := one.Stats()
	if st.DroppedUnknown != 3 {
		t.Fatalf("DroppedUnknown %d, want 3", st.DroppedUnknown)
	}
	if ps, _ := st.Peer(2); ps.DroppedTooLarge != 1 {
		t.Fatalf("stats %+v, want one too large", ps)
	}
	if one.QuorumAddr().String() != c.peers[1].QuorumAddr || one.ElectionAddr().String() != c.peers[1].ElectionAddr {
		t.Fatalf("listening on %v and %v, configured %+v", one.QuorumAddr(), one.ElectionAddr(), c.peers[1])
	}
	c.stop(1)
	one.Send([]zab.Message{{Type: zab.MsgPing, From: 1, To: 2}})
	for range one.Recv() {
	}
	if err := one.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTCPStopsWithContext: cancelling the context stops everything, like
// Close.
func TestTCPStopsWithContext(t *testing.T) {
	checkGoroutines(t)
	c := newTCPCluster(t, []uint64{1, 2, 3}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	trs := map[uint64]*TCP{}
	for _, id := range []uint64{1, 2, 3} {
		cfg := c.config(id)
		l := c.lns[id]
		delete(c.lns, id)
		cfg.QuorumListener, cfg.ElectionListener = l[0], l[1]
		tr, err := NewTCP(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		trs[id] = tr
		c.trs[id] = tr
	}
	c.waitConnected(1, 2, 3)
	trs[3].Send([]zab.Message{seqMsg(zab.MsgProposal, 3, 1, 1)})
	recvN(t, trs[1].Recv(), 1)
	cancel()
	for _, id := range []uint64{1, 2, 3} {
		for range trs[id].Recv() {
		}
	}
}

func TestTCPConfigValidation(t *testing.T) {
	peers := map[uint64]Peer{1: {"127.0.0.1:1", "127.0.0.1:2"}, 2: {"127.0.0.1:3", "127.0.0.1:4"}}
	bad := map[string]TCPConfig{
		"zero id":      {Peers: peers},
		"not in peers": {ID: 3, Peers: peers},
		"no address":   {ID: 1, Peers: map[uint64]Peer{1: {"127.0.0.1:1", "127.0.0.1:2"}, 2: {QuorumAddr: "127.0.0.1:3"}}},
		"backoff":      {ID: 1, Peers: peers, BackoffMin: time.Second, BackoffMax: time.Millisecond},
		"negative":     {ID: 1, Peers: peers, MaxQueueMessages: -1},
	}
	for name, cfg := range bad {
		if _, err := NewTCP(context.Background(), cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: err %v, want ErrInvalidConfig", name, err)
		}
	}
	// A port that stays taken is an error, after the bind retries, not a
	// hang.
	bindRetries(t, 2)
	ln := listen(t, "127.0.0.1:0")
	defer ln.Close()
	taken := map[uint64]Peer{1: {ln.Addr().String(), "127.0.0.1:0"}}
	if _, err := NewTCP(context.Background(), TCPConfig{ID: 1, Peers: taken}); err == nil {
		t.Error("listening on a taken port succeeded")
	}
}

// bindRetries sets the bind retries for one test (the transport tests do
// not run in parallel): attempts, 100 ms apart.
func bindRetries(t *testing.T, attempts int) {
	oldAttempts, oldBackoff := bindAttempts, bindBackoff
	bindAttempts, bindBackoff = attempts, 100*time.Millisecond
	t.Cleanup(func() { bindAttempts, bindBackoff = oldAttempts, oldBackoff })
}

// TestTCPRetriesAPortInUse: a port still held when the transport starts
// (by the server's own previous run, or a peer's dial that took it as its
// source port) is retried, as ZooKeeper retries its election port, and the
// transport starts once it is free.
func TestTCPRetriesAPortInUse(t *testing.T) {
	checkGoroutines(t)
	bindRetries(t, 600) // a minute: how soon the port is released does not matter
	held := listen(t, "127.0.0.1:0")
	free := listen(t, "127.0.0.1:0")
	peers := map[uint64]Peer{1: {QuorumAddr: held.Addr().String(), ElectionAddr: free.Addr().String()}}
	free.Close()
	logs := newLogSink(t)
	released := make(chan struct{})
	go func() {
		// Release the port once the transport has found it taken.
		defer close(released)
		testutil.Within(time.Minute, func() bool { return logs.contains("port in use, retrying") })
		held.Close()
	}()
	tr, err := NewTCP(context.Background(), TCPConfig{ID: 1, Peers: peers, Logger: logs.logger()})
	<-released
	if !logs.contains("port in use, retrying") {
		t.Error("the port was never found in use")
	}
	if err != nil {
		t.Fatalf("NewTCP with its port released during the retries: %v", err)
	}
	defer tr.Close()
	if tr.QuorumAddr().String() != peers[1].QuorumAddr {
		t.Fatalf("listening on %v, configured %v", tr.QuorumAddr(), peers[1].QuorumAddr)
	}
}

// TestTCPListensOnConfiguredPorts: without listeners given, a transport
// listens on its own Peers entry, both ports, as zoo.cfg's server.N line
// says.
func TestTCPListensOnConfiguredPorts(t *testing.T) {
	checkGoroutines(t)
	// Find free ports (listen, note, close); another process could take
	// one in between, so try a few times.
	for attempt := 0; ; attempt++ {
		peers := map[uint64]Peer{}
		for _, id := range []uint64{1, 2} {
			var addrs [2]string
			for i := range addrs {
				ln := listen(t, "127.0.0.1:0")
				addrs[i] = ln.Addr().String()
				ln.Close()
			}
			peers[id] = Peer{QuorumAddr: addrs[0], ElectionAddr: addrs[1]}
		}
		var trs []*TCP
		var err error
		for _, id := range []uint64{1, 2} {
			var tr *TCP
			tr, err = NewTCP(context.Background(), TCPConfig{ID: id, Peers: peers, BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond})
			if err != nil {
				break
			}
			trs = append(trs, tr)
			defer tr.Close()
		}
		if err != nil {
			if attempt == 5 {
				t.Fatal(err)
			}
			continue
		}
		if trs[0].QuorumAddr().String() != peers[1].QuorumAddr || trs[0].ElectionAddr().String() != peers[1].ElectionAddr {
			t.Fatalf("listening on %v and %v, configured %+v", trs[0].QuorumAddr(), trs[0].ElectionAddr(), peers[1])
		}
		testutil.Eventually(t, waitLimit, "connected", func() bool {
			ps, _ := trs[0].Stats().Peer(2)
			return ps.Connected
		})
		trs[0].Send([]zab.Message{seqMsg(zab.MsgProposal, 1, 2, 1), seqMsg(zab.MsgVote, 1, 2, 1)})
		got := recvN(t, trs[1].Recv(), 2)
		if got[0].From != 1 || got[1].From != 1 {
			t.Fatalf("got %v", got)
		}
		return
	}
}
