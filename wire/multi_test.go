package wire

import (
	"errors"
	"reflect"
	"testing"
)

func sampleMultiRequest() *MultiRequest {
	return &MultiRequest{Ops: []MultiOp{
		{Type: OpCreate, Create: CreateTTLRequest{CreateRequest: CreateRequest{Path: "/a", Data: []byte("x"), ACL: OpenACLUnsafe}}},
		{Type: OpCreate2, Create: CreateTTLRequest{CreateRequest: CreateRequest{Path: "/b", ACL: OpenACLUnsafe, Flags: ModeEphemeral}}},
		{Type: OpCreateContainer, Create: CreateTTLRequest{CreateRequest: CreateRequest{Path: "/c", Data: []byte{}, ACL: OpenACLUnsafe, Flags: ModeContainer}}},
		{Type: OpCreateTTL, Create: CreateTTLRequest{CreateRequest: CreateRequest{Path: "/t", ACL: OpenACLUnsafe, Flags: ModePersistentWithTTL}, TTL: 5000}},
		{Type: OpDelete, Delete: DeleteRequest{Path: "/d", Version: -1}},
		{Type: OpSetData, SetData: SetDataRequest{Path: "/s", Data: []byte("new"), Version: 3}},
		{Type: OpCheck, Check: CheckVersionRequest{Path: "/k", Version: 0}},
	}}
}

func sampleMultiReadRequest() *MultiRequest {
	return &MultiRequest{Ops: []MultiOp{
		{Type: OpGetData, Read: PathWatchRequest{Path: "/g"}},
		{Type: OpGetChildren, Read: PathWatchRequest{Path: "/"}},
	}}
}

func sampleMultiResponse() *MultiResponse {
	return &MultiResponse{Results: []MultiResult{
		{Type: OpCreate, Path: "/a"},
		{Type: OpCreate2, Path: "/b", Stat: sampleStat},
		{Type: OpDelete},
		{Type: OpCheck},
		{Type: OpSetData, Stat: sampleStat},
		{Type: OpGetData, Data: []byte("v"), Stat: sampleStat},
		{Type: OpGetData, Data: nil, Stat: sampleStat},
		{Type: OpGetChildren, Children: []string{"a", "b"}},
		{Type: OpError, Err: CodeNoNode},
		{Type: OpError, Err: CodeOK},
	}}
}

func TestMultiDecodeReusesAndClears(t *testing.T) {
	var m MultiRequest
	if err := m.Decode(NewDecoder(encode(sampleMultiRequest()))); err != nil {
		t.Fatal(err)
	}
	backing := &m.Ops[:1][0]
	// A shorter multi must reuse the slice and leave no stale fields.
	short := &MultiRequest{Ops: []MultiOp{{Type: OpDelete, Delete: DeleteRequest{Path: "/z", Version: 2}}}}
	if err := m.Decode(NewDecoder(encode(short))); err != nil {
		t.Fatal(err)
	}
	if &m.Ops[0] != backing {
		t.Error("Ops slice was not reused")
	}
	if !reflect.DeepEqual(&m, short) {
		t.Errorf("got %+v, want %+v", m, short)
	}

	var r MultiResponse
	if err := r.Decode(NewDecoder(encode(sampleMultiResponse()))); err != nil {
		t.Fatal(err)
	}
	one := &MultiResponse{Results: []MultiResult{{Type: OpError, Err: CodeBadVersion}}}
	if err := r.Decode(NewDecoder(encode(one))); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&r, one) {
		t.Errorf("got %+v, want %+v", r, one)
	}
}

func TestMultiEmpty(t *testing.T) {
	b := encode(&MultiRequest{})
	want := []byte{0xff, 0xff, 0xff, 0xff, 1, 0xff, 0xff, 0xff, 0xff}
	if string(b) != string(want) {
		t.Fatalf("empty multi = %x, want %x", b, want)
	}
	var m MultiRequest
	if err := m.Decode(NewDecoder(b)); err != nil || len(m.Ops) != 0 {
		t.Errorf("empty multi decoded as %+v, %v", m, err)
	}
	var r MultiResponse
	if err := r.Decode(NewDecoder(b)); err != nil || len(r.Results) != 0 {
		t.Errorf("empty multi response decoded as %+v, %v", r, err)
	}
}

