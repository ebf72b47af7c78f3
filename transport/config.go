package transport

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"time"
)

// Peer is where a server listens, as its server.N line in zoo.cfg says:
// QuorumAddr is host:quorumPort, ElectionAddr host:electionPort
// (config.Server.QuorumAddr and ElectionAddr).
type Peer struct {
	QuorumAddr   string
	ElectionAddr string
}

// TCPConfig configures a TCP transport. Zero values take the defaults
// documented on each field.
type TCPConfig struct {
	// ID is this server's id (myid), non-zero and a key of Peers.
	ID uint64
	// Peers holds every server of the ensemble, this one included,
	// voters and observers alike. Unless listeners are given, the
	// transport listens on Peers[ID]'s two addresses.
	Peers map[uint64]Peer
	// AcceptUnknown accepts connections from a server outside Peers whose
	// id is higher than ID (it dials, as the higher id does): a server
	// joining the ensemble by dynamic reconfiguration, which knows the
	// members before they know it. SetPeers gives it an address once a
	// configuration names it.
	AcceptUnknown bool

	// QuorumListener and ElectionListener, if set, are used instead of
	// listening on Peers[ID] (tests listen on port 0 first; a supervisor
	// may hand over sockets). The transport owns and closes them. Set
	// both or neither.
	QuorumListener   net.Listener
	ElectionListener net.Listener

	// MaxFrameBytes bounds one message's encoding, in both directions: a
	// larger message is dropped by Send, a larger incoming frame closes
	// the connection. It must hold a SNAP message with its snapshot.
	// Default 512 MiB.
	MaxFrameBytes int
	// MaxQueueMessages and MaxQueueBytes bound the quorum queue of each
	// peer (messages waiting for the connection's writer). Defaults 4096
	// and 64 MiB. One message larger than MaxQueueBytes is accepted when
	// the queue is empty.
	MaxQueueMessages int
	MaxQueueBytes    int64
	// MaxElectionQueue bounds the election queue of each peer, in
	// messages; a full one drops its oldest vote. Default 16.
	MaxElectionQueue int
	// RecvBuffer is the capacity of the Recv channel. Default 4096.
	RecvBuffer int

	// DialTimeout bounds one connection attempt. Default 5 s.
	DialTimeout time.Duration
	// HandshakeTimeout bounds the handshake of a new connection.
	// Default 5 s.
	HandshakeTimeout time.Duration
	// IOTimeout is the progress deadline of a connection: each write of
	// up to 256 KiB, and each read once a frame has started, must complete
	// within it or the connection is closed. An idle connection has no
	// read deadline. Default 10 s.
	IOTimeout time.Duration
	// KeepAlive is the idle time before TCP keepalive probes start and
	// the interval between them; three unanswered probes close the
	// connection. On Linux it also sets TCP_USER_TIMEOUT (how long sent
	// data may stay unacknowledged) to IOTimeout + 3*KeepAlive.
	// Default 5 s.
	KeepAlive time.Duration
	// BackoffMin and BackoffMax bound the wait between connection attempts
	// to a peer: it doubles from BackoffMin after each failure up to
	// BackoffMax, with jitter (a uniform draw in [d/2, d]), and starts
	// again from BackoffMin after a successful handshake. Defaults 50 ms
	// and 1 s. The bound matters most when a lower-id server restarts: it
	// cannot dial, so it is unreachable until its peers' next attempt.
	BackoffMin time.Duration
	BackoffMax time.Duration
	// MaxPendingHandshakes bounds incoming connections still in their
	// handshake; more are closed at once. Default 32.
	MaxPendingHandshakes int

	// TLS, if set, secures both lanes (sslQuorum): every connection
	// starts with a TLS handshake, before the transport's own; the
	// accepting side's configuration decides whether the dialler must
	// present a certificate (ZooKeeper's quorum requires one).
	TLS *TLS

	// OnDisconnect, if set, is called (from a transport goroutine) each
	// time the quorum connection with a peer ends, so the driver can tell
	// zab at once (zab.Node.ReportUnreachable) instead of waiting for
	// syncLimit: a learner whose leader process died then looks for a new
	// leader right away, as ZooKeeper's does when its socket closes. It
	// must not block.
	OnDisconnect func(peer uint64)

	// OnProgress, if set, is called (from a transport goroutine) for every
	// chunk of a large quorum frame read from or written to a peer (a
	// snapshot: every 1 MiB read, every 256 KiB written), so the driver
	// can tell zab that the sync it carries is moving
	// (zab.Node.ReportProgress) while the frame is still incomplete.
	// Small frames (pings, proposals) report nothing. It must not block.
	OnProgress func(peer uint64)

	// Rand draws the backoff jitter. Nil means a source seeded from ID.
	Rand *rand.Rand
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
}

