package kv

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"

	kvpb "github.com/corral-db/corral/api/kv/v1"
)

// Service is the gRPC KV service of one member: writes go through the
// Group, reads are served from the Store once the Group confirms this
// member still leads. Errors become status codes in status.go only.
type Service struct {
	kvpb.UnimplementedKVServer
	store *Store
	group Group
	// gid is the RG's id in a sharded cluster (0 otherwise), named in
	// NotLeader answers.
	gid uint32
	// inflight bounds the writes waiting on this member; a full semaphore
	// makes callers wait (until their deadline), which pushes back.
	inflight chan struct{}
}

// MaxInflightWrites bounds the writes one member has proposed and not
// yet answered.
const MaxInflightWrites = 4096

// NewService serves store through group.
func NewService(store *Store, group Group) *Service {
	return &Service{store: store, group: group, inflight: make(chan struct{}, MaxInflightWrites)}
}

func newReqID() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	if id := binary.BigEndian.Uint64(b[:]); id != 0 {
		return id
	}
	return 1
}

// NewGroupService serves store through group as RG gid of a sharded
// cluster: its NotLeader answers name gid.
func NewGroupService(store *Store, group Group, gid uint32) *Service {
	s := NewService(store, group)
	s.gid = gid
	return s
}

// notLeader is this RG's NotLeader answer.
func (s *Service) notLeader(l LeaderInfo) error { return &NotLeaderError{Leader: l, Group: s.gid} }

// write proposes m and returns its applied result.
func (s *Service) write(ctx context.Context, m *Mutation) (Result, error) {
	if self, l := s.group.Leader(); !self {
		return Result{}, s.notLeader(l)
	}
	w, err := s.prepare(ctx, m, true)
	if err != nil {
		return Result{}, err
	}
	return s.finish(ctx, w, s.group.Propose(ctx, w.data))
}

// pendingWrite is a write about to be proposed: its entry, where its
// result arrives, and what to release once it is answered.
type pendingWrite struct {
	data    []byte
	ch      <-chan Result
	release func()
}

// errInflightFull is prepare's answer, when it may not wait, to a full
// in-flight bound.
var errInflightFull = errors.New("kv: in-flight writes at their bound")

// prepare encodes m with a new request id, takes a slot of the
// in-flight bound (waiting until ctx ends if wait, else failing with
// errInflightFull) and registers for its result, before it is proposed.
func (s *Service) prepare(ctx context.Context, m *Mutation, wait bool) (pendingWrite, error) {
	m.ReqID = newReqID()
	data, err := m.Encode()
	if err != nil {
		return pendingWrite{}, err
	}
	if wait {
		select {
		case s.inflight <- struct{}{}:
		case <-ctx.Done():
			return pendingWrite{}, ctx.Err()
		}
	} else {
		select {
		case s.inflight <- struct{}{}:
		default:
			return pendingWrite{}, errInflightFull
		}
	}
	ch, cancel := s.store.Await(m.ReqID)
	return pendingWrite{data: data, ch: ch, release: func() { cancel(); <-s.inflight }}, nil
}

