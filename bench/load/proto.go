package load

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
	// ReplyHeaderSize is xid (4) + zxid (8) + err (4).
	ReplyHeaderSize = 16
	// PasswdSize is the session password length a 3.x server hands out.
	PasswdSize = 16
	// MaxReplyFrame bounds a reply frame: jute.maxbuffer plus headroom.
	MaxReplyFrame = wire.DefaultMaxBuffer + 1024
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

// BeginFrame reserves the 4-byte length prefix and returns its offset.
func BeginFrame(e *wire.Encoder) int {
	at := e.Len()
	e.Int(0)
	return at
}

// EndFrame patches the length prefix reserved by beginFrame.
func EndFrame(e *wire.Encoder, at int) {
	binary.BigEndian.PutUint32(e.B[at:], uint32(e.Len()-at-4))
}

// appendConnect appends a ConnectRequest frame for a new session, shaped as
// the Java client sends it: 16-byte zero password and the readOnly byte.
func appendConnect(e *wire.Encoder, timeoutMs int32) {
	at := BeginFrame(e)
	e.Int(0)         // protocolVersion
	e.Long(0)        // lastZxidSeen
	e.Int(timeoutMs) // timeOut
	e.Long(0)        // sessionId
	e.Buffer(make([]byte, PasswdSize))
	e.Bool(false) // readOnly
	EndFrame(e, at)
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

func AppendHeader(e *wire.Encoder, xid int32, op wire.Op) {
	e.Int(xid)
	e.Int(int32(op))
}

// AppendPath writes a ustring from bytes, so paths built in a scratch buffer
// need no string conversion.
func AppendPath(e *wire.Encoder, p []byte) {
	e.Int(int32(len(p)))
	e.B = append(e.B, p...)
}

// AppendCreate appends a create request (persistent node, OPEN_ACL_UNSAFE).
func AppendCreate(e *wire.Encoder, xid int32, path []byte, data []byte) {
	at := BeginFrame(e)
	AppendHeader(e, xid, wire.OpCreate)
	AppendPath(e, path)
	e.Buffer(data)
	e.ACLs(wire.OpenACLUnsafe)
	e.Int(wire.ModePersistent)
	EndFrame(e, at)
}

// AppendSetData appends an unconditional setData request (version -1).
func AppendSetData(e *wire.Encoder, xid int32, path []byte, data []byte) {
	at := BeginFrame(e)
	AppendHeader(e, xid, wire.OpSetData)
	AppendPath(e, path)
	e.Buffer(data)
	e.Int(-1)
	EndFrame(e, at)
}

// AppendGetData appends a getData request without a watch.
func AppendGetData(e *wire.Encoder, xid int32, path []byte) {
	at := BeginFrame(e)
	AppendHeader(e, xid, wire.OpGetData)
	AppendPath(e, path)
	e.Bool(false)
	EndFrame(e, at)
}

// appendDelete appends an unconditional delete request (version -1).
func appendDelete(e *wire.Encoder, xid int32, path []byte) {
	at := BeginFrame(e)
	AppendHeader(e, xid, wire.OpDelete)
	AppendPath(e, path)
	e.Int(-1)
	EndFrame(e, at)
}

// appendPing appends a ping (xid -2, no body).
func appendPing(e *wire.Encoder) {
	at := BeginFrame(e)
	AppendHeader(e, wire.XidPing, wire.OpPing)
	EndFrame(e, at)
}

// appendCloseSession appends a closeSession request (no body).
func appendCloseSession(e *wire.Encoder, xid int32) {
	at := BeginFrame(e)
	AppendHeader(e, xid, wire.OpCloseSession)
	EndFrame(e, at)
}

// replyHeader is ZooKeeper's ReplyHeader.
type replyHeader struct {
	Xid  int32
	Zxid int64
	Err  int32
}

func DecodeReplyHeader(b []byte) replyHeader {
	return replyHeader{
		Xid:  int32(binary.BigEndian.Uint32(b[0:])),
		Zxid: int64(binary.BigEndian.Uint64(b[4:])),
		Err:  int32(binary.BigEndian.Uint32(b[12:])),
	}
}
