package load

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/corral-db/corral/wire"
)

// frame checks a length-prefixed frame and returns a decoder positioned
// after the request header, which it also checks.
func frame(t *testing.T, b []byte, xid int32, op wire.Op) *wire.Decoder {
	t.Helper()
	if len(b) < 4 || int(binary.BigEndian.Uint32(b)) != len(b)-4 {
		t.Fatalf("frame length prefix wrong: % x", b)
	}
	d := wire.NewDecoder(b[4:])
	if gx, gop := d.Int(), wire.Op(d.Int()); gx != xid || gop != op {
		t.Fatalf("header = xid %d op %d, want %d %d", gx, gop, xid, op)
	}
	return d
}

func done(t *testing.T, d *wire.Decoder) {
	t.Helper()
	if d.Err() != nil || d.Remaining() != 0 {
		t.Fatalf("decode error %v, %d bytes left", d.Err(), d.Remaining())
	}
}

func TestConnectRequestDecodes(t *testing.T) {
	var e wire.Encoder
	appendConnect(&e, 30000)
	b := e.Bytes()
	if n := binary.BigEndian.Uint32(b); int(n) != len(b)-4 || n != 45 {
		t.Fatalf("ConnectRequest body is %d bytes (frame %d), want 45", n, len(b))
	}
	d := wire.NewDecoder(b[4:])
	if v, z, to, sid := d.Int(), d.Long(), d.Int(), d.Long(); v != 0 || z != 0 || to != 30000 || sid != 0 {
		t.Errorf("fields = %d %d %d %d", v, z, to, sid)
	}
	if p := d.Buffer(); !bytes.Equal(p, make([]byte, 16)) {
		t.Errorf("passwd = % x, want 16 zero bytes", p)
	}
	if d.Bool() {
		t.Error("readOnly set")
	}
	done(t, d)
}

func TestRequestsDecode(t *testing.T) {
	data := Value(1024)
	path := []byte("/bench/c-3-17")

	var e wire.Encoder
	AppendCreate(&e, 7, path, data)
	d := frame(t, e.Bytes(), 7, wire.OpCreate)
	if p, b, acl, flags := d.String(), d.Buffer(), d.ACLs(), d.Int(); p != string(path) || !bytes.Equal(b, data) ||
		len(acl) != 1 || acl[0] != wire.OpenACLUnsafe[0] || flags != wire.ModePersistent {
		t.Errorf("create = %q, %d bytes, %v, %d", p, len(b), acl, flags)
	}
	done(t, d)

	e.Reset()
	AppendSetData(&e, 8, path, data)
	d = frame(t, e.Bytes(), 8, wire.OpSetData)
	if p, b, v := d.String(), d.Buffer(), d.Int(); p != string(path) || !bytes.Equal(b, data) || v != -1 {
		t.Errorf("setData = %q, %d bytes, version %d", p, len(b), v)
	}
	done(t, d)

	e.Reset()
	AppendGetData(&e, 9, path)
	d = frame(t, e.Bytes(), 9, wire.OpGetData)
	if p, w := d.String(), d.Bool(); p != string(path) || w {
		t.Errorf("getData = %q, watch %v", p, w)
	}
	done(t, d)

	e.Reset()
	appendDelete(&e, 10, path)
	d = frame(t, e.Bytes(), 10, wire.OpDelete)
	if p, v := d.String(), d.Int(); p != string(path) || v != -1 {
		t.Errorf("delete = %q, version %d", p, v)
	}
	done(t, d)

	e.Reset()
	appendPing(&e)
	done(t, frame(t, e.Bytes(), wire.XidPing, wire.OpPing))

	e.Reset()
	appendCloseSession(&e, 11)
	done(t, frame(t, e.Bytes(), 11, wire.OpCloseSession))
}

// Requests appended one after another form a stream of frames, as the
// writer sends a batch.
func TestBatchIsConcatenatedFrames(t *testing.T) {
	var e wire.Encoder
	for xid := int32(1); xid <= 3; xid++ {
		AppendGetData(&e, xid, []byte("/a"))
	}
	b := e.Bytes()
	for xid := int32(1); xid <= 3; xid++ {
		n := int(binary.BigEndian.Uint32(b)) + 4
		d := frame(t, b[:n], xid, wire.OpGetData)
		if p, w := d.String(), d.Bool(); p != "/a" || w {
			t.Errorf("frame %d: getData %q watch %v", xid, p, w)
		}
		done(t, d)
		b = b[n:]
	}
	if len(b) != 0 {
		t.Fatalf("%d trailing bytes", len(b))
	}
}

func TestConnectResponse(t *testing.T) {
	enc := func(timeout int32, sid int64, readOnly bool) []byte {
		var e wire.Encoder
		e.Int(0)
		e.Int(timeout)
		e.Long(sid)
		e.Buffer(make([]byte, 16))
		if readOnly {
			e.Bool(false)
		}
		return e.Bytes()
	}
	for _, ro := range []bool{true, false} {
		r, err := decodeConnectResponse(enc(4000, 0x1234, ro))
		if err != nil || r.TimeoutMs != 4000 || r.SessionID != 0x1234 {
			t.Errorf("readOnly byte %v: %+v, %v", ro, r, err)
		}
	}
	if _, err := decodeConnectResponse(enc(0, 0, true)); err == nil {
		t.Error("refused session (timeout 0) accepted")
	}
	if _, err := decodeConnectResponse([]byte{0, 0}); err == nil {
		t.Error("truncated response accepted")
	}
}

func TestReplyHeader(t *testing.T) {
	var e wire.Encoder
	e.Int(42)
	e.Long(0x100000007)
	e.Int(int32(wire.CodeNoNode))
	h := DecodeReplyHeader(e.Bytes())
	if h != (replyHeader{Xid: 42, Zxid: 0x100000007, Err: int32(wire.CodeNoNode)}) {
		t.Errorf("header = %+v", h)
	}
}
