package wire

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Golden frames, written out by hand from PROTOCOL §1-§9 rather than
// produced by the encoder under test.

// unhex parses hex digits, ignoring spaces, newlines and '|' separators.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "\n", "", "\t", "", "|", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad golden hex: %v", err)
	}
	return b
}

// frame encodes records into one length-prefixed frame.
func frame(rs ...Record) []byte {
	var e Encoder
	start := e.BeginFrame()
	for _, r := range rs {
		r.Encode(&e)
	}
	e.EndFrame(start)
	return e.Bytes()
}

func checkGolden(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if string(got) != string(want) {
		t.Errorf("%s:\n got %x\nwant %x", what, got, want)
	}
}

// decodeFrame strips the length prefix after checking it.
func decodeFrame(t *testing.T, b []byte) *Decoder {
	t.Helper()
	p, err := ReadFrame(strings.NewReader(string(b)), nil, 0)
	if err != nil {
		t.Fatalf("ReadFrame: %v", err)
	}
	return NewDecoder(p)
}

const (
	// passwd of 16 zero bytes as Java and C clients send on first connect.
	zeroPasswd = "00000010 00000000000000000000000000000000"
	// passwd 01..10 as a server would hand out.
	serverPasswd = "00000010 0102030405060708090a0b0c0d0e0f10"
)

func TestGoldenConnectRequest(t *testing.T) {
	// 4 protocolVersion + 8 lastZxidSeen + 4 timeOut + 8 sessionId +
	// 4+16 passwd = 44 bytes, 45 with the readOnly byte.
	with := unhex(t, "0000002d | 00000000 | 0000000000000011 | 00007530 | 0000000000000000 | "+zeroPasswd+" | 00")
	without := unhex(t, "0000002c | 00000000 | 0000000000000011 | 00007530 | 0000000000000000 | "+zeroPasswd)
	// go-zookeeper and node send an empty password and no readOnly: 28 bytes.
	goZK := unhex(t, "0000001c | 00000000 | 0000000000000000 | 00002710 | 0000000000000000 | 00000000")

	req := ConnectRequest{LastZxidSeen: 17, Timeout: 30000, Passwd: make([]byte, 16), HasReadOnly: true}
	checkGolden(t, "with readOnly", frame(&req), with)
	req.HasReadOnly = false
	checkGolden(t, "without readOnly", frame(&req), without)
	checkGolden(t, "go-zk style", frame(&ConnectRequest{Timeout: 10000, Passwd: []byte{}}), goZK)

	for _, c := range []struct {
		b    []byte
		has  bool
		pass int
	}{{with, true, 16}, {without, false, 16}, {goZK, false, 0}} {
		var r ConnectRequest
		if err := r.Decode(decodeFrame(t, c.b)); err != nil {
			t.Fatal(err)
		}
		if r.HasReadOnly != c.has || r.ReadOnly || len(r.Passwd) != c.pass {
			t.Errorf("%x decoded as %+v", c.b, r)
		}
	}
}

func TestGoldenConnectResponse(t *testing.T) {
	// PROTOCOL §3 [observed]: 36 bytes without readOnly, 37 with.
	// 4 protocolVersion + 4 timeOut + 8 sessionId + 4+16 passwd (+1).
	with := unhex(t, "00000025 | 00000000 | 00009c40 | 010000072c190002 | "+serverPasswd+" | 00")
	without := unhex(t, "00000024 | 00000000 | 00009c40 | 010000072c190002 | "+serverPasswd)
	pw := unhex(t, "0102030405060708090a0b0c0d0e0f10")
	resp := ConnectResponse{Timeout: 40000, SessionID: 0x10000072c190002, Passwd: pw, HasReadOnly: true}
	checkGolden(t, "with readOnly", frame(&resp), with)
	resp.HasReadOnly = false
	checkGolden(t, "without readOnly", frame(&resp), without)
	if len(with) != 4+37 || len(without) != 4+36 {
		t.Fatalf("golden lengths %d/%d", len(with), len(without))
	}

	// An expired session: timeout 0, id 0, zero password.
	expired := unhex(t, "00000025 | 00000000 | 00000000 | 0000000000000000 | "+zeroPasswd+" | 00")
	checkGolden(t, "expired", frame(&ConnectResponse{Passwd: make([]byte, 16), HasReadOnly: true}), expired)

	var r ConnectResponse
	if err := r.Decode(decodeFrame(t, without)); err != nil {
		t.Fatal(err)
	}
	if r.HasReadOnly || r.Timeout != 40000 || r.SessionID != 0x10000072c190002 || string(r.Passwd) != string(pw) {
		t.Errorf("decoded %+v", r)
	}
}

func TestGoldenErrorReply(t *testing.T) {
	// An error reply is the 16-byte header alone: xid 7, zxid 0x10, -101.
	want := unhex(t, "00000010 | 00000007 | 0000000000000010 | ffffff9b")
	checkGolden(t, "NoNode reply", frame(&ReplyHeader{Xid: 7, Zxid: 0x10, Err: CodeNoNode}), want)
	// Unknown opcode [observed]: zxid -1, err -6.
	want = unhex(t, "00000010 | 00000003 | ffffffffffffffff | fffffffa")
	checkGolden(t, "unimplemented reply", frame(&ReplyHeader{Xid: 3, Zxid: -1, Err: CodeUnimplemented}), want)

	var h ReplyHeader
	if err := h.Decode(decodeFrame(t, want)); err != nil || h != (ReplyHeader{Xid: 3, Zxid: -1, Err: CodeUnimplemented}) {
		t.Errorf("decoded %+v, %v", h, err)
	}
}

