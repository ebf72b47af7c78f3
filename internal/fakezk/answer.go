package fakezk

import "github.com/corral-db/corral/wire"

// handler answers one request (xid, op) of session sid whose fields
// follow in d; it is called with mu held. It returns the reply's error
// code and, when that is CodeOK, what writes the reply's body (nil:
// none). known false means the fake does not serve op: the loop records
// it as a problem and closes the connection without a reply.
type handler func(sid int64, xid int32, op wire.Op, d *wire.Decoder) (code wire.Code, body func(out *wire.Encoder), known bool)

// answer is the reply frame to request (xid, op, body) of session sid,
// or nil to close the connection without one. It counts the op, runs the
// fake's handler under mu, checks that the handler decoded the request
// exactly (strictly: no error, nothing left over) and frames the reply
// header and body.
func (l *loop) answer(sid int64, xid int32, op wire.Op, body []byte) []byte {
	d := wire.NewDecoder(body)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ops == nil {
		l.ops = map[wire.Op]int{}
	}
	l.ops[op]++
	code, replyBody, known := l.handle(sid, xid, op, d)
	if !known {
		l.problemLocked("unexpected op %d", op)
		return nil
	}
	if d.Err() != nil || d.Remaining() != 0 {
		l.problemLocked("op %d: decode error %v, %d bytes left", op, d.Err(), d.Remaining())
		return nil
	}
	var out wire.Encoder
	at := beginFrame(&out)
	out.Int(xid)
	out.Long(1)
	out.Int(int32(code))
	if code == wire.CodeOK && replyBody != nil {
		replyBody(&out)
	}
	endFrame(&out, at)
	return out.B
}

// Count is how many requests of op the fake has received.
func (l *loop) Count(op wire.Op) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ops[op]
}
