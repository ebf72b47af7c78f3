package rlogsvc

import (
	"context"
	"time"

	rlogv1 "github.com/corral-db/corral/api/rlog/v1"
	"github.com/corral-db/corral/rlog"
	"google.golang.org/grpc"
)

// MaxWait bounds a read's long poll, whatever the request asks.
const MaxWait = 5 * time.Minute

// MaxReadBytes bounds one reply's bytes, whatever the request asks, well
// under gRPC's default 4 MiB message limit.
const MaxReadBytes = 1 << 20

func readMax(n int64) int64 {
	if n <= 0 || n > MaxReadBytes {
		return MaxReadBytes
	}
	return n
}

// Backend is what the service runs on: a logs-only member
// (rlog.Proposer, through New) or the logs in a ZooKeeper tree
// (rlog/zklogs, through NewBackend).
type Backend interface {
	// Do runs one mutation. A nil error with Result.Err set is the
	// operation's own failure (an *rlog.Error); an error returned means the
	// outcome is unknown or this server cannot serve it.
	Do(ctx context.Context, m rlog.Mutation) (rlog.Result, error)
	// Stat returns a log's positions.
	Stat(ctx context.Context, name string) (rlog.Stat, error)
	// Read returns up to max committed bytes from off; with wait, at the
	// committed end it waits for more until ctx ends (then no bytes and no
	// error) or the log is sealed or deleted.
	Read(ctx context.Context, name string, off, max int64, wait bool) (rlog.ReadResult, error)
}

// Service implements corral.rlog.v1.Logs.
type Service struct {
	rlogv1.UnimplementedLogsServer
	p Backend
}

// New returns the service over p.
func New(p rlog.Proposer) *Service { return &Service{p: proposer{p}} }

// NewBackend returns the service over b.
func NewBackend(b Backend) *Service { return &Service{p: b} }

// proposer is a Proposer as a Backend.
type proposer struct{ p rlog.Proposer }

func (p proposer) Do(ctx context.Context, m rlog.Mutation) (rlog.Result, error) {
	return p.p.Do(ctx, m)
}
func (p proposer) Stat(_ context.Context, name string) (rlog.Stat, error) {
	return p.p.State().Stat(name)
}
func (p proposer) Read(ctx context.Context, name string, off, max int64, wait bool) (rlog.ReadResult, error) {
	return p.p.State().Read(ctx, name, off, max, wait)
}

// Register mounts the service on r.
func (s *Service) Register(r grpc.ServiceRegistrar) { rlogv1.RegisterLogsServer(r, s) }

func statOf(st rlog.Stat) *rlogv1.LogStat {
	return &rlogv1.LogStat{Name: st.Name, Start: st.Start, End: st.End, Committed: st.Committed, Sealed: st.Sealed}
}

// do runs a mutation; the operation's own failure becomes the error.
func (s *Service) do(ctx context.Context, m rlog.Mutation) (rlog.Result, error) {
	res, err := s.p.Do(ctx, m)
	if err != nil {
		return res, toStatus(err)
	}
	if res.Err != nil {
		return res, toStatus(res.Err)
	}
	return res, nil
}

func (s *Service) CreateLog(ctx context.Context, req *rlogv1.CreateLogRequest) (*rlogv1.CreateLogResponse, error) {
	if _, err := s.do(ctx, rlog.Mutation{Op: rlog.OpCreate, Name: req.GetName()}); err != nil {
		return nil, err
	}
	st, err := s.p.Stat(ctx, req.GetName())
	if err != nil {
		return nil, toStatus(err)
	}
	return &rlogv1.CreateLogResponse{Stat: statOf(st)}, nil
}

func (s *Service) Append(ctx context.Context, req *rlogv1.AppendRequest) (*rlogv1.AppendResponse, error) {
	expect := int64(rlog.NoOffset)
	if req.ExpectedOffset != nil {
		expect = req.GetExpectedOffset()
	}
	res, err := s.do(ctx, rlog.NewAppendRequest(req.GetName(), expect, req.GetData()))
	if err != nil {
		return nil, err
	}
	return &rlogv1.AppendResponse{Offset: res.Offset}, nil
}

func (s *Service) Read(ctx context.Context, req *rlogv1.ReadRequest) (*rlogv1.ReadResponse, error) {
	wait := time.Duration(req.GetWaitMs()) * time.Millisecond
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, min(wait, MaxWait))
		defer cancel()
	}
	r, err := s.p.Read(ctx, req.GetName(), req.GetOffset(), readMax(req.GetMaxBytes()), wait > 0)
	if err != nil {
		return nil, toStatus(err)
	}
	return &rlogv1.ReadResponse{Data: r.Data, Next: r.Next, Stat: statOf(r.Stat)}, nil
}

func (s *Service) Tail(req *rlogv1.TailRequest, stream grpc.ServerStreamingServer[rlogv1.ReadResponse]) error {
	ctx := stream.Context()
	off := req.GetOffset()
	for ctx.Err() == nil {
		r, err := s.p.Read(ctx, req.GetName(), off, readMax(req.GetMaxBytes()), true)
		if err != nil {
			return toStatus(err)
		}
		if len(r.Data) > 0 {
			if err := stream.Send(&rlogv1.ReadResponse{Data: r.Data, Next: r.Next, Stat: statOf(r.Stat)}); err != nil {
				return err
			}
			off = r.Next
			continue
		}
		if r.Stat.Sealed && off >= r.Stat.End {
			return nil
		}
	}
	return nil
}

func (s *Service) Trim(ctx context.Context, req *rlogv1.TrimRequest) (*rlogv1.TrimResponse, error) {
	res, err := s.do(ctx, rlog.Mutation{Op: rlog.OpTrim, Name: req.GetName(), Offset: req.GetOffset()})
	if err != nil {
		return nil, err
	}
	return &rlogv1.TrimResponse{Start: res.Offset}, nil
}

func (s *Service) Seal(ctx context.Context, req *rlogv1.SealRequest) (*rlogv1.SealResponse, error) {
	res, err := s.do(ctx, rlog.Mutation{Op: rlog.OpSeal, Name: req.GetName()})
	if err != nil {
		return nil, err
	}
	return &rlogv1.SealResponse{End: res.Offset}, nil
}

func (s *Service) DeleteLog(ctx context.Context, req *rlogv1.DeleteLogRequest) (*rlogv1.DeleteLogResponse, error) {
	if _, err := s.do(ctx, rlog.Mutation{Op: rlog.OpDelete, Name: req.GetName()}); err != nil {
		return nil, err
	}
	return &rlogv1.DeleteLogResponse{}, nil
}

func (s *Service) Stat(ctx context.Context, req *rlogv1.StatRequest) (*rlogv1.StatResponse, error) {
	st, err := s.p.Stat(ctx, req.GetName())
	if err != nil {
		return nil, toStatus(err)
	}
	return &rlogv1.StatResponse{Stat: statOf(st)}, nil
}
