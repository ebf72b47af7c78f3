package harness

import (
	"fmt"

	"github.com/corral-db/corral/wire"
)

// Request bodies, encoded by hand in zookeeper.jute field order.

// PathBody is { ustring path } (getACL, sync, getAllChildrenNumber,
// getEphemerals' prefixPath).
func PathBody(path string) func(*wire.Encoder) {
	return func(e *wire.Encoder) { e.String(path) }
}

// PathWatchBody is { ustring path; boolean watch } (exists, getData,
// getChildren, getChildren2).
func PathWatchBody(path string, watch bool) func(*wire.Encoder) {
	return func(e *wire.Encoder) { e.String(path); e.Bool(watch) }
}

// PathIntBody is { ustring path; int n } (delete, check, checkWatches,
// removeWatches, addWatch).
func PathIntBody(path string, n int32) func(*wire.Encoder) {
	return func(e *wire.Encoder) { e.String(path); e.Int(n) }
}

// CreateBody is CreateRequest.
func CreateBody(path string, data []byte, acl []wire.ACL, flags int32) func(*wire.Encoder) {
	return func(e *wire.Encoder) {
		e.String(path)
		e.Buffer(data)
		e.ACLs(acl)
		e.Int(flags)
	}
}

// CreateTTLBody is CreateTTLRequest.
func CreateTTLBody(path string, data []byte, acl []wire.ACL, flags int32, ttl int64) func(*wire.Encoder) {
	return func(e *wire.Encoder) {
		CreateBody(path, data, acl, flags)(e)
		e.Long(ttl)
	}
}

// SetDataBody is SetDataRequest.
func SetDataBody(path string, data []byte, version int32) func(*wire.Encoder) {
	return func(e *wire.Encoder) { e.String(path); e.Buffer(data); e.Int(version) }
}

// AuthBody is AuthPacket{type 0, scheme, auth}.
func AuthBody(scheme string, auth []byte) func(*wire.Encoder) {
	return func(e *wire.Encoder) { e.Int(0); e.String(scheme); e.Buffer(auth) }
}

// SetWatchesBody is SetWatches{relativeZxid, data, exist, child}.
func SetWatchesBody(relZxid int64, data, exist, child []string) func(*wire.Encoder) {
	return func(e *wire.Encoder) {
		e.Long(relZxid)
		e.Strings(data)
		e.Strings(exist)
		e.Strings(child)
	}
}

// ReconfigBody is ReconfigRequest.
func ReconfigBody(joining, leaving, members string, curConfigID int64) func(*wire.Encoder) {
	return func(e *wire.Encoder) {
		e.String(joining)
		e.String(leaving)
		e.String(members)
		e.Long(curConfigID)
	}
}

// MultiOp is one operation inside a multi or multiRead request.
type MultiOp struct {
	Op   wire.Op
	Body func(*wire.Encoder)
}

// MultiBody is MultiOperationRecord: MultiHeader{type, false, -1} + record
// per op, then MultiHeader{-1, true, -1}.
func MultiBody(ops []MultiOp) func(*wire.Encoder) {
	return func(e *wire.Encoder) {
		for _, op := range ops {
			e.Int(int32(op.Op))
			e.Bool(false)
			e.Int(-1)
			op.Body(e)
		}
		e.Int(-1)
		e.Bool(true)
		e.Int(-1)
	}
}

// MultiResult is one decoded sub-result of a multi/multiRead reply.
type MultiResult struct {
	Type     int32     // MultiHeader.type: the op, or -1 for an error result
	Err      wire.Code // MultiHeader.err
	ErrBody  wire.Code // ErrorResponse.err of an error result
	Path     string
	Stat     wire.Stat
	Data     []byte
	Children []string
}

// DecodeMulti decodes a MultiResponse body.
func DecodeMulti(body []byte) ([]MultiResult, error) {
	d := wire.NewDecoder(body)
	var out []MultiResult
	for i := 0; ; i++ {
		if i > 10000 {
			return out, fmt.Errorf("multi response: no done header")
		}
		typ, done, code := d.Int(), d.Bool(), d.Int()
		if err := d.Err(); err != nil {
			return out, err
		}
		if done {
			break
		}
		res := MultiResult{Type: typ, Err: wire.Code(code)}
		switch wire.Op(typ) {
		case wire.OpCreate:
			res.Path = d.String()
		case wire.OpCreate2, wire.OpCreateTTL, wire.OpCreateContainer:
			res.Path = d.String()
			d.Stat(&res.Stat)
		case wire.OpDelete, wire.OpCheck:
		case wire.OpSetData:
			d.Stat(&res.Stat)
		case wire.OpGetData:
			res.Data = d.Buffer()
			d.Stat(&res.Stat)
		case wire.OpGetChildren:
			res.Children = d.Strings()
		case wire.OpError:
			res.ErrBody = wire.Code(d.Int())
		default:
			return out, fmt.Errorf("multi response: unexpected result type %d", typ)
		}
		out = append(out, res)
	}
	if d.Remaining() != 0 {
		return out, fmt.Errorf("multi response: %d trailing bytes", d.Remaining())
	}
	return out, d.Err()
}

// ClientInfo is one whoAmI entry.
type ClientInfo struct{ AuthScheme, User string }

// Convenience calls. Each fails the test on a transport or decoding error
// and returns the server's error code for the test to judge.

