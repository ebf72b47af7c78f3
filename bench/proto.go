package bench

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/corral-db/corral/wire"
)

// The load generator speaks just enough of the client protocol to drive a
// server: the handshake, five request types and ping. The records are encoded
// here with the wire primitives rather than through wire's record types so
// the generator depends only on the codec, which is stable, and so each
// request is appended straight into a connection's batch buffer without an
// intermediate struct.

// Protocol constants the generator needs.
const (
	// replyHeaderSize is xid (4) + zxid (8) + err (4).
	replyHeaderSize = 16
	// passwdSize is the session password length a 3.x server hands out.
	passwdSize = 16
	// maxReplyFrame bounds a reply frame: jute.maxbuffer plus headroom.
	maxReplyFrame = wire.DefaultMaxBuffer + 1024
)

var (
	// ErrXidMismatch is returned when a reply's xid is not the xid of the
	// oldest outstanding request: the server broke per-connection FIFO order
	// (or the generator did).
	ErrXidMismatch = errors.New("bench: reply xid does not match oldest outstanding request")
	// ErrUnexpectedReply is returned for a reply with no outstanding request.
	ErrUnexpectedReply = errors.New("bench: reply with no outstanding request")
	// ErrHandshake is returned when the server refuses or garbles the session
	// handshake.
	ErrHandshake = errors.New("bench: session handshake failed")
	// ErrBadFrame is returned for a reply frame too short or too long.
	ErrBadFrame = errors.New("bench: malformed reply frame")
)

// beginFrame reserves the 4-byte length prefix and returns its offset.
func beginFrame(e *wire.Encoder) int {
	at := e.Len()
	e.Int(0)
	return at
}

// endFrame patches the length prefix reserved by beginFrame.
func endFrame(e *wire.Encoder, at int) {
	binary.BigEndian.PutUint32(e.B[at:], uint32(e.Len()-at-4))
}

// appendConnect appends a ConnectRequest frame for a new session, shaped as
// the Java client sends it: 16-byte zero password and the readOnly byte.
func appendConnect(e *wire.Encoder, timeoutMs int32) {
	at := beginFrame(e)
	e.Int(0)         // protocolVersion
	e.Long(0)        // lastZxidSeen
	e.Int(timeoutMs) // timeOut
	e.Long(0)        // sessionId
	e.Buffer(make([]byte, passwdSize))
	e.Bool(false) // readOnly
	endFrame(e, at)
}

// connectResponse is the part of ConnectResponse the generator uses.
type connectResponse struct {
	ProtocolVersion int32
	TimeoutMs       int32
	SessionID       int64
	Passwd          []byte
}

// decodeConnectResponse decodes a ConnectResponse frame body (without the
// length prefix). The trailing readOnly byte is optional.
func decodeConnectResponse(b []byte) (connectResponse, error) {
	d := wire.NewDecoder(b)
	var r connectResponse
	r.ProtocolVersion = d.Int()
	r.TimeoutMs = d.Int()
	r.SessionID = d.Long()
	r.Passwd = d.Buffer()
	if d.Remaining() > 0 {
		d.Bool()
	}
	if err := d.Err(); err != nil {
		return r, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	if r.TimeoutMs <= 0 || r.SessionID == 0 {
		return r, fmt.Errorf("%w: session refused (timeout %d, id %#x)", ErrHandshake, r.TimeoutMs, r.SessionID)
	}
	return r, nil
}

func appendHeader(e *wire.Encoder, xid int32, op wire.Op) {
	e.Int(xid)
	e.Int(int32(op))
}

// appendPath writes a ustring from bytes, so paths built in a scratch buffer
// need no string conversion.
func appendPath(e *wire.Encoder, p []byte) {
	e.Int(int32(len(p)))
	e.B = append(e.B, p...)
}

// appendCreate appends a create request (persistent node, OPEN_ACL_UNSAFE).
func appendCreate(e *wire.Encoder, xid int32, path []byte, data []byte) {
	at := beginFrame(e)
	appendHeader(e, xid, wire.OpCreate)
	appendPath(e, path)
	e.Buffer(data)
	e.ACLs(wire.OpenACLUnsafe)
	e.Int(wire.ModePersistent)
	endFrame(e, at)
}

// appendSetData appends an unconditional setData request (version -1).
func appendSetData(e *wire.Encoder, xid int32, path []byte, data []byte) {
	at := beginFrame(e)
	appendHeader(e, xid, wire.OpSetData)
	appendPath(e, path)
	e.Buffer(data)
	e.Int(-1)
	endFrame(e, at)
}

// appendGetData appends a getData request without a watch.
func appendGetData(e *wire.Encoder, xid int32, path []byte) {
	at := beginFrame(e)
	appendHeader(e, xid, wire.OpGetData)
	appendPath(e, path)
	e.Bool(false)
	endFrame(e, at)
}

// appendDelete appends an unconditional delete request (version -1).
func appendDelete(e *wire.Encoder, xid int32, path []byte) {
	at := beginFrame(e)
	appendHeader(e, xid, wire.OpDelete)
	appendPath(e, path)
	e.Int(-1)
	endFrame(e, at)
}

// appendPing appends a ping (xid -2, no body).
func appendPing(e *wire.Encoder) {
	at := beginFrame(e)
	appendHeader(e, wire.XidPing, wire.OpPing)
	endFrame(e, at)
}

// appendCloseSession appends a closeSession request (no body).
func appendCloseSession(e *wire.Encoder, xid int32) {
	at := beginFrame(e)
	appendHeader(e, xid, wire.OpCloseSession)
	endFrame(e, at)
}

// replyHeader is ZooKeeper's ReplyHeader.
type replyHeader struct {
	Xid  int32
	Zxid int64
	Err  int32
}

func decodeReplyHeader(b []byte) replyHeader {
	return replyHeader{
		Xid:  int32(binary.BigEndian.Uint32(b[0:])),
		Zxid: int64(binary.BigEndian.Uint64(b[4:])),
		Err:  int32(binary.BigEndian.Uint32(b[12:])),
	}
}
