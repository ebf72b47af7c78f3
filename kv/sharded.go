package kv

import (
	"context"
	"slices"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/kv/ring"
)

// RingSource is where a node of a sharded cluster reads the ring it
// routes by: the configuration manager's, as a cm.View follows it. Ring
// returns nil until one is known.
type RingSource interface {
	Ring() *ring.Ring
}

// ClusterInfo is what a node of a sharded cluster tells clients about
// where its configuration lives.
type ClusterInfo struct {
	CMConnect string
	CMRoot    string
}

// ShardedService is the gRPC KV service of a storage node hosting
// replicas of several RGs. A request about a row goes to the local RG
// that owns the row under the node's ring; a request naming an RG (table
// operations, scans) to that RG. Without a local replica of that RG the
// answer is WrongRange (with the node's ring version); a local replica
// that does not lead answers NotLeader (its RG's leader and epoch).
// Clients route themselves (client-coordinated I/O); the node forwards
// nothing.
type ShardedService struct {
	kvpb.UnimplementedKVServer
	rs     RingSource
	fwd    Forwarder // nil: no server-side forwarding
	info   ClusterInfo
	groups map[ring.GroupID]*Service // fixed at construction
}

// NewShardedService serves the node's RGs (group id to its Service, made
// with NewGroupService) routing by rs. With fwd, row requests carrying
// kvpb.ForwardHeader that this node cannot serve are forwarded to the
// owning RG's leader.
func NewShardedService(rs RingSource, fwd Forwarder, info ClusterInfo, groups map[ring.GroupID]*Service) *ShardedService {
	return &ShardedService{rs: rs, fwd: fwd, info: info, groups: groups}
}

// owner is the local service of the RG that owns row.
func (s *ShardedService) owner(row []byte) (*Service, error) {
	r := s.rs.Ring()
	if r == nil {
		return nil, ErrNoRing
	}
	g := r.Owner(row)
	if svc, ok := s.groups[g]; ok {
		return svc, nil
	}
	return nil, &WrongRangeError{Group: uint32(g), RingVersion: r.Version()}
}

// named is the local service of RG g; 0 names the only RG of a node
// hosting one.
func (s *ShardedService) named(g uint32) (*Service, error) {
	if g == 0 {
		if len(s.groups) == 1 {
			for _, svc := range s.groups {
				return svc, nil
			}
		}
		return nil, invalidf("this node hosts %d replica groups: the request must name one", len(s.groups))
	}
	if svc, ok := s.groups[ring.GroupID(g)]; ok {
		return svc, nil
	}
	var v uint64
	if r := s.rs.Ring(); r != nil {
		v = r.Version()
	}
	return nil, &WrongRangeError{Group: g, RingVersion: v}
}

// groupCall serves a request naming an RG (a table operation, a scan)
// on this node's replica of that RG, or answers the routing error.
func groupCall[Req interface{ GetGroup() uint32 }, Resp any](s *ShardedService, ctx context.Context, req Req,
	call func(*Service, context.Context, Req) (Resp, error)) (Resp, error) {
	svc, err := s.named(req.GetGroup())
	if err != nil {
		var zero Resp
		return zero, toStatus(err)
	}
	return call(svc, ctx, req)
}

func (s *ShardedService) Cluster(context.Context, *kvpb.ClusterRequest) (*kvpb.ClusterResponse, error) {
	resp := &kvpb.ClusterResponse{CmConnect: s.info.CMConnect, CmRoot: s.info.CMRoot}
	if r := s.rs.Ring(); r != nil {
		resp.RingVersion = r.Version()
	}
	for g := range s.groups {
		resp.Groups = append(resp.Groups, uint32(g))
	}
	slices.Sort(resp.Groups)
	return resp, nil
}

func (s *ShardedService) CreateTable(ctx context.Context, req *kvpb.CreateTableRequest) (*kvpb.CreateTableResponse, error) {
	return groupCall(s, ctx, req, (*Service).CreateTable)
}

func (s *ShardedService) DropTable(ctx context.Context, req *kvpb.DropTableRequest) (*kvpb.DropTableResponse, error) {
	return groupCall(s, ctx, req, (*Service).DropTable)
}