func TestGoldenNotificationAndAddWatch(t *testing.T) {
	// Notification: ReplyHeader{-1, 14, 0} + WatcherEvent{3, 3, "/p"}.
	want := unhex(t, "0000001e | ffffffff | 000000000000000e | 00000000 | 00000003 | 00000003 | 00000002 2f70")
	got := frame(&ReplyHeader{Xid: XidNotification, Zxid: 14},
		&WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/p"})
	checkGolden(t, "notification", got, want)

	// addWatch's successful reply body is ErrorResponse{0}: 4 zero bytes.
	want = unhex(t, "00000014 | 00000009 | 0000000000000010 | 00000000 | 00000000")
	checkGolden(t, "addWatch reply", frame(&ReplyHeader{Xid: 9, Zxid: 0x10}, &ErrorResponse{}), want)
}

func TestGoldenMultiRequest(t *testing.T) {
	want := unhex(t, `
		00000057 | 00000005 0000000e
		00000001 00 ffffffff
		  00000002 2f61 | 00000001 78 | 00000001 0000001f 00000005 776f726c64 00000006 616e796f6e65 | 00000000
		00000002 00 ffffffff
		  00000002 2f62 | ffffffff
		ffffffff 01 ffffffff`)
	m := &MultiRequest{Ops: []MultiOp{
		{Type: OpCreate, Create: CreateTTLRequest{CreateRequest: CreateRequest{Path: "/a", Data: []byte("x"), ACL: OpenACLUnsafe}}},
		{Type: OpDelete, Delete: DeleteRequest{Path: "/b", Version: -1}},
	}}
	checkGolden(t, "multi request", frame(&RequestHeader{Xid: 5, Type: OpMulti}, m), want)

	d := decodeFrame(t, want)
	var h RequestHeader
	if err := h.Decode(d); err != nil || h.Type != OpMulti {
		t.Fatalf("header %+v, %v", h, err)
	}
	r, err := DecodeRequest(h.Type, d)
	if err != nil {
		t.Fatal(err)
	}
	got := r.(*MultiRequest)
	if len(got.Ops) != 2 || got.Ops[0].Create.Path != "/a" || string(got.Ops[0].Create.Data) != "x" ||
		got.Ops[1].Delete.Path != "/b" || got.Ops[1].Delete.Version != -1 {
		t.Errorf("decoded %+v", got)
	}
}

func TestGoldenMultiResponse(t *testing.T) {
	// A failed multi [observed]: header err 0, results (-1,0) (-1,-103) (-1,-2),
	// each error result repeating its code in an ErrorResponse.
	failed := unhex(t, `
		00000040 | 00000005 0000000000000020 00000000
		ffffffff 00 00000000 | 00000000
		ffffffff 00 ffffff99 | ffffff99
		ffffffff 00 fffffffe | fffffffe
		ffffffff 01 ffffffff`)
	m := &MultiResponse{Results: []MultiResult{
		{Type: OpError, Err: CodeOK},
		{Type: OpError, Err: CodeBadVersion},
		{Type: OpError, Err: CodeRuntimeInconsistency},
	}}
	checkGolden(t, "failed multi", frame(&ReplyHeader{Xid: 5, Zxid: 0x20}, m), failed)

	// A successful one: create → path; create2 → path + stat; delete → nothing;
	// setData → stat.
	stat := "0000000000000001 0000000000000002 0000000000000003 0000000000000004 00000005 00000006 00000007 0000000000000000 00000008 00000009 000000000000000a"
	ok := unhex(t, `
		000000d1 | 00000006 0000000000000021 00000000
		00000001 00 00000000 | 00000002 2f61
		0000000f 00 00000000 | 00000002 2f63 | `+stat+`
		00000002 00 00000000
		00000005 00 00000000 | `+stat+`
		ffffffff 01 ffffffff`)
	st := Stat{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: 6, Aversion: 7,
		DataLength: 8, NumChildren: 9, Pzxid: 10}
	m = &MultiResponse{Results: []MultiResult{
		{Type: OpCreate, Path: "/a"},
		{Type: OpCreateContainer, Path: "/c", Stat: st},
		{Type: OpDelete},
		{Type: OpSetData, Stat: st},
	}}
	checkGolden(t, "successful multi", frame(&ReplyHeader{Xid: 6, Zxid: 0x21}, m), ok)

	d := decodeFrame(t, ok)
	var h ReplyHeader
	var got MultiResponse
	if h.Decode(d) != nil || got.Decode(d) != nil {
		t.Fatalf("decode: %v", d.Err())
	}
	if len(got.Results) != 4 || got.Results[1].Type != OpCreate2 || got.Results[1].Stat != st ||
		got.Results[3].Stat != st || got.FirstError() != CodeOK {
		t.Errorf("decoded %+v", got)
	}
}
