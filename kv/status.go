package kv

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
)

// toStatus maps the package's errors to gRPC status codes: the one place
// they meet the wire (see api/kv/v1/kv.proto for the table).
func toStatus(err error) error {
	var nl *NotLeaderError
	var wr *WrongRangeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &wr):
		st := status.New(codes.OutOfRange, err.Error())
		if d, derr := st.WithDetails(&kvpb.WrongRange{Group: wr.Group, RingVersion: wr.RingVersion}); derr == nil {
			st = d
		}
		return st.Err()
	case errors.Is(err, ErrNoRing):
		return status.Error(codes.Unavailable, err.Error())
	case errors.As(err, &nl):
		st := status.New(codes.Unavailable, err.Error())
		if d, derr := st.WithDetails(&kvpb.NotLeader{LeaderId: nl.Leader.ID, LeaderAddress: nl.Leader.Addr, Epoch: nl.Leader.Epoch, Group: nl.Group}); derr == nil {
			st = d
		}
		return st.Err()
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrNoTable), errors.Is(err, ErrNoFamily):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, ErrStaleRequest):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, ErrTableExists):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, ErrRetry):
		// Proposed, then leadership was lost: it may or may not apply.
		return status.Error(codes.Aborted, err.Error())
	case errors.Is(err, errClosed):
		return status.Error(codes.Unavailable, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}
