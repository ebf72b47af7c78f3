package kv

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	kvpb "github.com/corral-db/corral/api/kv/v1"
)

// Forwarder reaches the leader of an RG for server-side forwarding.
type Forwarder interface {
	// LeaderClient is a client of RG g's leader as this node knows it
	// (its local replica's view, else the CM's record).
	LeaderClient(g uint32) (kvpb.KVClient, error)
}

// wantsForward: the caller asked for forwarding and this is not already
// a forwarded request.
func wantsForward(ctx context.Context) bool {
	md, ok := metadata.FromIncomingContext(ctx)
	return ok && len(md.Get(kvpb.ForwardHeader)) > 0 && len(md.Get(kvpb.ForwardedHeader)) == 0
}

// rowCall serves a request about row: locally when the owning RG is here
// and this replica leads it, else, if the caller asked for forwarding,
// on the RG's leader (one hop), else with the routing error.
func rowCall[Req, Resp any](s *ShardedService, ctx context.Context, row []byte, req Req,
	local func(*Service, context.Context, Req) (Resp, error),
	remote func(kvpb.KVClient, context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	var zero Resp
	svc, err := s.owner(row)
	var g uint32
	switch {
	case err == nil:
		if self, _ := svc.group.Leader(); self || s.fwd == nil || !wantsForward(ctx) {
			return local(svc, ctx, req)
		}
		g = svc.gid
	default:
		var wr *WrongRangeError
		if !errors.As(err, &wr) || s.fwd == nil || !wantsForward(ctx) {
			return zero, toStatus(err)
		}
		g = wr.Group
	}
	kc, ferr := s.fwd.LeaderClient(g)
	if ferr != nil {
		if svc != nil {
			return local(svc, ctx, req) // answers NotLeader
		}
		return zero, toStatus(err)
	}
	return remote(kc, metadata.AppendToOutgoingContext(ctx, kvpb.ForwardedHeader, "1"), req)
}
