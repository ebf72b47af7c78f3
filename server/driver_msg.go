package server

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// driverKind is the kind of a server-to-server message that is not zab's
// own: it travels in a zab.MsgDriver over the same links (see
// zab.MsgDriver), encoded with the jute primitives clients use.
type driverKind int32

const (
	// driverRequest (learner to leader): a client write to prep and
	// propose. The learner answers its client when it applies the
	// resulting transaction, matched by (session, cxid).
	driverRequest driverKind = iota + 1
	// driverSyncRequest (learner to leader): the paper's sync (§4.4). The
	// leader answers with the last zxid it proposed, after every request
	// the learner forwarded before.
	driverSyncRequest
	// driverSyncReply (leader to learner): ID and Zxid; the learner answers
	// its client once it has applied Zxid.
	driverSyncReply
	// driverTouch (learner to leader): sessions heard from since the last
	// touch, so the leader, which alone expires sessions, keeps them.
	driverTouch
	// driverRevalidate (learner to leader): ID and SID; a client
	// reconnected to the learner with session SID. The leader records the
	// learner as the session's owner, in order with the writes the
	// learner forwarded before (ZooKeeper's REVALIDATE; sessionmove.go).
	driverRevalidate
	// driverRevalidateReply (leader to learner): ID and Valid, whether
	// the session is live; the learner answers its client then.
	driverRevalidateReply
)

// driverMsg is the decoded payload of a zab.MsgDriver.
type driverMsg struct {
	kind driverKind
	// driverRequest
	sid     int64
	xid     int32
	op      wire.Op
	timeout int32
	auth    []wire.Id
	body    []byte // the request record, jute-encoded
	// rec, when set, is encoded as body by encode (and body is unused):
	// a forwarded write is encoded once, into the message, rather than
	// into a body that is then copied in.
	rec wire.Record
	// driverSyncRequest, driverSyncReply
	id   int64
	zxid int64
	// driverTouch
	sessions []int64
	// driverRevalidateReply
	valid bool
}

var errBadDriverMsg = errors.New("malformed server message")

func (m *driverMsg) encode() []byte {
	e := &wire.Encoder{B: make([]byte, 0, m.sizeHint())}
	e.Int(int32(m.kind))
	switch m.kind {
	case driverRequest:
		e.Long(m.sid)
		e.Int(m.xid)
		e.Int(int32(m.op))
		e.Int(m.timeout)
		e.Int(int32(len(m.auth)))
		for _, id := range m.auth {
			e.String(id.Scheme)
			e.String(id.ID)
		}
		if m.rec != nil {
			// A jute buffer: its length, patched once the record is in.
			at := e.Len()
			e.Int(0)
			m.rec.Encode(e)
			binary.BigEndian.PutUint32(e.B[at:], uint32(e.Len()-at-4))
		} else {
			e.Buffer(m.body)
		}
	case driverSyncRequest, driverSyncReply:
		e.Long(m.id)
		e.Long(m.zxid)
	case driverTouch:
		e.Int(int32(len(m.sessions)))
		for _, s := range m.sessions {
			e.Long(s)
		}
	case driverRevalidate:
		e.Long(m.id)
		e.Long(m.sid)
	case driverRevalidateReply:
		e.Long(m.id)
		e.Bool(m.valid)
	}
	return e.Bytes()
}

// sizeHint is a capacity that holds most messages without the buffer
// growing: the fixed fields, the auth ids, and a forwarded write's data.
func (m *driverMsg) sizeHint() int {
	n := 64 + len(m.body) + 8*len(m.sessions)
	for _, id := range m.auth {
		n += 8 + len(id.Scheme) + len(id.ID)
	}
	switch r := m.rec.(type) {
	case *wire.SetDataRequest:
		n += len(r.Path) + len(r.Data)
	case *wire.CreateRequest:
		n += len(r.Path) + len(r.Data) + 32*len(r.ACL)
	case *wire.CreateTTLRequest:
		n += len(r.Path) + len(r.Data) + 32*len(r.ACL)
	case nil:
	default:
		n += 256
	}
	return n
}

// decodeDriverMsg decodes a payload from a peer. Peers are trusted
// servers of the ensemble, but a payload that does not decode is still
// only an error, never a panic. The body points into b, which must not
// be reused: the transport allocates every frame for its message alone.
func decodeDriverMsg(b []byte, maxBuffer int) (driverMsg, error) {
	d := wire.Decoder{B: b, Max: maxBuffer, Alias: true}
	var m driverMsg
	m.kind = driverKind(d.Int())
	switch m.kind {
	case driverRequest:
		m.sid = d.Long()
		m.xid = d.Int()
		m.op = wire.Op(d.Int())
		m.timeout = d.Int()
		n := d.Int()
		if n < 0 || n > 1024 {
			return m, fmt.Errorf("%w: %d auth ids", errBadDriverMsg, n)
		}
		for i := int32(0); i < n && d.Err() == nil; i++ {
			m.auth = append(m.auth, wire.Id{Scheme: d.String(), ID: d.String()})
		}
		m.body = d.Buffer()
	case driverSyncRequest, driverSyncReply:
		m.id = d.Long()
		m.zxid = d.Long()
	case driverTouch:
		n := d.Int()
		if n < 0 || int(n) > d.Remaining()/8 {
			return m, fmt.Errorf("%w: %d sessions", errBadDriverMsg, n)
		}
		m.sessions = make([]int64, n)
		for i := range m.sessions {
			m.sessions[i] = d.Long()
		}
	case driverRevalidate:
		m.id = d.Long()
		m.sid = d.Long()
	case driverRevalidateReply:
		m.id = d.Long()
		m.valid = d.Bool()
	default:
		return m, fmt.Errorf("%w: kind %d", errBadDriverMsg, m.kind)
	}
	if err := d.Err(); err != nil {
		return m, fmt.Errorf("%w: %w", errBadDriverMsg, err)
	}
	return m, nil
}

// driverMessage wraps a payload for the transport.
func driverMessage(from, to uint64, m *driverMsg) zab.Message {
	return zab.Message{Type: zab.MsgDriver, From: from, To: to, Entries: []zab.Entry{{Data: m.encode()}}}
}
