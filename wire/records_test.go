package wire

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

var sampleStat = Stat{
	Czxid: 0x0102030405060708, Mzxid: 2, Ctime: 1700000000000, Mtime: 1700000000001,
	Version: 3, Cversion: -1, Aversion: 5, EphemeralOwner: 0x10000072c190002,
	DataLength: 7, NumChildren: 8, Pzxid: 9,
}

var sampleACL = []ACL{
	{Perms: PermAll, ID: AnyoneID},
	{Perms: PermRead | PermAdmin, ID: Id{Scheme: "digest", ID: "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="}},
	{Perms: PermAll, ID: AuthIDs},
	{Perms: PermRead, ID: Id{Scheme: "ip", ID: "10.0.0.0/8"}},
}

// sampleRecords has one populated value of every record type, with the
// nil/empty distinctions the wire preserves (null vs empty buffer).
func sampleRecords() []Record {
	return []Record{
		&ConnectRequest{LastZxidSeen: 17, Timeout: 30000, SessionID: 0x10000072c190002,
			Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true},
		&ConnectRequest{Timeout: 4000, Passwd: []byte{}},
		&ConnectResponse{Timeout: 30000, SessionID: 42, Passwd: []byte("0123456789abcdef"), HasReadOnly: true},
		&ConnectResponse{Timeout: 0, Passwd: make([]byte, 16)},
		&RequestHeader{Xid: 7, Type: OpCreate},
		&ReplyHeader{Xid: -1, Zxid: 0x1234, Err: CodeNoNode},
		&CreateRequest{Path: "/a/b", Data: []byte("hello"), ACL: sampleACL, Flags: ModeEphemeralSequential},
		&CreateRequest{Path: "/nulldata", Data: nil, ACL: OpenACLUnsafe},
		&CreateTTLRequest{CreateRequest: CreateRequest{Path: "/ttl", Data: []byte{}, ACL: OpenACLUnsafe,
			Flags: ModePersistentWithTTL}, TTL: 1 << 40},
		&DeleteRequest{Path: "/x", Version: -1},
		&PathWatchRequest{Path: "/w", Watch: true},
		&SetDataRequest{Path: "/s", Data: []byte{0, 1, 2}, Version: 4},
		&PathRequest{Path: "/p"},
		&SetACLRequest{Path: "/acl", ACL: sampleACL, Version: 2},
		&CheckVersionRequest{Path: "/c", Version: 9},
		&WatchesRequest{Path: "/wr", Type: WatcherAny},
		&AddWatchRequest{Path: "/aw", Mode: AddWatchPersistentRecursive},
		&GetEphemeralsRequest{PrefixPath: "/e"},
		&ReconfigRequest{JoiningServers: "server.4=h:1:2", LeavingServers: "3", NewMembers: "", CurConfigID: -1},
		&AuthPacket{Scheme: "digest", Auth: []byte("alice:secret")},
		&SetWatches{RelativeZxid: 99, DataWatches: []string{"/d1", "/d2"}, ExistWatches: []string{"/e"},
			ChildWatches: []string{"/c"}},
		&SetWatches2{RelativeZxid: 100, DataWatches: []string{"/d"}, ExistWatches: []string{"/e"},
			ChildWatches: []string{"/c"}, PersistentWatches: []string{"/p"}, PersistentRecursiveWatches: []string{"/r", "/"}},
		&GetSASLRequest{Token: []byte("tok")},
		&SetSASLResponse{Token: []byte("challenge")},
		&WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/watched"},
		&ErrorResponse{Err: CodeBadVersion},
		&WhoAmIResponse{ClientInfo: []ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}, {AuthScheme: "digest", User: "alice"}}},
		&MultiHeader{Type: OpCheck, Done: false, Err: -1},
		&CreateResponse{Path: "/a/b0000000001"},
		&Create2Response{Path: "/c2", Stat: sampleStat},
		&StatResponse{Stat: sampleStat},
		&GetDataResponse{Data: []byte("data"), Stat: sampleStat},
		&GetDataResponse{Data: nil, Stat: sampleStat},
		&GetChildrenResponse{Children: []string{"a", "b", "zookeeper"}},
		&GetChildren2Response{Children: []string{"x"}, Stat: sampleStat},
		&GetACLResponse{ACL: sampleACL, Stat: sampleStat},
		&SyncResponse{Path: "/sync"},
		&GetAllChildrenNumberResponse{TotalNumber: 12345},
		&GetEphemeralsResponse{Ephemerals: []string{"/e1", "/e2/f"}},
		sampleMultiRequest(),
		sampleMultiReadRequest(),
		sampleMultiResponse(),
	}
}

func encode(r Record) []byte {
	var e Encoder
	r.Encode(&e)
	return e.Bytes()
}

