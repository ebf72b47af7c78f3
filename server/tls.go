package server

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/zktls"
	"github.com/corral-db/corral/wire"
)

// listenMode is what a client listener speaks.
type listenMode int

const (
	modePlain   listenMode = iota // clientPort
	modeTLS                       // secureClientPort
	modeUnified                   // clientPort with client.portUnification: either, by the first byte
)

func (m listenMode) String() string {
	switch m {
	case modeTLS:
		return "tls"
	case modeUnified:
		return "plaintext+tls"
	}
	return "plaintext"
}

// clientListener is one client port.
type clientListener struct {
	ln   net.Listener
	mode listenMode
}

// tlsRecordHandshake is the first byte of every TLS connection (a
// handshake record). A ZooKeeper frame starts with its length's top byte,
// which is 0 below 16 MiB; a four-letter word starts with a letter.
const tlsRecordHandshake = 0x16

// handshakeTimeout bounds a TLS handshake on a client port.
const handshakeTimeout = 10 * time.Second

// secure runs the TLS side of a new connection on a TLS or unified port:
// port unification's sniffing, the handshake, and the x509 provider's ids
// for the client certificate. It returns the connection to serve (nc
// itself for a plaintext client) and the ids to add to the connection's
// ip id.
func (s *Server) secure(ctx context.Context, nc net.Conn, mode listenMode) (net.Conn, []wire.Id, error) {
	if mode == modePlain {
		return nc, nil, nil
	}
	if mode == modeUnified {
		_ = nc.SetReadDeadline(time.Now().Add(s.opts.HandshakeDetectionTimeout))
		stop := context.AfterFunc(ctx, func() { _ = nc.SetReadDeadline(time.Now()) })
		var first [1]byte
		_, err := io.ReadFull(nc, first[:])
		if !stop() || err != nil {
			return nil, nil, fmt.Errorf("port unification: no first byte: %w", cmp.Or(err, ctx.Err()))
		}
		_ = nc.SetReadDeadline(time.Time{})
		pc := &prefixConn{Conn: nc, prefix: first[:]}
		if first[0] != tlsRecordHandshake {
			return pc, nil, nil
		}
		nc = pc
	}
	tc := tls.Server(nc, s.opts.TLS)
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		s.stats.authFail.Add(1)
		return nil, nil, fmt.Errorf("TLS handshake: %w", err)
	}
	ids, err := s.x509IDs(tc.ConnectionState())
	if err != nil {
		s.stats.authFail.Add(1)
		return nil, nil, err
	}
	return &tlsConn{Conn: tc, tcp: nc}, ids, nil
}

// tlsConn is a served TLS connection. Closing it closes the TCP
// connection at once: tls.Conn.Close would first send a close_notify
// alert, which can wait up to 5 s on a client that stopped reading, and
// the server closes connections while holding connMu.
type tlsConn struct {
	*tls.Conn
	tcp net.Conn
}

func (c *tlsConn) Close() error { return c.tcp.Close() }

// x509IDs is X509AuthenticationProvider.handleAuthentication for a
// verified client certificate: x509:<subject>, and super when the subject
// is X509AuthenticationProvider.superUser. A client without a certificate
// (clientAuth=want or none) gets no ids, as in ZooKeeper.
func (s *Server) x509IDs(cs tls.ConnectionState) ([]wire.Id, error) {
	if len(cs.PeerCertificates) == 0 {
		return nil, nil
	}
	name, err := zktls.PrincipalName(cs.PeerCertificates[0])
	if err != nil {
		return nil, fmt.Errorf("x509: client certificate: %w", err)
	}
	var ids []wire.Id
	if s.opts.X509SuperUser != "" && name == s.opts.X509SuperUser {
		ids = append(ids, wire.Id{Scheme: datatree.SchemeSuper, ID: name})
	}
	return append(ids, wire.Id{Scheme: datatree.SchemeX509, ID: name}), nil
}

// prefixConn gives back the bytes port unification read before deciding.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// SyscallConn lets a plaintext client on a unified port keep the direct
// write path (conn.tryWrite): only reads go through the prefix.
func (c *prefixConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, syscall.EINVAL
}
