package server

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/corral-db/corral/wire"
)

// TestDriverMsgRoundTrip: every kind decodes to what was encoded, and a
// forwarded write encoded from its record (rec) is byte for byte the
// message with the record pre-encoded as body.
func TestDriverMsgRoundTrip(t *testing.T) {
	set := &wire.SetDataRequest{Path: "/a/b", Data: bytes.Repeat([]byte{7}, 1024), Version: 3}
	var e wire.Encoder
	set.Encode(&e)
	auth := []wire.Id{{Scheme: "digest", ID: "alice:x"}, {Scheme: "ip", ID: "127.0.0.1"}}
	for _, c := range []struct {
		name string
		m    driverMsg
		want driverMsg
	}{
		{"request from record", driverMsg{kind: driverRequest, sid: 9, xid: 4, op: wire.OpSetData, timeout: 30000, auth: auth, rec: set},
			driverMsg{kind: driverRequest, sid: 9, xid: 4, op: wire.OpSetData, timeout: 30000, auth: auth, body: e.Bytes()}},
		{"request with body", driverMsg{kind: driverRequest, sid: 9, xid: 4, op: wire.OpSetData, body: e.Bytes()},
			driverMsg{kind: driverRequest, sid: 9, xid: 4, op: wire.OpSetData, body: e.Bytes()}},
		{"request without record", driverMsg{kind: driverRequest, sid: 9, op: wire.OpCloseSession},
			driverMsg{kind: driverRequest, sid: 9, op: wire.OpCloseSession}},
		{"sync request", driverMsg{kind: driverSyncRequest, id: 5, zxid: 1 << 33},
			driverMsg{kind: driverSyncRequest, id: 5, zxid: 1 << 33}},
		{"touch", driverMsg{kind: driverTouch, sessions: []int64{1, 2, 3}},
			driverMsg{kind: driverTouch, sessions: []int64{1, 2, 3}}},
		{"revalidate", driverMsg{kind: driverRevalidate, id: 7, sid: -3},
			driverMsg{kind: driverRevalidate, id: 7, sid: -3}},
		{"revalidate reply", driverMsg{kind: driverRevalidateReply, id: 7, valid: true},
			driverMsg{kind: driverRevalidateReply, id: 7, valid: true}},
	} {
		b := c.m.encode()
		got, err := decodeDriverMsg(b, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: decoded %+v, want %+v", c.name, got, c.want)
		}
		if !bytes.Equal(b, c.want.encode()) {
			t.Errorf("%s: encoding differs from the body-encoded message", c.name)
		}
	}
}

// FuzzDecodeDriverMsg: no payload from a peer, however damaged, panics
// the decoder, and what decodes encodes back to bytes that decode the
// same.
func FuzzDecodeDriverMsg(f *testing.F) {
	for _, m := range []driverMsg{
		{kind: driverRequest, sid: 9, xid: 4, op: wire.OpSetData, timeout: 30000, auth: []wire.Id{{Scheme: "ip", ID: "x"}}, body: []byte("body")},
		{kind: driverSyncRequest, id: 5, zxid: 1 << 33},
		{kind: driverTouch, sessions: []int64{1, 2}},
		{kind: driverRevalidateReply, id: 7, valid: true},
	} {
		f.Add(m.encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeDriverMsg(b, 1<<16)
		if err != nil {
			return
		}
		again, err := decodeDriverMsg(m.encode(), 1<<16)
		if err != nil {
			t.Fatalf("re-encoding of %+v does not decode: %v", m, err)
		}
		if !reflect.DeepEqual(normalize(m), normalize(again)) {
			t.Fatalf("decoded %+v, re-decoded %+v", m, again)
		}
	})
}

// normalize makes empty and nil slices compare equal.
func normalize(m driverMsg) driverMsg {
	if len(m.sessions) == 0 {
		m.sessions = nil
	}
	if len(m.auth) == 0 {
		m.auth = nil
	}
	if len(m.body) == 0 {
		m.body = nil
	}
	return m
}