func TestMultiDoneEndsSequence(t *testing.T) {
	// ZooKeeper stops at done=true whatever the terminator's type and err.
	var e Encoder
	h := MultiHeader{Type: OpDelete, Err: -1}
	h.Encode(&e)
	(&DeleteRequest{Path: "/x", Version: 1}).Encode(&e)
	end := MultiHeader{Type: OpCreate, Done: true, Err: 0}
	end.Encode(&e)
	var m MultiRequest
	if err := m.Decode(NewDecoder(e.Bytes())); err != nil {
		t.Fatal(err)
	}
	if len(m.Ops) != 1 || m.Ops[0].Delete.Path != "/x" {
		t.Errorf("got %+v", m)
	}
}

func TestMultiRejectsBadTypes(t *testing.T) {
	for _, bad := range []Op{OpExists, OpGetChildren2, OpSetACL, OpSync, OpMulti, OpError, OpDeleteContainer, 77} {
		var e Encoder
		h := MultiHeader{Type: bad, Err: -1}
		h.Encode(&e)
		(&PathRequest{Path: "/x"}).Encode(&e)
		e.Bool(false)
		encodeMultiEnd(&e)
		var m MultiRequest
		err := m.Decode(NewDecoder(e.Bytes()))
		if !errors.Is(err, ErrBadMultiOp) || !errors.Is(err, ErrMarshalling) || CodeOf(err) != CodeMarshallingError {
			t.Errorf("op %d in multi: err = %v", bad, err)
		}
		if _, err := DecodeRequest(OpMulti, NewDecoder(e.Bytes())); CodeOf(err) != CodeMarshallingError {
			t.Errorf("op %d in multi via DecodeRequest: err = %v", bad, err)
		}
	}
	for _, bad := range []Op{OpExists, OpGetACL, OpCreateTTL, OpMultiRead, 77} {
		var e Encoder
		h := MultiHeader{Type: bad}
		h.Encode(&e)
		e.String("/x")
		encodeMultiEnd(&e)
		var r MultiResponse
		if err := r.Decode(NewDecoder(e.Bytes())); !errors.Is(err, ErrBadMultiOp) || !errors.Is(err, ErrMarshalling) {
			t.Errorf("result type %d: err = %v", bad, err)
		}
	}
}

func TestMultiCheckKind(t *testing.T) {
	w, r := sampleMultiRequest(), sampleMultiReadRequest()
	if err := w.CheckKind(OpMulti); err != nil {
		t.Errorf("writes in multi: %v", err)
	}
	if err := r.CheckKind(OpMultiRead); err != nil {
		t.Errorf("reads in multiRead: %v", err)
	}
	if err := w.CheckKind(OpMultiRead); !errors.Is(err, ErrBadMultiOp) || CodeOf(err) != CodeMarshallingError {
		t.Errorf("writes in multiRead: %v", err)
	}
	if err := r.CheckKind(OpMulti); !errors.Is(err, ErrBadMultiOp) || CodeOf(err) != CodeMarshallingError {
		t.Errorf("reads in multi: %v", err)
	}
	mixed := &MultiRequest{Ops: append(append([]MultiOp{}, w.Ops...), r.Ops...)}
	for _, op := range []Op{OpMulti, OpMultiRead} {
		if _, err := DecodeRequest(op, NewDecoder(encode(mixed))); CodeOf(err) != CodeMarshallingError {
			t.Errorf("mixed ops as %d: %v", op, err)
		}
	}
	if err := w.CheckKind(OpCreate); CodeOf(err) != CodeUnimplemented {
		t.Errorf("CheckKind(OpCreate): %v", err)
	}
	if err := (&MultiRequest{}).CheckKind(OpMultiRead); err != nil {
		t.Errorf("empty multiRead: %v", err)
	}
}

