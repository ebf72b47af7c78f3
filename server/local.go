package server

import (
	"context"
	"errors"
	"net"
)

// DialLocal returns a client connection to s that does not leave the
// process: one end of an in-memory pipe (net.Pipe) whose other end s
// serves as it serves a connection accepted on its client port. A
// component of the same process that is a ZooKeeper client of its own
// member (the replicated-log API, rlog/zklogs) dials this instead of the
// loopback port: the same protocol, the same session and ACL rules, with
// no sockets, system calls or kernel copies between the two. Both ends
// report the loopback address, so the connection authenticates as ip
// 127.0.0.1 and counts toward that address's maxClientCnxns, as a
// loopback connection does.
//
// It fails once s is shutting down, or before Serve has started.
func (s *Server) DialLocal(ctx context.Context) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.connMu.Lock()
	sctx := s.ctx
	if sctx == nil || sctx.Err() != nil {
		s.connMu.Unlock()
		return nil, errors.New("server: not serving")
	}
	// Added under connMu: Serve's shutdown cancels its context before it
	// takes connMu to close the connections and then waits for wg, so
	// this Add happens before that Wait, or the check above fails.
	s.wg.Add(1)
	s.connMu.Unlock()
	cli, srv := net.Pipe()
	c := s.newConn(localConn{srv}, nil)
	if c == nil {
		s.wg.Done()
		srv.Close()
		cli.Close()
		return nil, errors.New("server: too many connections from 127.0.0.1 (maxClientCnxns)")
	}
	go func() {
		defer s.wg.Done()
		c.serve(sctx)
	}()
	return localConn{cli}, nil
}

// loopbackAddr is the address both ends of a local connection report.
var loopbackAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}

// localConn is one end of a DialLocal pipe.
type localConn struct{ net.Conn }

func (localConn) LocalAddr() net.Addr  { return loopbackAddr }
func (localConn) RemoteAddr() net.Addr { return loopbackAddr }
