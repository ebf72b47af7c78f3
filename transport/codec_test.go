package transport

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-db/corral/zab"
)

// allTypes lists every message type zab defines.
func allTypes() []zab.MsgType {
	var ts []zab.MsgType
	for t := zab.MsgType(1); t <= lastMsgType; t++ {
		ts = append(ts, t)
	}
	return ts
}

// TestCodecKnowsEveryEnumValue fails when zab grows a message type, sync
// mode or state the codec does not list (the decoder would refuse it).
func TestCodecKnowsEveryEnumValue(t *testing.T) {
	for _, typ := range allTypes() {
		if strings.HasPrefix(typ.String(), "msg(") {
			t.Errorf("type %d has no name: the codec lists types zab lacks", typ)
		}
	}
	if s := (lastMsgType + 1).String(); !strings.HasPrefix(s, "msg(") {
		t.Errorf("zab has a message type %s after %v: add it to the codec", s, lastMsgType)
	}
	if s := (lastSync + 1).String(); !strings.HasPrefix(s, "sync(") {
		t.Errorf("zab has a sync mode %s after %v: add it to the codec", s, lastSync)
	}
	if s := (lastState + 1).String(); !strings.HasPrefix(s, "state(") {
		t.Errorf("zab has a state %s after %v: add it to the codec", s, lastState)
	}
}

func randUint64(r *rand.Rand) uint64 {
	switch r.IntN(5) {
	case 0:
		return 0
	case 1:
		return math.MaxUint64
	case 2:
		return uint64(r.IntN(300))
	default:
		return r.Uint64() >> r.IntN(64)
	}
}

func randUint32(r *rand.Rand) uint32 {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return math.MaxUint32
	default:
		return r.Uint32() >> r.IntN(32)
	}
}

func randBytes(r *rand.Rand) []byte {
	switch r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []byte{}
	default:
		b := make([]byte, r.IntN(200))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
}

// randomMessage fills every field of a message of type typ, whether or
// not the type uses it, so that every field's encoding is exercised.
func randomMessage(r *rand.Rand, typ zab.MsgType) zab.Message {
	m := zab.Message{
		Type:         typ,
		From:         randUint64(r),
		To:           randUint64(r),
		Session:      randUint64(r),
		Epoch:        randUint32(r),
		CurrentEpoch: randUint32(r),
		Zxid:         zab.Zxid(randUint64(r)),
		Prev:         zab.Zxid(randUint64(r)),
		Commit:       zab.Zxid(randUint64(r)),
		Sync:         zab.SyncMode(r.IntN(int(lastSync) + 1)),
		Vote: zab.Vote{
			Leader: randUint64(r),
			Zxid:   zab.Zxid(randUint64(r)),
			Epoch:  randUint32(r),
			Round:  randUint64(r),
		},
		State:     zab.StateType(r.IntN(int(lastState) + 1)),
		NonVoting: r.IntN(2) == 0,
		Reject:    r.IntN(2) == 0,
	}
	if r.IntN(2) == 0 {
		m.Group = 1 + r.Uint64N(1<<40)
	}
	if r.IntN(3) == 0 {
		// Decoded lists are never nil: send them non-nil.
		mb := &zab.Membership{Voters: make([]uint64, r.IntN(8)), Observers: make([]uint64, r.IntN(3))}
		for _, ids := range [][]uint64{mb.Voters, mb.Observers} {
			for i := range ids {
				ids[i] = randUint64(r)
			}
		}
		m.Membership, m.MembershipZxid = mb, zab.Zxid(randUint64(r))
	}
	switch r.IntN(4) {
	case 0:
	case 1:
		m.Entries = []zab.Entry{}
	default:
		m.Entries = make([]zab.Entry, 1+r.IntN(20))
		for i := range m.Entries {
			m.Entries[i] = zab.Entry{Zxid: zab.Zxid(randUint64(r)), Data: randBytes(r)}
		}
	}
	if r.IntN(3) == 0 {
		m.Snapshot = &zab.Snapshot{Zxid: zab.Zxid(randUint64(r)), Data: randBytes(r)}
	}
	return m
}

func TestCodecRoundTripAllTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range allTypes() {
		for i := 0; i < 300; i++ {
			m := randomMessage(r, typ)
			b := AppendMessage(nil, m)
			if n := EncodedSize(m); n != len(b) {
				t.Fatalf("%v: EncodedSize %d, encoding is %d bytes", typ, n, len(b))
			}
			got, err := DecodeMessage(b)
			if err != nil {
				t.Fatalf("%v: decode: %v\n%+v", typ, err, m)
			}
			if !reflect.DeepEqual(got, m) {
				t.Fatalf("%v: round trip differs\nsent %+v\ngot  %+v", typ, m, got)
			}
			// The split encoding used by frame writers is the same bytes.
			head, tail := encodeHead([]byte("prefix"), m)
			if !bytes.Equal(append(head[len("prefix"):], tail...), b) {
				t.Fatalf("%v: encodeHead differs from AppendMessage", typ)
			}
		}
	}
}

