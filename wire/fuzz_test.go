package wire

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// The fuzz targets check that decoders never panic and that whatever
// decodes re-encodes to bytes that decode to the same value (the wire's
// normalisations — null string to "", null vector to empty, any non-zero
// boolean to true — are all idempotent).

func requestSeeds() [][]byte {
	var seeds [][]byte
	add := func(op Op, r Record) {
		var e Encoder
		h := RequestHeader{Xid: 1, Type: op}
		h.Encode(&e)
		if r != nil {
			r.Encode(&e)
		}
		seeds = append(seeds, e.Bytes())
	}
	add(OpPing, nil)
	add(OpCloseSession, nil)
	add(OpWhoAmI, nil)
	add(OpCreate, &CreateRequest{Path: "/a", Data: []byte("x"), ACL: sampleACL, Flags: 3})
	add(OpCreate2, &CreateRequest{Path: "/a", ACL: OpenACLUnsafe})
	add(OpCreateTTL, &CreateTTLRequest{CreateRequest: CreateRequest{Path: "/t", ACL: OpenACLUnsafe, Flags: 5}, TTL: 100})
	add(OpDelete, &DeleteRequest{Path: "/d", Version: -1})
	add(OpExists, &PathWatchRequest{Path: "/e", Watch: true})
	add(OpGetChildren2, &PathWatchRequest{Path: "/"})
	add(OpSetData, &SetDataRequest{Path: "/s", Data: []byte("v"), Version: 1})
	add(OpGetACL, &PathRequest{Path: "/g"})
	add(OpSetACL, &SetACLRequest{Path: "/g", ACL: sampleACL, Version: 0})
	add(OpSync, &PathRequest{Path: "/"})
	add(OpCheck, &CheckVersionRequest{Path: "/c", Version: 2})
	add(OpMulti, sampleMultiRequest())
	add(OpMultiRead, sampleMultiReadRequest())
	add(OpReconfig, &ReconfigRequest{JoiningServers: "a", CurConfigID: 1})
	add(OpRemoveWatches, &WatchesRequest{Path: "/w", Type: 3})
	add(OpAuth, &AuthPacket{Scheme: "digest", Auth: []byte("a:b")})
	add(OpSetWatches, &SetWatches{RelativeZxid: 1, DataWatches: []string{"/a"}})
	add(OpSetWatches2, &SetWatches2{PersistentRecursiveWatches: []string{"/p"}})
	add(OpSASL, &GetSASLRequest{Token: []byte{1, 2}})
	add(OpGetEphemerals, &GetEphemeralsRequest{PrefixPath: "/"})
	add(OpGetAllChildrenNumber, &PathRequest{Path: "/"})
	add(OpAddWatch, &AddWatchRequest{Path: "/", Mode: 1})
	add(99, &PathRequest{Path: "/"})
	return seeds
}

// reencode checks the round-trip property for a successfully decoded r.
func reencode(t *testing.T, r Record, decode func(*Decoder) (Record, error)) {
	t.Helper()
	b := encode(r)
	again, err := decode(NewDecoder(b))
	if err != nil {
		t.Fatalf("re-encoded %T does not decode: %v\n%x", r, err, b)
	}
	if !reflect.DeepEqual(again, r) {
		t.Fatalf("re-encoded %T decodes differently:\n got %+v\nwant %+v", r, again, r)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range requestSeeds() {
		f.Add(s)
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 14, 0, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(data)
		var h RequestHeader
		if h.Decode(d) != nil {
			return
		}
		r, err := DecodeRequest(h.Type, d)
		if err != nil {
			if !errors.Is(err, ErrMarshalling) && !errors.Is(err, ErrUnknownOp) {
				t.Fatalf("error %v wraps neither ErrMarshalling nor ErrUnknownOp", err)
			}
			if r != nil {
				t.Fatalf("record %T returned with error", r)
			}
			return
		}
		if r == nil {
			return
		}
		reencode(t, r, func(d *Decoder) (Record, error) { return DecodeRequest(h.Type, d) })
	})
}

