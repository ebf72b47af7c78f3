package cli

import (
	"context"
	"errors"
	"strconv"

	"github.com/corral-db/corral/wire"
)

// Exit statuses (see the package documentation).
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
)

// usageError is a mistake in the command line itself, found before
// anything is sent: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(msg string) error { return &usageError{msg} }

// opError is a failed ZooKeeper call on path; it prints as zkCli prints
// the KeeperException (CliWrapperException's texts).
type opError struct {
	path string
	err  error
}

func (e *opError) Error() string { return zkMessage(e.path, e.err) }
func (e *opError) Unwrap() error { return e.err }

// failure is any other failed command, printed as is (nothing if msg is
// empty, when the reason was printed already): exit status 1.
type failure struct{ msg string }

func (e *failure) Error() string { return e.msg }

// exitStatus maps a command's error to the process exit status.
func exitStatus(err error) int {
	var u *usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &u):
		return ExitUsage
	}
	return ExitFailed
}

// zkMessage is the message zkCli prints for a failed call on path: the
// friendly texts of CliWrapperException for the common codes, otherwise
// KeeperException's "KeeperErrorCode = <name> for <path>".
func zkMessage(path string, err error) string {
	var code wire.Code
	if !errors.As(err, &code) {
		if errors.Is(err, context.Canceled) {
			return "Interrupted"
		}
		return err.Error()
	}
	switch code {
	case wire.CodeNoNode:
		return "Node does not exist: " + path
	case wire.CodeNoChildrenForEphemerals:
		return "Ephemerals cannot have children: " + path
	case wire.CodeNodeExists:
		return "Node already exists: " + path
	case wire.CodeNotEmpty:
		return "Node not empty: " + path
	case wire.CodeNotReadOnly:
		return "Not a read-only call: " + path
	case wire.CodeInvalidACL:
		return "Acl is not valid : " + path
	case wire.CodeNoAuth:
		return "Insufficient permission : " + path
	case wire.CodeBadArguments:
		return "Arguments are not valid : " + path
	case wire.CodeBadVersion:
		return "version No is not valid : " + path
	case wire.CodeReconfigInProgress:
		return "Another reconfiguration is in progress -- concurrent reconfigs not supported (yet)"
	}
	return keeperErrorMessage(code, path)
}

// keeperErrorMessage is KeeperException.getMessage.
func keeperErrorMessage(code wire.Code, path string) string {
	msg := "KeeperErrorCode = " + codeMessage(code)
	if path != "" {
		msg += " for " + path
	}
	return msg
}

// codeMessage is KeeperException.getCodeMessage.
func codeMessage(c wire.Code) string {
	switch c {
	case wire.CodeOK:
		return "ok"
	case wire.CodeSystemError:
		return "SystemError"
	case wire.CodeRuntimeInconsistency:
		return "RuntimeInconsistency"
	case wire.CodeDataInconsistency:
		return "DataInconsistency"
	case wire.CodeConnectionLoss:
		return "ConnectionLoss"
	case wire.CodeMarshallingError:
		return "MarshallingError"
	case wire.CodeNewConfigNoQuorum:
		return "NewConfigNoQuorum"
	case wire.CodeReconfigInProgress:
		return "ReconfigInProgress"
	case wire.CodeUnimplemented:
		return "Unimplemented"
	case wire.CodeOperationTimeout:
		return "OperationTimeout"
	case wire.CodeBadArguments:
		return "BadArguments"
	case wire.CodeAPIError:
		return "APIError"
	case wire.CodeNoNode:
		return "NoNode"
	case wire.CodeNoAuth:
		return "NoAuth"
	case wire.CodeBadVersion:
		return "BadVersion"
	case wire.CodeNoChildrenForEphemerals:
		return "NoChildrenForEphemerals"
	case wire.CodeNodeExists:
		return "NodeExists"
	case wire.CodeInvalidACL:
		return "InvalidACL"
	case wire.CodeAuthFailed:
		return "AuthFailed"
	case wire.CodeNotEmpty:
		return "Directory not empty"
	case wire.CodeSessionExpired:
		return "Session expired"
	case wire.CodeInvalidCallback:
		return "Invalid callback"
	case wire.CodeSessionMoved:
		return "Session moved"
	case wire.CodeNotReadOnly:
		return "Not a read-only call"
	case wire.CodeEphemeralOnLocalSession:
		return "Ephemeral node on local session"
	case wire.CodeNoWatcher:
		return "No such watcher"
	case wire.CodeReconfigDisabled:
		return "Reconfig is disabled"
	case wire.CodeSessionClosedRequireSaslAuth:
		return "Session closed because client failed to authenticate"
	case wire.CodeQuotaExceeded:
		return "Quota has exceeded"
	case wire.CodeThrottled:
		return "Op throttled due to high load"
	}
	return "Unknown error " + strconv.Itoa(int(c))
}
