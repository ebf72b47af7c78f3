package rlogsvc

import (
	"context"
	"errors"

	rlogv1 "github.com/corral-db/corral/api/rlog/v1"
	"github.com/corral-db/corral/rlog"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var grpcCodes = map[rlog.Code]codes.Code{
	rlog.CodeNotFound:    codes.NotFound,
	rlog.CodeExists:      codes.AlreadyExists,
	rlog.CodeWrongOffset: codes.FailedPrecondition,
	rlog.CodeSealed:      codes.FailedPrecondition,
	rlog.CodeTruncated:   codes.OutOfRange,
	rlog.CodeOutOfRange:  codes.OutOfRange,
	rlog.CodeTooLarge:    codes.InvalidArgument,
	rlog.CodeBadRequest:  codes.InvalidArgument,
}

// ErrorCodes maps rlog's codes to the API's and back.
var ErrorCodes = map[rlog.Code]rlogv1.ErrorCode{
	rlog.CodeNotFound:    rlogv1.ErrorCode_ERROR_CODE_NOT_FOUND,
	rlog.CodeExists:      rlogv1.ErrorCode_ERROR_CODE_EXISTS,
	rlog.CodeWrongOffset: rlogv1.ErrorCode_ERROR_CODE_WRONG_OFFSET,
	rlog.CodeTruncated:   rlogv1.ErrorCode_ERROR_CODE_TRUNCATED,
	rlog.CodeOutOfRange:  rlogv1.ErrorCode_ERROR_CODE_OUT_OF_RANGE,
	rlog.CodeSealed:      rlogv1.ErrorCode_ERROR_CODE_SEALED,
	rlog.CodeTooLarge:    rlogv1.ErrorCode_ERROR_CODE_TOO_LARGE,
	rlog.CodeBadRequest:  rlogv1.ErrorCode_ERROR_CODE_BAD_REQUEST,
}

// toStatus turns any error of the rlog package into a gRPC status.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	var e *rlog.Error
	switch {
	case errors.As(err, &e):
		st := status.New(grpcCodes[e.Code], e.Error())
		d := &rlogv1.LogError{
			Code:   ErrorCodes[e.Code],
			Stat:   &rlogv1.LogStat{Name: e.Log, Start: e.Start, End: e.End, Committed: e.Committed, Sealed: e.Sealed},
			Offset: e.Offset,
			Limit:  e.Limit,
		}
		if withD, derr := st.WithDetails(d); derr == nil {
			st = withD
		}
		return st.Err()
	case errors.Is(err, rlog.ErrNotLeader), errors.Is(err, rlog.ErrUnavailable):
		st := status.New(codes.Unavailable, err.Error())
		if withD, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: reasonNotApplied, Domain: errorDomain}); derr == nil {
			st = withD
		}
		return st.Err()
	case errors.Is(err, rlog.ErrSessionLost):
		// Unavailable without the not-applied mark: another server may
		// take the next request; this one's outcome is unknown.
		return status.Error(codes.Unavailable, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

// errorDomain and reasonNotApplied mark an Unavailable status that the
// service itself answered before doing anything (not the leader, no
// session with its member): the request may go to another server as it
// is. An Unavailable without the mark may come from the transport after
// the request reached the server (a server killed while it ran it), and
// then the request's outcome is unknown.
const (
	errorDomain      = "rlog.corral"
	reasonNotApplied = "NOT_APPLIED"
)

// NotApplied reports whether err is an Unavailable status the service
// answered without doing anything, so that any request, an append without
// an expected offset too, may be sent again elsewhere.
func NotApplied(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return false
	}
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok && ei.GetDomain() == errorDomain && ei.GetReason() == reasonNotApplied {
			return true
		}
	}
	return false
}

// FromStatus turns a status carrying a LogError back into an *rlog.Error;
// any other error comes back unchanged.
func FromStatus(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	for _, d := range st.Details() {
		le, ok := d.(*rlogv1.LogError)
		if !ok {
			continue
		}
		for c, ac := range ErrorCodes {
			if ac == le.GetCode() {
				s := le.GetStat()
				return &rlog.Error{Code: c, Log: s.GetName(), Start: s.GetStart(), End: s.GetEnd(),
					Committed: s.GetCommitted(), Sealed: s.GetSealed(), Offset: le.GetOffset(), Limit: le.GetLimit()}
			}
		}
	}
	return err
}