func (s *ShardedService) ListTables(ctx context.Context, req *kvpb.ListTablesRequest) (*kvpb.ListTablesResponse, error) {
	return groupCall(s, ctx, req, (*Service).ListTables)
}

// Scan serves a scan of one RG, returning only the rows of ranges the RG
// owns in the ring the request names (ring_version; 0: every row the
// RG's store holds, an operator's view).
// Between a move's ingest and its drop a range's rows are in two RGs;
// the ring gives them to one, so a client that scans every RG under one
// ring version gets each row once. A node holding another ring version
// answers WrongRange with its own: the client waits for that ring, or
// retries this lagging node, as for a row request.
func (s *ShardedService) Scan(ctx context.Context, req *kvpb.ScanRequest) (*kvpb.ScanResponse, error) {
	svc, err := s.named(req.GetGroup())
	if err != nil {
		return nil, toStatus(err)
	}
	v := req.GetRingVersion()
	if v == 0 || svc.gid == 0 {
		return svc.Scan(ctx, req) // the RG's store as it is
	}
	r := s.rs.Ring()
	if r == nil {
		return nil, toStatus(ErrNoRing)
	}
	if v != r.Version() {
		return nil, toStatus(&WrongRangeError{Group: svc.gid, RingVersion: r.Version()})
	}
	g := ring.GroupID(svc.gid)
	return svc.scan(ctx, req, func(row []byte) bool { return r.Owner(row) == g })
}

func (s *ShardedService) Put(ctx context.Context, req *kvpb.PutRequest) (*kvpb.PutResponse, error) {
	return rowCall(s, ctx, req.GetRow(), req, (*Service).Put, kvpb.KVClient.Put)
}

func (s *ShardedService) Delete(ctx context.Context, req *kvpb.DeleteRequest) (*kvpb.DeleteResponse, error) {
	return rowCall(s, ctx, req.GetRow(), req, (*Service).Delete, kvpb.KVClient.Delete)
}

func (s *ShardedService) Get(ctx context.Context, req *kvpb.GetRequest) (*kvpb.GetResponse, error) {
	st := s.readStore(req.GetRow()) // moveexport.go
	resp, err := rowCall(s, ctx, req.GetRow(), req, (*Service).Get, kvpb.KVClient.Get)
	if err == nil {
		err = fencedRead(st, req.GetRow())
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (s *ShardedService) CheckAndPut(ctx context.Context, req *kvpb.CheckAndPutRequest) (*kvpb.CheckAndPutResponse, error) {
	return rowCall(s, ctx, req.GetRow(), req, (*Service).CheckAndPut, kvpb.KVClient.CheckAndPut)
}

func (s *ShardedService) CheckAndDelete(ctx context.Context, req *kvpb.CheckAndDeleteRequest) (*kvpb.CheckAndDeleteResponse, error) {
	return rowCall(s, ctx, req.GetRow(), req, (*Service).CheckAndDelete, kvpb.KVClient.CheckAndDelete)
}

// MultiGet serves rows of one RG: every row must be owned by the same
// RG (clients split a multi-get by RG), else the answer is WrongRange
// naming the owner of the first row that differs.
func (s *ShardedService) MultiGet(ctx context.Context, req *kvpb.MultiGetRequest) (*kvpb.MultiGetResponse, error) {
	rows := req.GetRows()
	if len(rows) == 0 {
		return &kvpb.MultiGetResponse{}, nil
	}
	svc, err := s.owner(rows[0])
	if err != nil {
		return nil, toStatus(err)
	}
	for _, row := range rows[1:] {
		other, err := s.owner(row)
		if err != nil {
			return nil, toStatus(err)
		}
		if other != svc {
			r := s.rs.Ring()
			return nil, toStatus(&WrongRangeError{Group: uint32(r.Owner(row)), RingVersion: r.Version()})
		}
	}
	resp, err := svc.MultiGet(ctx, req)
	if err == nil {
		err = fencedRead(svc.store, rows...) // moveexport.go
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

var _ kvpb.KVServer = (*ShardedService)(nil)
