package client

import (
	"errors"

	"github.com/corral-db/corral/wire"
)

// Errors a server reports are returned as wire.Code values, so
//
//	errors.Is(err, wire.CodeNoNode)   // and err == wire.CodeNoNode
//
// both work. The client's own failures are the sentinels below; each wraps
// the ZooKeeper code a Java client would report for the same situation,
// so code written against the codes alone behaves the same.
var (
	// ErrConnectionLoss: the request was sent but the connection broke
	// before its reply arrived, so it may or may not have executed; or the
	// client has been without a connection for a whole session timeout.
	// Wraps wire.CodeConnectionLoss.
	ErrConnectionLoss error = &clientError{"zk: connection loss", wire.CodeConnectionLoss}
	// ErrSessionExpired: the session is gone (the server said so on
	// reconnect). The Conn is dead; create a new one. Wraps
	// wire.CodeSessionExpired.
	ErrSessionExpired error = &clientError{"zk: session expired", wire.CodeSessionExpired}
	// ErrClosed: Close was called. Wraps wire.CodeSessionExpired, as the
	// Java client reports for a closed handle, so retry loops that stop on
	// an expired session stop here too (and never retry it as a
	// connection loss).
	ErrClosed error = &clientError{"zk: connection closed", wire.CodeSessionExpired}
	// ErrAuthFailed: a credential given with AuthDigest/Auth, or re-sent
	// after a reconnect, was refused; the Conn is dead. Wraps
	// wire.CodeAuthFailed. (A refused AddAuth returns wire.CodeAuthFailed
	// itself and leaves the Conn usable.)
	ErrAuthFailed error = &clientError{"zk: authentication failed", wire.CodeAuthFailed}
	// ErrWatchRemoved is a Watcher's Err after Remove or RemoveWatches
	// ended it. Wraps wire.CodeNoWatcher.
	ErrWatchRemoved error = &clientError{"zk: watch removed", wire.CodeNoWatcher}
	// errBadPath: a path that does not start with '/' (checked locally
	// because the chroot is prepended to it). Wraps wire.CodeBadArguments.
	errBadPath error = &clientError{"zk: path must start with '/'", wire.CodeBadArguments}
	// errMixedMulti: Multi given reads or MultiRead given writes. Wraps
	// wire.CodeBadArguments.
	errMixedMulti error = &clientError{"zk: multi mixes reads and writes", wire.CodeBadArguments}
	// errBadMode: Create given a TTL mode (use CreateTTL), or CreateTTL a
	// non-TTL mode. Wraps wire.CodeBadArguments.
	errBadMode error = &clientError{"zk: create mode does not suit the call", wire.CodeBadArguments}
	// errProtocol: the server sent something the protocol does not allow
	// (a reply out of order, an undecodable frame); the connection is
	// dropped. Wraps wire.CodeMarshallingError.
	errProtocol error = &clientError{"zk: protocol violation by server", wire.CodeMarshallingError}
)

// errDead is internal: the Conn died while a call waited for a slot; the
// call reports the Conn's own error.
var errDead = errors.New("zk: conn dead")

// clientError is a sentinel that unwraps to a ZooKeeper code, so both
// errors.Is(err, ErrX) and errors.Is(err, wire.CodeX) hold, and
// wire.CodeOf(err) maps it to that code.
type clientError struct {
	msg  string
	code wire.Code
}

func (e *clientError) Error() string { return e.msg }
func (e *clientError) Unwrap() error { return e.code }

// codeErr turns a reply code into the error value returned to callers.
func codeErr(c wire.Code) error {
	if c == wire.CodeOK {
		return nil
	}
	return c
}