func newLike(r Record) Record {
	return reflect.New(reflect.TypeOf(r).Elem()).Interface().(Record)
}

func name(r Record) string { return reflect.TypeOf(r).Elem().Name() }

func TestRoundTrip(t *testing.T) {
	for i, r := range sampleRecords() {
		t.Run(fmt.Sprintf("%d_%s", i, name(r)), func(t *testing.T) {
			b := encode(r)
			got := newLike(r)
			d := NewDecoder(b)
			if err := got.Decode(d); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if d.Remaining() != 0 {
				t.Errorf("%d bytes left over", d.Remaining())
			}
			if !reflect.DeepEqual(got, r) {
				t.Errorf("round trip mismatch:\n got %+v\nwant %+v", got, r)
			}
			if again := encode(got); string(again) != string(b) {
				t.Errorf("re-encoding differs:\n got %x\nwant %x", again, b)
			}
		})
	}
}

// optionalTail reports whether a record's encoding minus its last byte is
// itself a complete record: the handshake's optional readOnly byte.
func optionalTail(r Record) bool {
	switch r := r.(type) {
	case *ConnectRequest:
		return r.HasReadOnly
	case *ConnectResponse:
		return r.HasReadOnly
	}
	return false
}

func TestTruncatedInputsFail(t *testing.T) {
	for i, r := range sampleRecords() {
		b := encode(r)
		for n := 0; n < len(b); n++ {
			if n == len(b)-1 && optionalTail(r) {
				continue
			}
			got := newLike(r)
			err := got.Decode(NewDecoder(b[:n:n]))
			if err == nil {
				t.Errorf("%d %s: decoding %d of %d bytes succeeded", i, name(r), n, len(b))
				continue
			}
			if !errors.Is(err, ErrMarshalling) {
				t.Errorf("%d %s: error %v does not wrap ErrMarshalling", i, name(r), err)
			}
			if CodeOf(err) != CodeMarshallingError {
				t.Errorf("%d %s: CodeOf = %v", i, name(r), CodeOf(err))
			}
		}
	}
}

func TestConnectOptionalReadOnly(t *testing.T) {
	with := &ConnectRequest{Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true}
	b := encode(with)
	var r ConnectRequest
	if err := r.Decode(NewDecoder(b[:len(b)-1])); err != nil {
		t.Fatal(err)
	}
	if r.HasReadOnly || r.ReadOnly {
		t.Errorf("frame without readOnly decoded as HasReadOnly=%v ReadOnly=%v", r.HasReadOnly, r.ReadOnly)
	}
	// Java treats any non-zero boolean byte as true.
	b[len(b)-1] = 7
	if err := r.Decode(NewDecoder(b)); err != nil {
		t.Fatal(err)
	}
	if !r.HasReadOnly || !r.ReadOnly {
		t.Errorf("readOnly byte 7 decoded as HasReadOnly=%v ReadOnly=%v", r.HasReadOnly, r.ReadOnly)
	}
	// A zero readOnly byte is still present.
	b[len(b)-1] = 0
	if err := r.Decode(NewDecoder(b)); err != nil {
		t.Fatal(err)
	}
	if !r.HasReadOnly || r.ReadOnly {
		t.Errorf("readOnly byte 0 decoded as HasReadOnly=%v ReadOnly=%v", r.HasReadOnly, r.ReadOnly)
	}
}

func TestNullAndEmpty(t *testing.T) {
	// Null string, buffer and vectors, as some clients send them.
	var e Encoder
	e.Int(-1) // path: null ustring
	e.Int(-1) // data: null buffer
	e.Int(-1) // acl: null vector
	e.Int(0)  // flags
	var r CreateRequest
	if err := r.Decode(NewDecoder(e.Bytes())); err != nil {
		t.Fatal(err)
	}
	if r.Path != "" || r.Data != nil || r.ACL != nil {
		t.Errorf("null fields decoded as %+v", r)
	}
	// An empty buffer stays distinct from null.
	e.Reset()
	e.String("/p")
	e.Int(0)
	e.Int(0)
	e.Int(0)
	if err := r.Decode(NewDecoder(e.Bytes())); err != nil {
		t.Fatal(err)
	}
	if r.Data == nil || len(r.Data) != 0 {
		t.Errorf("empty buffer decoded as %#v", r.Data)
	}
}

