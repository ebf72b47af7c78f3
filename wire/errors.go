package wire

import (
	"errors"
	"strconv"
)

// Code is a KeeperException code as carried in ReplyHeader.err.
type Code int32

const (
	CodeOK                           Code = 0
	CodeSystemError                  Code = -1
	CodeRuntimeInconsistency         Code = -2
	CodeDataInconsistency            Code = -3
	CodeConnectionLoss               Code = -4
	CodeMarshallingError             Code = -5
	CodeUnimplemented                Code = -6
	CodeOperationTimeout             Code = -7
	CodeBadArguments                 Code = -8
	CodeUnknownSession               Code = -12
	CodeNewConfigNoQuorum            Code = -13
	CodeReconfigInProgress           Code = -14
	CodeAPIError                     Code = -100
	CodeNoNode                       Code = -101
	CodeNoAuth                       Code = -102
	CodeBadVersion                   Code = -103
	CodeNoChildrenForEphemerals      Code = -108
	CodeNodeExists                   Code = -110
	CodeNotEmpty                     Code = -111
	CodeSessionExpired               Code = -112
	CodeInvalidCallback              Code = -113
	CodeInvalidACL                   Code = -114
	CodeAuthFailed                   Code = -115
	CodeSessionMoved                 Code = -118
	CodeNotReadOnly                  Code = -119
	CodeEphemeralOnLocalSession      Code = -120
	CodeNoWatcher                    Code = -121
	CodeRequestTimeout               Code = -122
	CodeReconfigDisabled             Code = -123
	CodeSessionClosedRequireSaslAuth Code = -124
	CodeQuotaExceeded                Code = -125
	CodeThrottled                    Code = -127
)

var codeNames = map[Code]string{
	CodeOK: "ok", CodeSystemError: "system error",
	CodeRuntimeInconsistency: "runtime inconsistency", CodeDataInconsistency: "data inconsistency",
	CodeConnectionLoss: "connection loss", CodeMarshallingError: "marshalling error",
	CodeUnimplemented: "unimplemented", CodeOperationTimeout: "operation timeout",
	CodeBadArguments: "bad arguments", CodeUnknownSession: "unknown session",
	CodeNewConfigNoQuorum: "new config no quorum", CodeReconfigInProgress: "reconfig in progress",
	CodeAPIError: "api error", CodeNoNode: "node does not exist", CodeNoAuth: "not authenticated",
	CodeBadVersion: "bad version", CodeNoChildrenForEphemerals: "no children for ephemerals",
	CodeNodeExists: "node already exists", CodeNotEmpty: "directory not empty",
	CodeSessionExpired: "session expired", CodeInvalidCallback: "invalid callback",
	CodeInvalidACL: "invalid ACL", CodeAuthFailed: "authentication failed",
	CodeSessionMoved: "session moved", CodeNotReadOnly: "not a read-only call",
	CodeEphemeralOnLocalSession: "ephemeral on local session", CodeNoWatcher: "no watcher",
	CodeRequestTimeout: "request timeout", CodeReconfigDisabled: "reconfig disabled",
	CodeSessionClosedRequireSaslAuth: "session closed, SASL auth required",
	CodeQuotaExceeded:                "quota exceeded", CodeThrottled: "throttled",
}

func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return "unknown error " + strconv.Itoa(int(c))
}

// Error makes a Code an error value; errors.Is(err, wire.CodeNoNode) works
// on any error that wraps a Code.
func (c Code) Error() string { return "zk: " + c.String() }

// CodeOf maps an error to the code sent on the wire: nil is CodeOK, a
// wrapped Code is itself, anything else is a system error. It is the single
// place where Go errors become ZooKeeper codes.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	var c Code
	if errors.As(err, &c) {
		return c
	}
	if errors.Is(err, ErrMarshalling) {
		return CodeMarshallingError
	}
	return CodeSystemError
}