// TLS is the quorum's TLS configuration (ssl.quorum.*).
type TLS struct {
	// Server configures accepted connections.
	Server *tls.Config
	// Client returns the configuration for dialling a peer at host (the
	// host part of its address, which hostname verification checks).
	Client func(host string) *tls.Config
}

func (c *TCPConfig) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	if c.ID == 0 {
		return bad("ID must be non-zero")
	}
	self, ok := c.Peers[c.ID]
	if !ok {
		return bad("ID %d is not in Peers", c.ID)
	}
	for id, p := range c.Peers {
		if id == 0 {
			return bad("peer id 0")
		}
		if id != c.ID && (p.QuorumAddr == "" || p.ElectionAddr == "") {
			return bad("peer %d lacks an address", id)
		}
	}
	if (c.QuorumListener == nil) != (c.ElectionListener == nil) {
		return bad("set both listeners or neither")
	}
	if c.TLS != nil && (c.TLS.Server == nil || c.TLS.Client == nil) {
		return bad("TLS needs both a server and a client configuration")
	}
	if c.QuorumListener == nil && (self.QuorumAddr == "" || self.ElectionAddr == "") {
		return bad("no address to listen on for server %d", c.ID)
	}
	setDefault(&c.MaxFrameBytes, 512<<20)
	setDefault(&c.MaxQueueMessages, 4096)
	setDefault(&c.MaxQueueBytes, 64<<20)
	setDefault(&c.MaxElectionQueue, 16)
	setDefault(&c.RecvBuffer, 4096)
	setDefault(&c.DialTimeout, 5*time.Second)
	setDefault(&c.HandshakeTimeout, 5*time.Second)
	setDefault(&c.IOTimeout, 10*time.Second)
	setDefault(&c.KeepAlive, 5*time.Second)
	setDefault(&c.BackoffMin, 50*time.Millisecond)
	setDefault(&c.BackoffMax, time.Second)
	setDefault(&c.MaxPendingHandshakes, 32)
	if c.MaxFrameBytes < 0 || c.MaxQueueMessages < 0 || c.MaxQueueBytes < 0 || c.MaxElectionQueue < 0 ||
		c.RecvBuffer < 0 || c.DialTimeout < 0 || c.HandshakeTimeout < 0 || c.IOTimeout < 0 ||
		c.KeepAlive < 0 || c.BackoffMin < 0 || c.BackoffMax < 0 || c.MaxPendingHandshakes < 0 {
		return bad("negative setting")
	}
	if int64(c.MaxFrameBytes) > maxFrameLimit {
		return bad("MaxFrameBytes %d above %d", c.MaxFrameBytes, maxFrameLimit)
	}
	if c.BackoffMax < c.BackoffMin {
		return bad("BackoffMax %v below BackoffMin %v", c.BackoffMax, c.BackoffMin)
	}
	c.Peers = maps.Clone(c.Peers)
	if c.Rand == nil {
		c.Rand = rand.New(rand.NewPCG(c.ID, 0x747270))
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// maxFrameLimit is what a frame's 32-bit length can say.
const maxFrameLimit = 1<<32 - 1

func setDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}