func FuzzDecodeConnect(f *testing.F) {
	f.Add(encode(&ConnectRequest{LastZxidSeen: 5, Timeout: 30000, Passwd: make([]byte, 16), HasReadOnly: true}))
	f.Add(encode(&ConnectRequest{Timeout: 30000, Passwd: []byte{}}))
	f.Add(encode(&ConnectRequest{SessionID: 7, Passwd: nil}))
	f.Add(encode(&ConnectResponse{Timeout: 4000, SessionID: 1, Passwd: make([]byte, 16), HasReadOnly: true}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var req ConnectRequest
		if err := req.Decode(NewDecoder(data)); err == nil {
			reencode(t, &req, func(d *Decoder) (Record, error) {
				var r ConnectRequest
				return &r, r.Decode(d)
			})
			// readOnly is present iff a byte followed the password.
			if n := len(encode(&ConnectRequest{Passwd: req.Passwd})); req.HasReadOnly != (len(data) > n) {
				t.Fatalf("HasReadOnly %v with %d bytes after %d", req.HasReadOnly, len(data), n)
			}
		} else if !errors.Is(err, ErrMarshalling) {
			t.Fatalf("error %v does not wrap ErrMarshalling", err)
		}
		var resp ConnectResponse
		if err := resp.Decode(NewDecoder(data)); err == nil {
			reencode(t, &resp, func(d *Decoder) (Record, error) {
				var r ConnectResponse
				return &r, r.Decode(d)
			})
		} else if !errors.Is(err, ErrMarshalling) {
			t.Fatalf("error %v does not wrap ErrMarshalling", err)
		}
	})
}

func FuzzDecodeMulti(f *testing.F) {
	f.Add(encode(sampleMultiRequest()))
	f.Add(encode(sampleMultiReadRequest()))
	f.Add(encode(sampleMultiResponse()))
	f.Add(encode(&MultiRequest{}))
	f.Add([]byte{0, 0, 0, 1, 0, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m MultiRequest
		if err := m.Decode(NewDecoder(data)); err == nil {
			reencode(t, &m, func(d *Decoder) (Record, error) {
				var r MultiRequest
				return &r, r.Decode(d)
			})
			for _, op := range []Op{OpMulti, OpMultiRead} {
				if err := m.CheckKind(op); err != nil && !errors.Is(err, ErrBadMultiOp) {
					t.Fatalf("CheckKind: %v", err)
				}
			}
			for i := range m.Ops {
				_ = m.Ops[i].Path()
				_ = m.Ops[i].EffectiveType()
			}
		} else if !errors.Is(err, ErrMarshalling) {
			t.Fatalf("error %v does not wrap ErrMarshalling", err)
		}
		var r MultiResponse
		if err := r.Decode(NewDecoder(data)); err == nil {
			reencode(t, &r, func(d *Decoder) (Record, error) {
				var x MultiResponse
				return &x, x.Decode(d)
			})
			_ = r.FirstError()
		} else if !errors.Is(err, ErrMarshalling) {
			t.Fatalf("error %v does not wrap ErrMarshalling", err)
		}
	})
}

func FuzzReadFrame(f *testing.F) {
	f.Add(frame(&ConnectRequest{Passwd: make([]byte, 16), HasReadOnly: true}), uint16(0))
	f.Add(append(frame(&RequestHeader{Xid: 1, Type: OpPing}), frame(&RequestHeader{Xid: 2, Type: OpPing})...), uint16(8))
	f.Add([]byte{0, 0, 0, 5, 1, 2}, uint16(10))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint16(10))
	f.Add([]byte("ruok\n"), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		limit := int(max)
		if limit == 0 {
			limit = DefaultMaxBuffer
		}
		// Function form, reusing the previous payload's buffer.
		r := bytes.NewReader(data)
		var buf []byte
		var frames [][]byte
		for {
			p, err := ReadFrame(r, buf, int(max))
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				break
			}
			if len(p) > limit {
				t.Fatalf("%d-byte frame over max %d", len(p), limit)
			}
			frames = append(frames, append([]byte(nil), p...))
			buf = p[:0]
		}
		// The FrameReader sees the same frames.
		fr := NewFrameReader(bytes.NewReader(data), int(max))
		for i := 0; ; i++ {
			p, err := fr.ReadFrame()
			if err != nil {
				if i != len(frames) {
					t.Fatalf("FrameReader stopped after %d frames, ReadFrame after %d", i, len(frames))
				}
				break
			}
			if i >= len(frames) || !bytes.Equal(p, frames[i]) {
				t.Fatalf("FrameReader frame %d differs", i)
			}
		}
		// Frames re-encode to a prefix of the input.
		var out []byte
		for _, p := range frames {
			out = AppendFrame(out, p)
		}
		if !bytes.HasPrefix(data, out) {
			t.Fatal("re-framed frames are not a prefix of the input")
		}
	})
}