func TestMultiOpAccessors(t *testing.T) {
	m := sampleMultiRequest()
	wantPaths := []string{"/a", "/b", "/c", "/t", "/d", "/s", "/k"}
	for i := range m.Ops {
		if p := m.Ops[i].Path(); p != wantPaths[i] {
			t.Errorf("op %d path %q, want %q", i, p, wantPaths[i])
		}
	}
	if p := (&MultiOp{Type: OpGetChildren, Read: PathWatchRequest{Path: "/r"}}).Path(); p != "/r" {
		t.Errorf("read path %q", p)
	}
	if p := (&MultiOp{Type: 77}).Path(); p != "" {
		t.Errorf("unknown op path %q", p)
	}

	eff := []struct {
		typ   Op
		flags int32
		want  Op
	}{
		{OpCreate, ModePersistent, OpCreate},
		{OpCreate2, ModeEphemeralSequential, OpCreate},
		{OpCreate, ModeContainer, OpCreateContainer},
		{OpCreate2, ModeContainer, OpCreateContainer},
		{OpCreateContainer, ModePersistent, OpCreate},
		{OpCreateTTL, ModePersistentSequentialWithTTL, OpCreateTTL},
		{OpCreateTTL, ModeEphemeral, OpCreate},
		{OpCreate, ModePersistentWithTTL, OpCreateTTL},
		{OpCreate, 7, OpCreate},
		{OpCreate, -1, OpCreate},
		{OpDelete, ModeContainer, OpDelete},
		{OpGetData, 0, OpGetData},
	}
	for _, c := range eff {
		o := MultiOp{Type: c.typ}
		o.Create.Flags = c.flags
		if got := o.EffectiveType(); got != c.want {
			t.Errorf("EffectiveType(%d, flags %d) = %d, want %d", c.typ, c.flags, got, c.want)
		}
	}
}

func TestMultiResultEncodingNormalises(t *testing.T) {
	in := &MultiResponse{Results: []MultiResult{
		{Type: OpCreateTTL, Path: "/t", Stat: sampleStat},
		{Type: OpCreateContainer, Path: "/c", Stat: sampleStat},
		{Type: OpDeleteContainer},
		{Type: OpGetACL, Path: "/bogus"},
	}}
	want := &MultiResponse{Results: []MultiResult{
		{Type: OpCreate2, Path: "/t", Stat: sampleStat},
		{Type: OpCreate2, Path: "/c", Stat: sampleStat},
		{Type: OpDelete},
		{Type: OpError, Err: CodeSystemError},
	}}
	var got MultiResponse
	if err := got.Decode(NewDecoder(encode(in))); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestMultiFirstError(t *testing.T) {
	failed := &MultiResponse{Results: []MultiResult{
		{Type: OpError, Err: CodeOK},
		{Type: OpError, Err: CodeBadVersion},
		{Type: OpError, Err: CodeRuntimeInconsistency},
	}}
	if c := failed.FirstError(); c != CodeBadVersion {
		t.Errorf("FirstError = %v", c)
	}
	if c := sampleMultiResponse().FirstError(); c != CodeNoNode {
		t.Errorf("FirstError = %v", c)
	}
	if c := (&MultiResponse{Results: []MultiResult{{Type: OpDelete}}}).FirstError(); c != CodeOK {
		t.Errorf("FirstError = %v", c)
	}
}

func TestMultiMissingTerminator(t *testing.T) {
	b := encode(sampleMultiRequest())
	b = b[:len(b)-MultiHeaderSize]
	var m MultiRequest
	if err := m.Decode(NewDecoder(b)); !errors.Is(err, ErrMarshalling) {
		t.Errorf("multi without terminator: %v", err)
	}
	r := encode(sampleMultiResponse())
	var mr MultiResponse
	if err := mr.Decode(NewDecoder(r[:len(r)-MultiHeaderSize])); !errors.Is(err, ErrMarshalling) {
		t.Errorf("multi response without terminator: %v", err)
	}
}
