package apisrv

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// Options bound what one server accepts.
type Options struct {
	// MaxRecvMsgSize is the largest request accepted (default 4 MiB,
	// above the key-value store's 1 MiB mutation limit so an oversized
	// mutation gets the store's clear error rather than gRPC's).
	MaxRecvMsgSize int
	// MaxConcurrentStreams bounds the calls in flight on one connection
	// (default 1024).
	MaxConcurrentStreams uint32
	// StreamWorkers is how many goroutines serve calls (default 64): a
	// call runs on an idle worker, whose stack has already grown to what
	// a call needs, or on a new goroutine when every worker is busy.
	StreamWorkers uint32
	// UnaryInterceptors wrap every unary call, the first outermost
	// (metrics, for one).
	UnaryInterceptors []grpc.UnaryServerInterceptor
	// StopGrace is how long Serve waits, when its context ends, for calls
	// in flight before it cuts them (default 5 s).
	StopGrace time.Duration
}

// Server is one gRPC listener and the services registered on it.
type Server struct {
	lis   net.Listener
	grpc  *grpc.Server
	grace time.Duration
}

// Listen opens addr ("host:port"; port 0 picks one) and makes the server.
// Register services with Registrar, then call Serve.
func Listen(addr string, o Options) (*Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("apisrv: listen %s: %w", addr, err)
	}
	return newServer(lis, o)
}

func newServer(lis net.Listener, o Options) (*Server, error) {
	if o.MaxRecvMsgSize == 0 {
		o.MaxRecvMsgSize = 4 << 20
	}
	if o.MaxConcurrentStreams == 0 {
		o.MaxConcurrentStreams = 1024
	}
	if o.StopGrace == 0 {
		o.StopGrace = 5 * time.Second
	}
	if o.StreamWorkers == 0 {
		o.StreamWorkers = 64
	}
	g := grpc.NewServer(
		grpc.MaxRecvMsgSize(o.MaxRecvMsgSize),
		grpc.MaxConcurrentStreams(o.MaxConcurrentStreams),
		grpc.NumStreamWorkers(o.StreamWorkers),
		grpc.ChainUnaryInterceptor(o.UnaryInterceptors...),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
		grpc.ForceServerCodecV2(codec{}),
	)
	return &Server{lis: lis, grpc: g, grace: o.StopGrace}, nil
}

// Registrar is where services register, before Serve.
func (s *Server) Registrar() grpc.ServiceRegistrar { return s.grpc }

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// Serve serves until ctx ends, then stops gracefully (cutting the calls
// still running after the grace period) and returns nil; it returns an
// error if the listener fails first.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.grpc.Serve(s.lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(stopped)
	}()
	t := time.NewTimer(s.grace)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
		s.grpc.Stop()
		<-stopped
	}
	<-errc
	return nil
}

// FromListener makes a server on a listener the caller opened (a test on
// port 0, or a member that listens before it knows its services).
func FromListener(lis net.Listener, o Options) *Server {
	s, _ := newServer(lis, o)
	return s
}
