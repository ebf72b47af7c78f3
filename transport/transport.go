package transport

import (
	"errors"

	"github.com/corral-db/corral/zab"
)

// Transport carries zab messages between the servers of an ensemble. It is
// what a server's driver loop needs and nothing more:
//
//	for {
//		select {
//		case m, ok := <-tr.Recv():
//			if !ok { return } // the transport was closed
//			node.Step(m)
//		case <-ticker.C:
//			node.Tick()
//		}
//		for node.HasReady() {
//			rd := node.Ready()
//			// ... persist as Ready says ...
//			tr.Send(rd.Messages)
//			node.Advance(rd)
//		}
//	}
//
// Delivery is best effort, in order per pair of servers and message class,
// and never blocks the sender: a message to a peer that is down,
// unreachable or too slow to drain its queue is dropped and counted. That
// is what zab expects of a link (docs/design/zab.md, "Sessions"): a lost
// message looks like a broken TCP connection, which the protocol already
// recovers from (votes are resent, a learner that sees a gap in its stream
// opens a new session, acknowledgements and commits are cumulative).
type Transport interface {
	// Send queues msgs for their recipients (Message.To) and returns at
	// once. It never blocks and never fails: a message that cannot be
	// queued is dropped and counted in Stats. The transport keeps the
	// messages (their Entries and Snapshot bytes) until they are written;
	// the caller must not modify them afterwards, as zab's own contract
	// for Ready.Messages already says. It copies each Message value and
	// does not keep msgs itself: the caller may reuse that slice once Send
	// returns (zab.Node.RecycleMessages). Send may be called concurrently
	// and after Close (the messages are then dropped).
	Send(msgs []zab.Message)
	// Recv returns the channel of messages received from peers, closed
	// once the transport has stopped. The channel is bounded; while the
	// driver does not drain it, connections stop reading and their peers'
	// queues fill and drop, so a slow driver slows its peers' traffic to
	// it but never stalls them.
	Recv() <-chan zab.Message
	// Stats reports per-peer counters.
	Stats() Stats
	// Close stops every goroutine of the transport, closes its listeners
	// and connections and waits for them; then Recv's channel is closed.
	// It is idempotent.
	Close() error
}

// Stats is a snapshot of a transport's counters.
type Stats struct {
	// Peers has one entry per peer, in id order.
	Peers []PeerStats
	// DroppedUnknown counts messages Send could not route: addressed to a
	// server that is not a peer (an unknown id, or this server itself),
	// not from this server (From is what the receiver checks against the
	// connection), or sent after Close.
	DroppedUnknown uint64
	// Rejected counts incoming connections refused during the handshake
	// (bad magic or version, unknown or unexpected server id, too many
	// pending handshakes).
	Rejected uint64
}

// PeerStats are the counters of the link to one peer, summed over its
// message classes (election and quorum).
type PeerStats struct {
	ID uint64
	// Connected reports whether every message class has a live connection
	// to the peer (the in-memory network: the peer is up and reachable).
	Connected bool
	// Sent counts messages handed to the network (TCP: flushed to the
	// socket; that is no proof of receipt).
	Sent uint64
	// Received counts messages received from the peer.
	Received uint64
	// DroppedFull counts messages dropped because the peer's queue was
	// full (election messages: the oldest is dropped for the newest).
	DroppedFull uint64
	// DroppedDown counts messages dropped because there was no live
	// connection to the peer, or lost with a connection that broke before
	// they were written (in memory: the peer was down, partitioned away,
	// or the network was told to drop it).
	DroppedDown uint64
	// DroppedTooLarge counts messages whose encoding exceeds the maximum
	// frame size, which the peer would refuse.
	DroppedTooLarge uint64
	// Connects counts connections established (TCP only).
	Connects uint64
	// Disconnects counts connections lost or closed, with a logged reason
	// (TCP only).
	Disconnects uint64
}

// Peer returns the stats of peer id, or false if id is not a peer.
func (s Stats) Peer(id uint64) (PeerStats, bool) {
	for _, p := range s.Peers {
		if p.ID == id {
			return p, true
		}
	}
	return PeerStats{}, false
}

var (
	// ErrInvalidConfig reports a configuration a transport cannot start
	// with.
	ErrInvalidConfig = errors.New("transport: invalid config")
	// ErrMalformed reports bytes that do not decode to a message.
	ErrMalformed = errors.New("transport: malformed message")
	// ErrFrameTooLarge reports a frame above the maximum size.
	ErrFrameTooLarge = errors.New("transport: frame too large")
	// ErrChecksum reports a frame whose CRC does not match its body.
	ErrChecksum = errors.New("transport: frame checksum mismatch")
	// ErrHandshake reports a connection refused during the handshake.
	ErrHandshake = errors.New("transport: handshake failed")
	// ErrClosed reports use of a closed transport or network.
	ErrClosed = errors.New("transport: closed")
	// ErrPeerRemoved closes the connections of a peer a new configuration
	// left out (TCP.SetPeers).
	ErrPeerRemoved = errors.New("transport: peer removed from the configuration")
)