// finish returns w's applied result, given perr, what proposing it
// returned.
func (s *Service) finish(ctx context.Context, w pendingWrite, perr error) (Result, error) {
	defer w.release()
	if perr != nil {
		var nl *NotLeaderError
		if errors.As(perr, &nl) {
			nl.Group = s.gid
		}
		return Result{}, perr
	}
	select {
	case r := <-w.ch:
		return r, r.Err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// withRequestID sets m's request id (deduplication) from a request's.
func withRequestID(m *Mutation, id *kvpb.RequestId) *Mutation {
	m.Client, m.Seq = id.GetClient(), id.GetSequence()
	return m
}

// read confirms leadership before a read.
func (s *Service) read(ctx context.Context) error {
	if self, l := s.group.Leader(); !self {
		return s.notLeader(l)
	}
	err := s.group.ConfirmLeadership(ctx)
	var nl *NotLeaderError
	if errors.As(err, &nl) {
		nl.Group = s.gid
	}
	return err
}

func (s *Service) CreateTable(ctx context.Context, req *kvpb.CreateTableRequest) (*kvpb.CreateTableResponse, error) {
	m := &Mutation{Op: OpCreateTable, Table: req.GetTable()}
	for _, f := range req.GetFamilies() {
		m.Families = append(m.Families, FamilySpec{Name: f.GetName(), MaxVersions: f.GetMaxVersions()})
	}
	r, err := s.write(ctx, withRequestID(m, req.GetRequestId()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &kvpb.CreateTableResponse{Zxid: uint64(r.Zxid)}, nil
}

func (s *Service) DropTable(ctx context.Context, req *kvpb.DropTableRequest) (*kvpb.DropTableResponse, error) {
	r, err := s.write(ctx, withRequestID(&Mutation{Op: OpDropTable, Table: req.GetTable()}, req.GetRequestId()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &kvpb.DropTableResponse{Zxid: uint64(r.Zxid)}, nil
}

func (s *Service) ListTables(ctx context.Context, _ *kvpb.ListTablesRequest) (*kvpb.ListTablesResponse, error) {
	if err := s.read(ctx); err != nil {
		return nil, toStatus(err)
	}
	resp := &kvpb.ListTablesResponse{}
	for _, t := range s.store.Tables() {
		ti := &kvpb.TableInfo{Name: t.Name}
		for _, f := range t.Families {
			ti.Families = append(ti.Families, &kvpb.Family{Name: f.Name, MaxVersions: f.MaxVersions})
		}
		resp.Tables = append(resp.Tables, ti)
	}
	return resp, nil
}

func cellsFrom(cs []*kvpb.Cell) []Cell {
	out := make([]Cell, len(cs))
	for i, c := range cs {
		out[i] = Cell{Family: c.GetFamily(), Qualifier: c.GetQualifier(), Value: c.GetValue()}
	}
	return out
}

func (s *Service) Put(ctx context.Context, req *kvpb.PutRequest) (*kvpb.PutResponse, error) {
	r, err := s.write(ctx, putMutation(req))
	if err != nil {
		return nil, toStatus(err)
	}
	return &kvpb.PutResponse{Version: r.CellVersion()}, nil
}

func putMutation(req *kvpb.PutRequest) *Mutation {
	return withRequestID(&Mutation{Op: OpPut, Table: req.GetTable(), Row: req.GetRow(), Cells: cellsFrom(req.GetCells())}, req.GetRequestId())
}

func deleteFrom(family string, qual []byte, hasQual bool) Delete {
	switch {
	case family == "":
		return Delete{Scope: ScopeRow}
	case !hasQual:
		return Delete{Scope: ScopeFamily, Family: family}
	default:
		return Delete{Scope: ScopeColumn, Family: family, Qualifier: qual}
	}
}

func (s *Service) Delete(ctx context.Context, req *kvpb.DeleteRequest) (*kvpb.DeleteResponse, error) {
	if req.GetFamily() == "" && req.Qualifier != nil {
		return nil, toStatus(invalidf("a qualifier without a family"))
	}
	m := &Mutation{Op: OpDelete, Table: req.GetTable(), Row: req.GetRow(), Delete: deleteFrom(req.GetFamily(), req.GetQualifier(), req.Qualifier != nil)}
	r, err := s.write(ctx, withRequestID(m, req.GetRequestId()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &kvpb.DeleteResponse{Zxid: uint64(r.Zxid)}, nil
}

func condFrom(c *kvpb.Condition) (Condition, error) {
	if c == nil {
		return Condition{}, invalidf("no condition")
	}
	return Condition{Family: c.GetFamily(), Qualifier: c.GetQualifier(), Absent: c.GetAbsent(), Value: c.GetValue()}, nil
}

func (s *Service) CheckAndPut(ctx context.Context, req *kvpb.CheckAndPutRequest) (*kvpb.CheckAndPutResponse, error) {
	cond, err := condFrom(req.GetCondition())
	if err != nil {
		return nil, toStatus(err)
	}
	r, err := s.write(ctx, withRequestID(&Mutation{Op: OpCheckAndPut, Table: req.GetTable(), Row: req.GetRow(), Cells: cellsFrom(req.GetCells()), Cond: cond}, req.GetRequestId()))
	if err != nil {
		return nil, toStatus(err)
	}
	resp := &kvpb.CheckAndPutResponse{Succeeded: r.Succeeded}
	if r.Succeeded {
		resp.Version = r.CellVersion()
	}
	return resp, nil
}

func (s *Service) CheckAndDelete(ctx context.Context, req *kvpb.CheckAndDeleteRequest) (*kvpb.CheckAndDeleteResponse, error) {
	cond, err := condFrom(req.GetCondition())
	if err != nil {
		return nil, toStatus(err)
	}
	if req.GetFamily() == "" && req.Qualifier != nil {
		return nil, toStatus(invalidf("a qualifier without a family"))
	}
	m := &Mutation{Op: OpCheckAndDelete, Table: req.GetTable(), Row: req.GetRow(), Cond: cond, Delete: deleteFrom(req.GetFamily(), req.GetQualifier(), req.Qualifier != nil)}
	r, err := s.write(ctx, withRequestID(m, req.GetRequestId()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &kvpb.CheckAndDeleteResponse{Succeeded: r.Succeeded}, nil
}

func readOptionsFrom(o *kvpb.ReadOptions) (ReadOptions, error) {
	ro := ReadOptions{
		MaxVersions:   int(o.GetMaxVersions()),
		AsOf:          o.GetAsOf(),
		QualifierFrom: o.GetQualifierFrom(),
		QualifierTo:   o.GetQualifierTo(),
		CellLimit:     int(o.GetCellLimit()),
	}
	if o.GetMaxVersions() > MaxVersionsKept {
		return ro, invalidf("max versions %d exceeds %d", o.GetMaxVersions(), MaxVersionsKept)
	}
	for _, c := range o.GetColumns() {
		ro.Columns = append(ro.Columns, Column{Family: c.GetFamily(), Qualifier: c.GetQualifier(), HasQualifier: c.Qualifier != nil})
	}
	return ro, nil
}

func cellsTo(cs []CellVersion) []*kvpb.Cell {
	out := make([]*kvpb.Cell, len(cs))
	slab := make([]kvpb.Cell, len(cs)) // one allocation for a row's cells
	for i, c := range cs {
		p := &slab[i]
		p.Family, p.Qualifier, p.Value, p.Version = c.Family, c.Qualifier, c.Value, c.Version
		out[i] = p
	}
	return out
}

func rowsTo(rs []Row) []*kvpb.Row {
	out := make([]*kvpb.Row, len(rs))
	for i, r := range rs {
		out[i] = &kvpb.Row{Key: r.Key, Cells: cellsTo(r.Cells)}
	}
	return out
}

func (s *Service) Get(ctx context.Context, req *kvpb.GetRequest) (*kvpb.GetResponse, error) {
	ro, err := readOptionsFrom(req.GetOptions())
	if err != nil {
		return nil, toStatus(err)
	}
	if err := s.read(ctx); err != nil {
		return nil, toStatus(err)
	}
	cells, err := s.store.Get(req.GetTable(), req.GetRow(), ro)
	if err != nil {
		return nil, toStatus(err)
	}
	return &kvpb.GetResponse{Cells: cellsTo(cells)}, nil
}

func (s *Service) MultiGet(ctx context.Context, req *kvpb.MultiGetRequest) (*kvpb.MultiGetResponse, error) {
	ro, err := readOptionsFrom(req.GetOptions())
	if err != nil {
		return nil, toStatus(err)
	}
	if err := s.read(ctx); err != nil {
		return nil, toStatus(err)
	}
	rows, err := s.store.MultiGet(req.GetTable(), req.GetRows(), ro)
	if err != nil {
		return nil, toStatus(err)
	}
	return &kvpb.MultiGetResponse{Rows: rowsTo(rows)}, nil
}

func (s *Service) Scan(ctx context.Context, req *kvpb.ScanRequest) (*kvpb.ScanResponse, error) {
	return s.scan(ctx, req, nil)
}

// scan serves a scan returning only the rows keep accepts (nil: all).
func (s *Service) scan(ctx context.Context, req *kvpb.ScanRequest, keep func(row []byte) bool) (*kvpb.ScanResponse, error) {
	ro, err := readOptionsFrom(req.GetOptions())
	if err != nil {
		return nil, toStatus(err)
	}
	if err := s.read(ctx); err != nil {
		return nil, toStatus(err)
	}
	rows, err := s.store.ScanRows(req.GetTable(), req.GetFrom(), req.GetTo(), int(req.GetLimit()), ro, keep)
	if err != nil {
		return nil, toStatus(err)
	}
	return &kvpb.ScanResponse{Rows: rowsTo(rows)}, nil
}

var _ kvpb.KVServer = (*Service)(nil)

// String names the service in logs.
func (s *Service) String() string { return fmt.Sprintf("kv service (applied %v)", s.store.Applied()) }

// Cluster answers that this member is not part of a sharded cluster.
func (s *Service) Cluster(context.Context, *kvpb.ClusterRequest) (*kvpb.ClusterResponse, error) {
	return &kvpb.ClusterResponse{}, nil
}