func TestHostileLengths(t *testing.T) {
	cases := map[string][]byte{
		"string too long":   {0x7f, 0xff, 0xff, 0xff, 'a'},
		"string negative":   {0xff, 0xff, 0xff, 0xfe},
		"string past end":   {0, 0, 0, 10, 'a', 'b'},
		"string above max":  {0x00, 0x10, 0x00, 0x00},
		"vector huge count": {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0},
		"vector past end":   {0x00, 0x0f, 0xff, 0xff, 0, 0, 0, 0},
	}
	for name, b := range cases {
		var r SetWatches
		// SetWatches starts with a long; prefix one so the cases hit the
		// string/vector readers.
		in := append(make([]byte, 8), b...)
		if err := r.Decode(NewDecoder(in)); !errors.Is(err, ErrMarshalling) {
			t.Errorf("%s: err = %v, want ErrMarshalling", name, err)
		}
		var p PathRequest
		if name != "vector huge count" && name != "vector past end" {
			if err := p.Decode(NewDecoder(b)); !errors.Is(err, ErrMarshalling) {
				t.Errorf("%s: PathRequest err = %v, want ErrMarshalling", name, err)
			}
		}
	}
	var w WhoAmIResponse
	if err := w.Decode(NewDecoder([]byte{0x00, 0x0f, 0xff, 0xff, 0, 0, 0, 0})); !errors.Is(err, ErrMarshalling) {
		t.Errorf("whoAmI huge vector: err = %v", err)
	}
}

func TestDecoderMax(t *testing.T) {
	var e Encoder
	e.String("/abcdef")
	d := NewDecoder(e.Bytes())
	d.Max = 4
	var p PathRequest
	if err := p.Decode(d); !errors.Is(err, ErrMarshalling) {
		t.Errorf("string above Decoder.Max: err = %v", err)
	}
	d.Reset(e.Bytes())
	if d.Max != 4 || d.Err() != nil || d.Offset() != 0 {
		t.Fatalf("Reset: Max %d err %v off %d", d.Max, d.Err(), d.Offset())
	}
	d.Max = 7
	if err := p.Decode(d); err != nil || p.Path != "/abcdef" {
		t.Errorf("string of exactly Decoder.Max: %q, %v", p.Path, err)
	}
}

// requestTypes maps every opcode a client may send to its request record.
var requestTypes = map[Op]Record{
	OpCreate: &CreateRequest{}, OpCreate2: &CreateRequest{}, OpCreateContainer: &CreateRequest{},
	OpCreateTTL: &CreateTTLRequest{}, OpDelete: &DeleteRequest{},
	OpExists: &PathWatchRequest{}, OpGetData: &PathWatchRequest{}, OpGetChildren: &PathWatchRequest{},
	OpGetChildren2: &PathWatchRequest{}, OpSetData: &SetDataRequest{},
	OpGetACL: &PathRequest{}, OpSync: &PathRequest{}, OpGetAllChildrenNumber: &PathRequest{},
	OpDeleteContainer: &PathRequest{}, OpSetACL: &SetACLRequest{}, OpCheck: &CheckVersionRequest{},
	OpMulti: &MultiRequest{}, OpMultiRead: &MultiRequest{}, OpReconfig: &ReconfigRequest{},
	OpCheckWatches: &WatchesRequest{}, OpRemoveWatches: &WatchesRequest{}, OpAuth: &AuthPacket{},
	OpSetWatches: &SetWatches{}, OpSetWatches2: &SetWatches2{}, OpSASL: &GetSASLRequest{},
	OpGetEphemerals: &GetEphemeralsRequest{}, OpAddWatch: &AddWatchRequest{},
	OpPing: nil, OpCloseSession: nil, OpWhoAmI: nil,
}

// unknownOps are opcodes a client may not send.
var unknownOps = []Op{OpNotification, 10, 23, 99, OpError, OpCreateSession, OpCloseSession - 1, 108, 1 << 30}

func TestNewRequestTypes(t *testing.T) {
	for op, want := range requestTypes {
		got, err := NewRequest(op)
		if err != nil {
			t.Errorf("op %d: %v", op, err)
			continue
		}
		if reflect.TypeOf(got) != reflect.TypeOf(want) {
			t.Errorf("op %d: got %T, want %T", op, got, want)
		}
	}
	for _, op := range unknownOps {
		r, err := NewRequest(op)
		if r != nil || !errors.Is(err, ErrUnknownOp) || CodeOf(err) != CodeUnimplemented {
			t.Errorf("op %d: got %T, %v (code %v)", op, r, err, CodeOf(err))
		}
	}
}