// TestCodecDecodedDataDoesNotOverlap: appending to a decoded entry must
// not overwrite the bytes after it in the frame.
func TestCodecDecodedDataDoesNotOverlap(t *testing.T) {
	m := zab.Message{Type: zab.MsgProposal, Entries: []zab.Entry{{Zxid: 1, Data: []byte("ab")}, {Zxid: 2, Data: []byte("cd")}}}
	got, err := DecodeMessage(AppendMessage(nil, m))
	if err != nil {
		t.Fatal(err)
	}
	_ = append(got.Entries[0].Data, 'X', 'X', 'X', 'X')
	if string(got.Entries[1].Data) != "cd" {
		t.Fatalf("second entry overwritten: %q", got.Entries[1].Data)
	}
}

func TestCodecRejectsTruncations(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range allTypes() {
		b := AppendMessage(nil, randomMessage(r, typ))
		for n := 0; n < len(b); n++ {
			if _, err := DecodeMessage(b[:n]); !errors.Is(err, ErrMalformed) {
				t.Fatalf("%v: prefix of %d/%d bytes: err %v, want ErrMalformed", typ, n, len(b), err)
			}
		}
	}
}

func TestCodecRejectsBadInput(t *testing.T) {
	good := AppendMessage(nil, zab.Message{Type: zab.MsgPing, From: 1, To: 2, Commit: 7})
	mutate := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	bigEpoch := AppendMessage(nil, zab.Message{Type: zab.MsgPing})
	// Replace the Epoch uvarint (the fourth uvarint, after From, To and
	// Session which are one byte each) by one above 32 bits.
	bigEpoch = append(append(append([]byte(nil), bigEpoch[:headSize+3]...), 0x80, 0x80, 0x80, 0x80, 0x10), bigEpoch[headSize+4:]...)
	cases := map[string][]byte{
		"empty":          {},
		"version":        mutate(func(b []byte) []byte { b[0] = 9; return b }),
		"type 0":         mutate(func(b []byte) []byte { b[1] = 0; return b }),
		"unknown type":   mutate(func(b []byte) []byte { b[1] = byte(lastMsgType + 1); return b }),
		"unknown flags":  mutate(func(b []byte) []byte { b[2] = 0x80; return b }),
		"unknown sync":   mutate(func(b []byte) []byte { b[3] = byte(lastSync + 1); return b }),
		"unknown state":  mutate(func(b []byte) []byte { b[4] = byte(lastState + 1); return b }),
		"trailing bytes": mutate(func(b []byte) []byte { return append(b, 0) }),
		"epoch overflow": bigEpoch,
		"varint overflow": append(append([]byte(nil), good[:headSize]...),
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
		"snapshot flag without snapshot": mutate(func(b []byte) []byte { b[2] |= flagSnapshot; return b }),
	}
	// An entry count far beyond what the bytes could hold.
	lie := append([]byte(nil), good[:len(good)-1]...)
	lie = append(lie, 0xff, 0xff, 0xff, 0xff, 0x0f)
	cases["entry count lie"] = lie
	for name, b := range cases {
		if _, err := DecodeMessage(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err %v, want ErrMalformed", name, err)
		}
	}
	if _, err := DecodeMessage(bigEpoch); err == nil || !strings.Contains(err.Error(), "overflows 32 bits") {
		t.Errorf("epoch overflow: err %v, want an overflow", err)
	}
}

func FuzzDecodeMessage(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range allTypes() {
		f.Add(AppendMessage(nil, randomMessage(r, typ)))
	}
	f.Add([]byte{})
	f.Add([]byte{codecVersion, byte(zab.MsgProposal), 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		// What decodes re-encodes to something that decodes the same
		// (varints need not be minimal in the input, so the bytes may
		// differ).
		b2 := AppendMessage(nil, m)
		if len(b2) != EncodedSize(m) {
			t.Fatalf("EncodedSize %d, encoding %d", EncodedSize(m), len(b2))
		}
		m2, err := DecodeMessage(b2)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-encoding differs\n%+v\n%+v", m, m2)
		}
	})
}

func BenchmarkEncodeProposal(b *testing.B) {
	m := zab.Message{Type: zab.MsgProposal, From: 1, To: 2, Session: 99, Prev: zab.NewZxid(3, 9)}
	for i := 0; i < 64; i++ {
		m.Entries = append(m.Entries, zab.Entry{Zxid: zab.NewZxid(3, uint32(10+i)), Data: make([]byte, 200)})
	}
	b.ReportAllocs()
	b.SetBytes(int64(EncodedSize(m)))
	var buf []byte
	for b.Loop() {
		buf = AppendMessage(buf[:0], m)
	}
}

func BenchmarkDecodeProposal(b *testing.B) {
	m := zab.Message{Type: zab.MsgProposal, From: 1, To: 2, Session: 99, Prev: zab.NewZxid(3, 9)}
	for i := 0; i < 64; i++ {
		m.Entries = append(m.Entries, zab.Entry{Zxid: zab.NewZxid(3, uint32(10+i)), Data: make([]byte, 200)})
	}
	enc := AppendMessage(nil, m)
	b.ReportAllocs()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if _, err := DecodeMessage(enc); err != nil {
			b.Fatal(err)
		}
	}
}
