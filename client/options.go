package client

import (
	"context"
	"crypto/tls"
	"log/slog"
	"math/rand/v2"
	"net"
	"time"
)

// DialFunc opens a connection to one server address ("host:port"). It has
// the signature of (*net.Dialer).DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Option configures Connect.
type Option func(*config)

type credential struct {
	scheme string
	auth   []byte
}

type config struct {
	sessionTimeout time.Duration
	logger         *slog.Logger
	dial           DialFunc
	creds          []credential
	maxBuffer      int
	eventCallback  func(Event)
	eventBuffer    int
	watcherBuffer  int
	maxInFlight    int
	chroot         string
	rand           *rand.Rand
	tls            *tls.Config
}

// Defaults. The frame limit matches the Java client's 4 MiB default
// rather than the server's 1 MiB jute.maxbuffer: a reply (getChildren of
// a large node, getData of a maximal one) may exceed what a request may.
const (
	DefaultSessionTimeout = 30 * time.Second
	DefaultMaxBufferSize  = 4 << 20
	DefaultEventBuffer    = 16
	DefaultWatcherBuffer  = 256
	DefaultMaxInFlight    = 16 << 10
)

func defaultConfig() config {
	return config{
		sessionTimeout: DefaultSessionTimeout,
		maxBuffer:      DefaultMaxBufferSize,
		eventBuffer:    DefaultEventBuffer,
		watcherBuffer:  DefaultWatcherBuffer,
		maxInFlight:    DefaultMaxInFlight,
	}
}

// SessionTimeout is the timeout requested from the server; the server
// clamps it (ZooKeeper: to [2, 20] ticks) and the negotiated value drives
// heartbeats and failure detection.
func SessionTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.sessionTimeout = d
		}
	}
}

// Logger receives the client's diagnostics (connection attempts, drops,
// protocol errors). The default discards them.
func Logger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// Dialer replaces net.Dialer for opening server connections (tests use it
// to cut and heal the network).
func Dialer(d DialFunc) Option { return func(c *config) { c.dial = d } }

// AuthDigest adds the credential user:password for the digest scheme. It
// is sent on every connection before any request; if the server refuses
// it, Connect fails (or, on a later reconnect, the Conn dies) with
// ErrAuthFailed.
func AuthDigest(user, password string) Option {
	return Auth("digest", []byte(user+":"+password))
}

// Auth adds a credential of any scheme, sent like AuthDigest's.
func Auth(scheme string, auth []byte) Option {
	return func(c *config) {
		c.creds = append(c.creds, credential{scheme, append([]byte(nil), auth...)})
	}
}

// MaxBufferSize bounds the size of one frame from the server; a larger
// frame drops the connection (its requests fail with ErrConnectionLoss).
func MaxBufferSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBuffer = n
		}
	}
}

// EventCallback is called with every session event, in order, from the
// client's session goroutine. It must return quickly and must neither
// wait for a reply from this Conn nor call Close (the goroutine that
// would reconnect or close is the one running it); hand such work to
// another goroutine. Unlike the Events channel it never drops an event.
func EventCallback(f func(Event)) Option { return func(c *config) { c.eventCallback = f } }

// EventBuffer is the capacity of the Events channel (default 16).
func EventBuffer(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.eventBuffer = n
		}
	}
}

// WatcherBuffer is the channel capacity of each persistent Watcher
// (default 256). See Watcher for what happens when it fills.
func WatcherBuffer(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.watcherBuffer = n
		}
	}
}

// MaxInFlight bounds the requests queued or awaiting a reply on the Conn
// (default 16384); a call beyond it blocks until one completes (blocking
// calls until their context ends). It bounds the client's memory, not the
// server's work.
func MaxInFlight(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxInFlight = n
		}
	}
}

// Chroot roots every path of the Conn at path, as a "/chroot" suffix of
// the server list does; it takes precedence over that suffix.
func Chroot(path string) Option { return func(c *config) { c.chroot = path } }

// TLS makes every connection TLS, as ZooKeeper's Java client does with
// zookeeper.client.secure=true: the server's secureClientPort (or a port
// with client.portUnification). cfg's ServerName, if empty, is set to each
// server's host, which the server's certificate must then name (unless
// cfg verifies otherwise, see internal/zktls). A client certificate in
// cfg authenticates the session as x509:<subject> on the server.
func TLS(cfg *tls.Config) Option { return func(c *config) { c.tls = cfg } }

// Rand is the source used to shuffle the server list (default: seeded
// from the clock). Tests pass a seeded one for a fixed order.
func Rand(r *rand.Rand) Option { return func(c *config) { c.rand = r } }
