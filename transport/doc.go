// Package transport carries zab messages between the servers of an
// ensemble: a TCP transport for real servers, an in-memory Network with
// fault controls for tests, and the binary codec of zab.Message both can
// use. zab imports nothing; the encoding of its messages lives here.
//
// # The contract
//
// Transport.Send never blocks and never fails; Recv is a bounded channel.
// Delivery is best effort and FIFO per pair of servers and message class.
// A message is dropped, and counted, when the peer is down or unreachable,
// when its queue is full, or when the connection breaks with it in flight.
// That is the link zab is built for (docs/design/zab.md, "Sessions"):
// every message of a stream carries what the receiver needs to detect a
// gap, votes are resent, acknowledgements and commits are cumulative, so a
// drop costs a new session or a resend, never safety. A server that is
// down or slow therefore costs the others nothing but a bounded queue.
//
// Receiving pushes back instead: a connection's reader waits while Recv's
// channel is full, so a driver that falls behind slows its peers' traffic
// to it (their queues fill and drop) rather than losing what already
// arrived. The peers of a driver stuck for long close their connections
// to it (their writer's IOTimeout once their socket is full, or on Linux
// TCP_USER_TIMEOUT after IOTimeout + 3*KeepAlive of a closed window), as
// they would for a hung process; they redial or wait to be dialed.
//
// # Two ports, two connections per pair
//
// zoo.cfg gives every server a quorum port and an election port, and the
// transport listens on both, as ZooKeeper does. Votes (zab.MsgVote) travel
// on election connections, everything else on quorum connections. Keeping
// them apart means an election is never stuck behind a snapshot or a long
// DIFF on the same socket, and a flood of proposals to a slow peer never
// crowds out its votes: each class has its own queues. The price is that
// there is no order between a vote and a quorum message of the same pair;
// zab does not rely on one (a vote is a statement of the sender's current
// state, and sessions are checked on every quorum message).
//
// Unlike ZooKeeper, where quorum connections go from a learner to its
// leader, the transport keeps a full mesh on both ports whatever the roles:
// zab's roles change with every election and it addresses messages by
// server id, so the transport need not know who leads.
//
// # Connections
//
// For each pair of servers and each port there is exactly one connection,
// dialed by the server with the higher id (as ZooKeeper's election
// connections resolve to the higher id), so no duplicate connections ever
// need resolving. The dialer redials a broken connection with exponential
// backoff and jitter drawn from the seeded TCPConfig.Rand; a new
// connection from a peer replaces its old one, which the peer gave up on.
// The lower id only waits: messages to a higher-id peer that is not
// connected are dropped until it dials.
//
// A connection opens with a handshake (handshake.go): the dialer states its
// id, the id it means to reach and the message class; the acceptor checks
// them against its peer table (unknown ids, a wrong target, a class on the
// wrong port, a lower id dialing are refused with a reason the dialer
// logs) and answers with its own id. Bytes that do not start with the
// magic are closed without an answer. With TCPConfig.TLS (sslQuorum) a
// TLS handshake comes first, within the same HandshakeTimeout: the
// acceptor's configuration decides whether the dialer must present a
// certificate and checks it; a peer that fails it is refused and logged
// like any other.
//
// After the handshake each side reads and writes frames (frame.go): a
// 32-bit length, a CRC-32C and the body, one encoded message (codec.go).
// A frame above the maximum size, with a bad CRC or a body that does not
// decode, or a message whose From, To or class does not fit the
// connection, closes that connection (only it) with a logged reason;
// nothing on the input path panics. Each connection has one writer
// goroutine that takes everything queued, encodes it into a buffered
// writer and flushes once, and one reader goroutine. A writer that
// flushed an idle link also sends what the same lane's idle links to the
// other peers have queued, if their own writers have not started on it
// (a broadcast then leaves without waiting for every writer's wake-up);
// a busy link's writer yields first instead, to gather a larger batch.
//
// Dead peers are found by TCP keepalive (idle connections), by
// TCP_USER_TIMEOUT on Linux (unacknowledged data) and by progress
// deadlines: every write chunk and every read inside a frame must complete
// within IOTimeout. An idle connection has no read deadline; heartbeats
// are zab's (PING), not the transport's.
//
// # Shutdown
//
// Every goroutine (accept loops, dial loops, handshakes, readers, writers)
// belongs to the transport and stops when its context is done or Close is
// called; Close waits for all of them, then closes Recv's channel.
//
// # What the server must still carry
//
// The transport carries zab.Message only. The server's own traffic between
// servers (request forwarding from followers, session touches) will need
// either a message kind of its own in the frame body (the codec's leading
// version byte leaves room) or another Transport.
package transport
