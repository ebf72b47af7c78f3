package kvserver

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/kv/ring"
)

// The range-move admin service a storage node serves beside the KV API:
// the mover (mover.go) drives each step on the leader of the RG it
// concerns. It is an internal, operator-only interface, so its messages
// are JSON inside a google.protobuf.BytesValue rather than a published
// proto; the KV API (api/kv/v1) is unchanged.
const (
	moveServiceName = "corral.kv.move.v1.RangeMove"
	moveStepMethod  = "/" + moveServiceName + "/Step"
	moveExportMeth  = "/" + moveServiceName + "/Export"
)

// stepRequest asks RG Group to propose one move operation.
type stepRequest struct {
	Group uint32    `json:"group"`
	Op    kv.Op     `json:"op"`
	Move  kv.MoveOp `json:"move"`
}

// exportRequest asks RG Group's leader for one page of a fenced range.
type exportRequest struct {
	Group    uint32     `json:"group"`
	Move     uint64     `json:"move"`
	Range    ring.Range `json:"range"`
	After    []byte     `json:"after,omitempty"`
	MaxBytes int        `json:"max_bytes,omitempty"`
}

// maxMoveMessage bounds a message of the service (an ingest of up to
// kv.MaxMutationLen, base64 in JSON).
const maxMoveMessage = 4 << 20

type moveServer struct {
	groups map[ring.GroupID]*kv.Service
}

func (s *moveServer) group(g uint32) (*kv.Service, error) {
	svc, ok := s.groups[ring.GroupID(g)]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no replica of rg%d on this node", g)
	}
	return svc, nil
}

func decodeJSON(in *wrapperspb.BytesValue, v any) error {
	if len(in.GetValue()) > maxMoveMessage {
		return status.Errorf(codes.InvalidArgument, "message of %d bytes", len(in.GetValue()))
	}
	if err := json.Unmarshal(in.GetValue(), v); err != nil {
		return status.Errorf(codes.InvalidArgument, "move request: %v", err)
	}
	return nil
}

func (s *moveServer) step(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	var req stepRequest
	if err := decodeJSON(in, &req); err != nil {
		return nil, err
	}
	svc, err := s.group(req.Group)
	if err != nil {
		return nil, err
	}
	mv := req.Move
	if err := svc.MoveStep(ctx, req.Op, &mv); err != nil {
		return nil, err
	}
	return &wrapperspb.BytesValue{}, nil
}

func (s *moveServer) export(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	var req exportRequest
	if err := decodeJSON(in, &req); err != nil {
		return nil, err
	}
	svc, err := s.group(req.Group)
	if err != nil {
		return nil, err
	}
	c, err := svc.ExportRange(ctx, req.Move, req.Range, req.After, req.MaxBytes)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &wrapperspb.BytesValue{Value: b}, nil
}

func unaryHandler(f func(*moveServer, context.Context, *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error), method string) func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
	return func(srv any, ctx context.Context, dec func(any) error, icp grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.BytesValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		s := srv.(*moveServer)
		if icp == nil {
			return f(s, ctx, in)
		}
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: method}
		return icp(ctx, in, info, func(ctx context.Context, req any) (any, error) {
			return f(s, ctx, req.(*wrapperspb.BytesValue))
		})
	}
}

var moveServiceDesc = grpc.ServiceDesc{
	ServiceName: moveServiceName,
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Step", Handler: unaryHandler((*moveServer).step, moveStepMethod)},
		{MethodName: "Export", Handler: unaryHandler((*moveServer).export, moveExportMeth)},
	},
	Metadata: "kv/kvserver/movesvc.go",
}

// registerMoveService serves the node's RGs' move steps on reg.
func registerMoveService(reg grpc.ServiceRegistrar, groups map[ring.GroupID]*kv.Service) {
	reg.RegisterService(&moveServiceDesc, &moveServer{groups: groups})
}

// moveClient calls a node's move service.
type moveClient struct{ cc grpc.ClientConnInterface }

func (c moveClient) step(ctx context.Context, req stepRequest) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return c.cc.Invoke(ctx, moveStepMethod, &wrapperspb.BytesValue{Value: b}, new(wrapperspb.BytesValue))
}

func (c moveClient) export(ctx context.Context, req exportRequest) (kv.MoveChunk, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return kv.MoveChunk{}, err
	}
	out := new(wrapperspb.BytesValue)
	if err := c.cc.Invoke(ctx, moveExportMeth, &wrapperspb.BytesValue{Value: b}, out, grpc.MaxCallRecvMsgSize(maxMoveMessage)); err != nil {
		return kv.MoveChunk{}, err
	}
	var chunk kv.MoveChunk
	if err := json.Unmarshal(out.GetValue(), &chunk); err != nil {
		return kv.MoveChunk{}, fmt.Errorf("kvserver: export page: %w", err)
	}
	return chunk, nil
}
