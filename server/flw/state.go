package flw

import "time"

// State is what the four-letter words print: a snapshot the server takes
// when a word arrives. Render only reads it. Each field notes the words
// that use it; a word that does not need a field ignores it, so the server
// may fill only what the word at hand prints.
type State struct {
	// Version is the full version string printed by srvr, stat, envi and
	// mntr, e.g. "3.9.3-corral-0.1.0, built on 2026-11-22 02:00 UTC".
	Version string
	// Mode is srvr's "Mode:" value and mntr's zk_server_state:
	// standalone, leader, follower, observer or read-only. "leader" adds
	// the "Proposal sizes" line to srvr and stat.
	Mode string
	// Serving false makes every word except ruok, isro, envi, gtmk and stmk
	// print "This ZooKeeper instance is not currently serving requests"
	// (isro prints "null").
	Serving bool
	// Recovering is corral's own state: a diskless ensemble member
	// restarted from a partial snapshot that waits for a synchronized
	// leader. Not serving, srvr and mntr still answer for it: srvr the
	// "not serving" line followed by a Recovering line, Zxid and Mode;
	// mntr its metrics (the server adds zk_recovering).
	Recovering bool
	// ReadOnly: isro prints "ro" instead of "rw", and srvr/stat add the
	// "READ-ONLY mode; serving only read-only clients" line.
	ReadOnly bool

	// srvr/stat: request latency in ms. LatencyAvg is rounded to four
	// places as ZooKeeper does (see RoundAvg) before printing, so either
	// the raw or the rounded average may be passed.
	LatencyMin  int64
	LatencyAvg  float64
	LatencyMax  int64
	Received    int64 // packets received (srvr "Received:")
	Sent        int64 // packets sent (srvr "Sent:")
	Outstanding int64 // queued requests (srvr "Outstanding:")
	Zxid        int64 // last processed zxid
	// NodeCount is srvr's "Node count:". ZooKeeper's tree keeps an alias
	// for the root, so it must already include it (a fresh server has 5).
	NodeCount int
	// ProposalSizes is the leader's last/min/max proposal size; nil on a
	// leader that has proposed nothing prints ZooKeeper's -1/-1/-1.
	ProposalSizes *[3]int64

	// Connections lists client connections, including the one asking
	// (ZooKeeper lists it too). stat prints the short form, cons the long
	// form; srvr prints only their number.
	Connections []ConnInfo

	// Watches feeds wchs, wchc and wchp.
	Watches WatchInfo

	// dump: sessions with their ephemeral paths (a session whose
	// ephemerals were all deleted stays, with no paths, as in ZooKeeper),
	// session expiry buckets and connection expiry buckets. Buckets are
	// printed in ExpireAt order; empty buckets are printed too.
	Ephemerals         map[int64][]string
	SessionExpiries    []SessionExpiry
	ConnectionExpiries []ConnExpiry
	// SessionCount is informational: dump's "Session Sets (N)/(M)" counts
	// are derived from SessionExpiries, as ZooKeeper's are from its queue.
	SessionCount int
	// Location is the time zone dump's dates are printed in (Java's
	// default zone); nil means UTC.
	Location *time.Location

	// Config is conf's key=value lines, in order. A KV with an empty Key
	// writes Value verbatim with no newline added: quorum servers end conf
	// with "membership: \n" and the verifier's text, whose last line
	// ("version=...") has no newline.
	Config []KV
	Env    []KV // envi lines after "Environment:", in order (see DefaultEnv)

	DataDirSize, LogDirSize int64 // dirs

	Metrics []Metric      // mntr lines, in order
	Digest  []DigestEntry // hash lines, in order

	// TraceMask is what gtmk prints. For stmk the server first applies the
	// 8-byte mask that follows the word, sets TraceMask to it, and renders;
	// stmk prints the mask it was given. ZooKeeper's default is 306.
	TraceMask int64
}

// ConnInfo is one client connection as stat and cons print it.
type ConnInfo struct {
	// Remote is the peer address as "ip:port" ("[::1]:port" for IPv6),
	// printed the way Java prints an InetSocketAddress ("/127.0.0.1:46824",
	// "/[0:0:0:0:0:0:0:1]:46824"). A value starting with "/" is printed as
	// given.
	Remote string
	// InterestOps is the NIO selection-key interest set: 0, or 1 (read),
	// 4 (write), 5; printed in hex.
	InterestOps int
	// Queued is the connection's outstanding requests; Received and Sent
	// its packet counters.
	Queued, Received, Sent int64

	// The session part of cons, printed when HasSession is set or
	// SessionID is nonzero (ZooKeeper's test is sessionId != 0).
	HasSession bool
	SessionID  int64
	// LastOp is the last request's mnemonic (CREA, GETD, PING, ... or NA
	// after a reset).
	LastOp string
	// Established is when the session was established, epoch ms.
	Established int64
	// Timeout is the negotiated session timeout, ms.
	Timeout int32
	// LastCxid is printed only when >= 0; ZooKeeper resets it to -1.
	LastCxid int64
	// LastZxid is printed as unsigned hex; -1 (after a reset) prints
	// 0xffffffffffffffff, as ZooKeeper does.
	LastZxid int64
	// LastResponse is the server's monotonic clock (ms) at the last
	// response, not epoch time.
	LastResponse int64
	// Latencies in integer ms; ZooKeeper prints MinLatency 0 when there
	// were no requests and AvgLatency as total/count in integer division.
	LastLatency, MinLatency, AvgLatency, MaxLatency int64
}

// WatchInfo describes the data and exist watches (ZooKeeper's wchs, wchc
// and wchp do not cover child watches).
type WatchInfo struct {
	// BySession maps a session to the paths it watches. wchc prints
	// sessions in ascending order and paths in the order given; wchp
	// prints paths in ascending order and, under each, sessions in
	// ascending order.
	BySession map[int64][]string
	// Connections, Paths and Total are wchs's counts: connections with at
	// least one watch, distinct watched paths, and watches. If all three
	// are zero they are derived from BySession.
	Connections int
	Paths       int
	Total       int
}

// SessionExpiry is one bucket of the session tracker's expiry queue.
type SessionExpiry struct {
	ExpireAt int64 // epoch ms
	Sessions []int64
}

// ConnExpiry is one bucket of the connection factory's expiry queue
// (dump's "Connections dump").
type ConnExpiry struct {
	ExpireAt int64 // epoch ms
	Conns    []ConnRef
}

// ConnRef names a connection in dump: its remote address (as in ConnInfo)
// and its session, 0 if it has none.
type ConnRef struct {
	Remote    string
	SessionID int64
}

// KV is one key=value line of conf or envi.
type KV struct{ Key, Value string }

// Metric is one mntr line. Name has no "zk_" prefix. Value may be any
// integer type (printed as an integer), float32 or float64 (printed as a
// Java double, e.g. 0.0 or 8.5294), a string (verbatim), nil ("null") or
// anything else (fmt's %v).
type Metric struct {
	Name  string
	Value any
}

// DigestEntry is one line of hash: a zxid and the tree digest after it.
// ZooKeeper keeps the digest as a Java long, so it prints as a signed
// decimal.
type DigestEntry struct {
	Zxid   int64
	Digest uint64
}