func TestDecodeRequest(t *testing.T) {
	// Every sample request decodes through the dispatcher to an equal value.
	samples := map[Op]Record{
		OpCreate2:       &CreateRequest{Path: "/a", Data: []byte("d"), ACL: OpenACLUnsafe, Flags: 1},
		OpCreateTTL:     &CreateTTLRequest{CreateRequest: CreateRequest{Path: "/t", ACL: OpenACLUnsafe, Flags: 5}, TTL: 10},
		OpGetData:       &PathWatchRequest{Path: "/g", Watch: true},
		OpSetWatches2:   &SetWatches2{RelativeZxid: 3, DataWatches: []string{"/x"}},
		OpMulti:         sampleMultiRequest(),
		OpMultiRead:     sampleMultiReadRequest(),
		OpAuth:          &AuthPacket{Scheme: "digest", Auth: []byte("u:p")},
		OpRemoveWatches: &WatchesRequest{Path: "/r", Type: WatcherData},
	}
	for op, want := range samples {
		got, err := DecodeRequest(op, NewDecoder(encode(want)))
		if err != nil {
			t.Errorf("op %d: %v", op, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("op %d: got %+v, want %+v", op, got, want)
		}
	}
	for _, op := range []Op{OpPing, OpCloseSession, OpWhoAmI} {
		if r, err := DecodeRequest(op, NewDecoder(nil)); r != nil || err != nil {
			t.Errorf("bodiless op %d: %v, %v", op, r, err)
		}
	}
	for _, op := range unknownOps {
		if _, err := DecodeRequest(op, NewDecoder(nil)); CodeOf(err) != CodeUnimplemented {
			t.Errorf("unknown op %d: %v", op, err)
		}
	}
	// A truncated body is a marshalling error, not an unknown op.
	if _, err := DecodeRequest(OpCreate, NewDecoder([]byte{0, 0, 0, 2, '/'})); CodeOf(err) != CodeMarshallingError {
		t.Errorf("truncated create: %v", err)
	}
	// Trailing bytes after a request record are ignored, as in ZooKeeper.
	b := append(encode(&DeleteRequest{Path: "/d", Version: 1}), 0xde, 0xad)
	if r, err := DecodeRequest(OpDelete, NewDecoder(b)); err != nil || r.(*DeleteRequest).Path != "/d" {
		t.Errorf("trailing bytes: %+v, %v", r, err)
	}
}

func TestNewResponseTypes(t *testing.T) {
	want := map[Op]Record{
		OpCreate: &CreateResponse{}, OpCreate2: &Create2Response{}, OpCreateContainer: &Create2Response{},
		OpCreateTTL: &Create2Response{}, OpExists: &StatResponse{}, OpSetData: &StatResponse{},
		OpSetACL: &StatResponse{}, OpCheck: &StatResponse{}, OpGetData: &GetDataResponse{},
		OpReconfig: &GetDataResponse{}, OpGetACL: &GetACLResponse{}, OpGetChildren: &GetChildrenResponse{},
		OpGetChildren2: &GetChildren2Response{}, OpSync: &SyncResponse{}, OpMulti: &MultiResponse{},
		OpMultiRead: &MultiResponse{}, OpSASL: &SetSASLResponse{}, OpGetEphemerals: &GetEphemeralsResponse{},
		OpGetAllChildrenNumber: &GetAllChildrenNumberResponse{}, OpAddWatch: &ErrorResponse{},
		OpWhoAmI: &WhoAmIResponse{},
		OpDelete: nil, OpDeleteContainer: nil, OpCheckWatches: nil, OpRemoveWatches: nil, OpAuth: nil,
		OpSetWatches: nil, OpSetWatches2: nil, OpPing: nil, OpCloseSession: nil,
	}
	for op, w := range want {
		got, err := NewResponse(op)
		if err != nil {
			t.Errorf("op %d: %v", op, err)
			continue
		}
		if reflect.TypeOf(got) != reflect.TypeOf(w) {
			t.Errorf("op %d: got %T, want %T", op, got, w)
		}
	}
	for _, op := range unknownOps {
		if _, err := NewResponse(op); !errors.Is(err, ErrUnknownOp) {
			t.Errorf("op %d: %v", op, err)
		}
	}
}

// TestDecoderAlias: Buffer copies unless Alias is set; then it returns
// the frame's own bytes, capped at the buffer's end.
func TestDecoderAlias(t *testing.T) {
	var e Encoder
	e.Buffer([]byte("abc"))
	e.Int(7)
	for _, alias := range []bool{false, true} {
		frame := append([]byte(nil), e.B...)
		d := Decoder{B: frame, Alias: alias}
		b := d.Buffer()
		if string(b) != "abc" || d.Int() != 7 || d.Err() != nil {
			t.Fatalf("alias=%v: decoded %q, err %v", alias, b, d.Err())
		}
		frame[4] = 'X' // the first byte of the buffer, after its length
		if shared := b[0] == 'X'; shared != alias {
			t.Fatalf("alias=%v: result shares the frame: %v", alias, shared)
		}
		if alias && cap(b) != len(b) {
			t.Fatalf("aliased buffer has room to grow over the frame: len %d cap %d", len(b), cap(b))
		}
	}
}