func (r *Raw) decodeOK(p Packet, what string, f func(*wire.Decoder)) {
	r.t.Helper()
	if p.Err != wire.CodeOK {
		return
	}
	d := p.Decoder()
	f(d)
	if err := d.Err(); err != nil {
		r.t.Fatalf("raw %s: decoding reply: %v", what, err)
	}
	if d.Remaining() != 0 {
		r.t.Fatalf("raw %s: %d trailing bytes in reply", what, d.Remaining())
	}
}

// Create2 sends create2 (op 15).
func (r *Raw) Create2(path string, data []byte, acl []wire.ACL, flags int32) (string, wire.Stat, Packet) {
	r.t.Helper()
	p, _ := r.Call(wire.OpCreate2, CreateBody(path, data, acl, flags))
	var name string
	var st wire.Stat
	r.decodeOK(p, "create2", func(d *wire.Decoder) { name = d.String(); d.Stat(&st) })
	return name, st, p
}

// Exists sends exists (op 3).
func (r *Raw) Exists(path string, watch bool) (wire.Stat, Packet, []Event) {
	r.t.Helper()
	p, evs := r.Call(wire.OpExists, PathWatchBody(path, watch))
	var st wire.Stat
	r.decodeOK(p, "exists", func(d *wire.Decoder) { d.Stat(&st) })
	return st, p, evs
}

// GetData sends getData (op 4).
func (r *Raw) GetData(path string, watch bool) ([]byte, wire.Stat, Packet) {
	r.t.Helper()
	p, _ := r.Call(wire.OpGetData, PathWatchBody(path, watch))
	var data []byte
	var st wire.Stat
	r.decodeOK(p, "getData", func(d *wire.Decoder) { data = d.Buffer(); d.Stat(&st) })
	return data, st, p
}

// SetData sends setData (op 5).
func (r *Raw) SetData(path string, data []byte, version int32) (wire.Stat, Packet) {
	r.t.Helper()
	p, _ := r.Call(wire.OpSetData, SetDataBody(path, data, version))
	var st wire.Stat
	r.decodeOK(p, "setData", func(d *wire.Decoder) { d.Stat(&st) })
	return st, p
}

// GetChildren sends getChildren (op 8).
func (r *Raw) GetChildren(path string, watch bool) ([]string, Packet) {
	r.t.Helper()
	p, _ := r.Call(wire.OpGetChildren, PathWatchBody(path, watch))
	var kids []string
	r.decodeOK(p, "getChildren", func(d *wire.Decoder) { kids = d.Strings() })
	return kids, p
}

// GetACL sends getACL (op 6).
func (r *Raw) GetACL(path string) ([]wire.ACL, wire.Stat, Packet) {
	r.t.Helper()
	p, _ := r.Call(wire.OpGetACL, PathBody(path))
	var acl []wire.ACL
	var st wire.Stat
	r.decodeOK(p, "getACL", func(d *wire.Decoder) { acl = d.ACLs(); d.Stat(&st) })
	return acl, st, p
}

// Auth sends an AuthPacket with xid -4 and waits for its reply.
func (r *Raw) Auth(scheme string, auth []byte) Packet {
	r.t.Helper()
	r.SendXid(wire.XidAuth, wire.OpAuth, AuthBody(scheme, auth))
	p, _ := r.Await(wire.XidAuth)
	return p
}

// WhoAmI sends whoAmI (op 107).
func (r *Raw) WhoAmI() ([]ClientInfo, Packet) {
	r.t.Helper()
	p, _ := r.Call(wire.OpWhoAmI, nil)
	var infos []ClientInfo
	r.decodeOK(p, "whoAmI", func(d *wire.Decoder) {
		n := d.VectorLen(8)
		for i := 0; i < n && d.Err() == nil; i++ {
			infos = append(infos, ClientInfo{AuthScheme: d.String(), User: d.String()})
		}
	})
	return infos, p
}

// GetEphemerals sends getEphemerals (op 103).
func (r *Raw) GetEphemerals(prefix string) ([]string, Packet) {
	r.t.Helper()
	p, _ := r.Call(wire.OpGetEphemerals, PathBody(prefix))
	var paths []string
	r.decodeOK(p, "getEphemerals", func(d *wire.Decoder) { paths = d.Strings() })
	return paths, p
}

// GetAllChildrenNumber sends getAllChildrenNumber (op 104).
func (r *Raw) GetAllChildrenNumber(path string) (int32, Packet) {
	r.t.Helper()
	p, _ := r.Call(wire.OpGetAllChildrenNumber, PathBody(path))
	var n int32
	r.decodeOK(p, "getAllChildrenNumber", func(d *wire.Decoder) { n = d.Int() })
	return n, p
}

// AddWatch sends addWatch (op 106); a success reply carries ErrorResponse{0}.
func (r *Raw) AddWatch(path string, mode int32) Packet {
	r.t.Helper()
	p, _ := r.Call(wire.OpAddWatch, PathIntBody(path, mode))
	return p
}

// Multi sends multi (op 14) or multiRead (op 22) and decodes the results.
func (r *Raw) Multi(op wire.Op, ops []MultiOp) ([]MultiResult, Packet) {
	r.t.Helper()
	p, _ := r.Call(op, MultiBody(ops))
	if p.Err != wire.CodeOK {
		return nil, p
	}
	res, err := DecodeMulti(p.Body)
	if err != nil {
		r.t.Fatalf("raw multi: %v", err)
	}
	return res, p
}
