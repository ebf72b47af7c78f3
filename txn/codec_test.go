package txn

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/corral-db/corral/wire"
)

func sampleTxns() []struct {
	h Header
	t Txn
} {
	acl := []wire.ACL{{Perms: wire.PermAll, ID: wire.AnyoneID}, {Perms: 5, ID: wire.Id{Scheme: "digest", ID: "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="}}}
	h := Header{SessionID: 0x0100000000000001, Cxid: 7, Zxid: 0x100000002, Time: 1_700_000_000_123, Type: wire.OpCreate}
	type pair = struct {
		h Header
		t Txn
	}
	with := func(op wire.Op, t Txn) pair {
		hh := h
		hh.Type = op
		t.Type = op
		return pair{hh, t}
	}
	return []pair{
		with(wire.OpCreate, Txn{Path: "/a", Data: []byte("hello"), ACL: acl, Ephemeral: true, ParentCVersion: 3}),
		with(wire.OpCreate, Txn{Path: "/nil-data", ParentCVersion: -1}),
		with(wire.OpCreate2, Txn{Path: "/empty-data", Data: []byte{}, ACL: []wire.ACL{}, ParentCVersion: math.MaxInt32}),
		with(wire.OpCreateContainer, Txn{Path: "/c", Data: []byte{0, 1, 2}, ACL: acl[:1], ParentCVersion: math.MinInt32}),
		with(wire.OpCreateTTL, Txn{Path: "/t", ACL: acl, ParentCVersion: 1, TTL: 1<<40 - 1}),
		with(wire.OpDelete, Txn{Path: "/a/b/c"}),
		with(wire.OpDeleteContainer, Txn{Path: "/c"}),
		with(wire.OpSetData, Txn{Path: "/a", Data: []byte("v2"), Version: 2}),
		with(wire.OpReconfig, Txn{Path: "/zookeeper/config", Data: []byte("server.1=..."), Version: 9}),
		with(wire.OpSetACL, Txn{Path: "/a", ACL: acl, Version: -1}),
		with(wire.OpCheck, Txn{Path: "/a", Version: 4}),
		with(wire.OpCreateSession, Txn{Timeout: 30000}),
		with(wire.OpCloseSession, Txn{}),
		with(wire.OpCloseSession, Txn{Paths: []string{}}),
		with(wire.OpCloseSession, Txn{Paths: []string{"/a/e1", "/e0", ""}}),
		with(wire.OpError, Txn{Err: wire.CodeNodeExists}),
		with(wire.OpMulti, Txn{}),
		with(wire.OpMulti, Txn{Ops: []Txn{
			{Type: wire.OpCreate, Path: "/m1", Data: []byte("x"), ACL: acl, ParentCVersion: 5},
			{Type: wire.OpSetData, Path: "/m1", Data: []byte("y"), Version: 1},
			{Type: wire.OpCheck, Path: "/m1", Version: 1},
			{Type: wire.OpDelete, Path: "/m0"},
			{Type: wire.OpCreateTTL, Path: "/m2", TTL: 5, ParentCVersion: 6},
		}}),
		with(wire.OpMulti, Txn{Ops: []Txn{
			{Type: wire.OpError, Err: wire.CodeOK},
			{Type: wire.OpError, Err: wire.CodeBadVersion},
			{Type: wire.OpError, Err: wire.CodeRuntimeInconsistency},
		}}),
	}
}

func TestRoundTrip(t *testing.T) {
	for _, c := range sampleTxns() {
		b := Append(nil, &c.h, &c.t)
		if b[0] != CodecVersion {
			t.Fatalf("first byte %d, want version %d", b[0], CodecVersion)
		}
		var h Header
		var tx Txn
		if err := Decode(b, &h, &tx); err != nil {
			t.Fatalf("%v: decode: %v", c.t.Type, err)
		}
		if h != c.h {
			t.Errorf("%v: header %+v, want %+v", c.t.Type, h, c.h)
		}
		if !reflect.DeepEqual(tx, c.t) {
			t.Errorf("%v: txn\n got %#v\nwant %#v", c.t.Type, tx, c.t)
		}
		// Appending to a non-empty buffer must not disturb what is there.
		prefix := []byte("prefix")
		b2 := Append(append([]byte(nil), prefix...), &c.h, &c.t)
		if !bytes.Equal(b2[:len(prefix)], prefix) || !bytes.Equal(b2[len(prefix):], b) {
			t.Errorf("%v: Append to a non-empty slice differs", c.t.Type)
		}
	}
}

// TestSizeHintFits: Append into a slice of SizeHint's capacity never
// grows it, for every kind of transaction with its fields at their widest.
func TestSizeHintFits(t *testing.T) {
	wide := Header{SessionID: math.MinInt64, Cxid: math.MinInt32, Zxid: math.MinInt64, Time: math.MinInt64, Type: wire.OpCreate}
	for _, c := range sampleTxns() {
		for _, h := range []Header{c.h, wide} {
			tx := c.t
			tx.ParentCVersion, tx.TTL, tx.Version, tx.Timeout = math.MinInt32, math.MinInt64, math.MinInt32, math.MinInt32
			for i := range tx.Ops {
				tx.Ops[i].TTL, tx.Ops[i].Version = math.MinInt64, math.MinInt32
			}
			buf := make([]byte, 0, SizeHint(&tx))
			if b := Append(buf, &h, &tx); len(b) > cap(buf) {
				t.Errorf("%v: encoding is %d bytes, SizeHint %d", tx.Type, len(b), cap(buf))
			}
		}
	}
}

func TestDecodeDoesNotAlias(t *testing.T) {
	h := Header{Zxid: 1, Type: wire.OpSetData}
	tx := Txn{Type: wire.OpSetData, Path: "/a", Data: []byte("abc"), Version: 1}
	b := Append(nil, &h, &tx)
	var got Txn
	if err := Decode(b, &h, &got); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0xff
	}
	if string(got.Data) != "abc" || got.Path != "/a" {
		t.Fatalf("decoded txn changed with its input buffer: %+v", got)
	}
}

// TestDecodeShared: DecodeShared's Data are slices of its input, capped
// so that appending to one cannot write over the bytes after it.
func TestDecodeShared(t *testing.T) {
	c := sampleTxns()
	multi := c[len(c)-2]
	if multi.t.Type != wire.OpMulti {
		t.Fatalf("sample %v is not a multi", multi.t.Type)
	}
	for _, s := range []struct {
		h Header
		t Txn
	}{{Header{Zxid: 1, Type: wire.OpSetData}, Txn{Type: wire.OpSetData, Path: "/a", Data: []byte("abc"), Version: 1}}, {multi.h, multi.t}} {
		b := Append(nil, &s.h, &s.t)
		var h Header
		var got Txn
		if err := DecodeShared(b, &h, &got); err != nil {
			t.Fatal(err)
		}
		datas := []*[]byte{&got.Data}
		for i := range got.Ops {
			datas = append(datas, &got.Ops[i].Data)
		}
		n := 0
		for _, d := range datas {
			if len(*d) == 0 {
				continue
			}
			n++
			if cap(*d) != len(*d) {
				t.Errorf("%v: data's capacity %d beyond its length %d", s.t.Type, cap(*d), len(*d))
			}
			(*d)[0] ^= 0xff
			if !bytes.Contains(b, *d) {
				t.Errorf("%v: data is not a slice of the record", s.t.Type)
			}
		}
		if n == 0 {
			t.Fatalf("%v: no data to check", s.t.Type)
		}
	}
}

func TestDecodeReusesOps(t *testing.T) {
	c := sampleTxns()
	multi := c[len(c)-2]
	b := Append(nil, &multi.h, &multi.t)
	var h Header
	tx := Txn{Ops: make([]Txn, 0, 8)}
	backing := &tx.Ops[:1][0]
	if err := Decode(b, &h, &tx); err != nil {
		t.Fatal(err)
	}
	if &tx.Ops[0] != backing {
		t.Error("Decode did not reuse the Ops backing array")
	}
	if !reflect.DeepEqual(tx, multi.t) {
		t.Errorf("got %#v", tx)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := Append(nil, &Header{Zxid: 5, Type: wire.OpCreate}, &Txn{Type: wire.OpCreate, Path: "/abc", Data: []byte("d"), ACL: wire.OpenACLUnsafe})
	cases := map[string][]byte{
		"empty":        nil,
		"version":      append([]byte{99}, good[1:]...),
		"trailing":     append(append([]byte(nil), good...), 0),
		"unknown type": Append(nil, &Header{}, &Txn{Type: wire.OpGetData}),
		"nested multi": Append(nil, &Header{}, &Txn{Type: wire.OpMulti, Ops: []Txn{{Type: wire.OpMulti}}}),
		"huge string":  {CodecVersion, 0, 0, 0, 0, 0, 2 /*create*/, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"bad flag":     {CodecVersion, 0, 0, 0, 0, 0, 2, 0, 0, 0, 7, 0},
		"int32 ovf":    {CodecVersion, 0, 0x80, 0x80, 0x80, 0x80, 0x20, 0, 0, 0, 0},
	}
	for i := 1; i < len(good); i++ {
		cases["truncated at "+string(rune('0'+i%10))+string(rune('a'+i/10))] = good[:i]
	}
	for name, b := range cases {
		var h Header
		var tx Txn
		err := Decode(b, &h, &tx)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !errors.Is(err, wire.ErrMarshalling) {
			t.Errorf("%s: error %v does not wrap wire.ErrMarshalling", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, c := range sampleTxns() {
		f.Add(Append(nil, &c.h, &c.t))
	}
	f.Add([]byte{})
	f.Add([]byte{CodecVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		var h Header
		var tx Txn
		err := Decode(b, &h, &tx)
		// DecodeShared accepts and refuses exactly what Decode does,
		// with the same value.
		var hs Header
		var txs Txn
		if errs := DecodeShared(b, &hs, &txs); (errs == nil) != (err == nil) ||
			err == nil && (hs != h || !reflect.DeepEqual(txs, tx)) {
			t.Fatalf("DecodeShared (%v) differs from Decode (%v)", errs, err)
		}
		if err != nil {
			if !errors.Is(err, wire.ErrMarshalling) {
				t.Fatalf("error %v does not wrap wire.ErrMarshalling", err)
			}
			return
		}
		// Whatever decodes re-encodes canonically and decodes to the same
		// value.
		enc := Append(nil, &h, &tx)
		var h2 Header
		var tx2 Txn
		if err := Decode(enc, &h2, &tx2); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if h2 != h || !reflect.DeepEqual(tx2, tx) {
			t.Fatalf("round trip changed the value:\n%#v\n%#v", tx, tx2)
		}
		if enc2 := Append(nil, &h2, &tx2); !bytes.Equal(enc, enc2) {
			t.Fatal("encoding is not canonical")
		}
	})
}

func BenchmarkAppendCreate(b *testing.B) {
	h := Header{SessionID: 0x0100000000000001, Cxid: 7, Zxid: 0x100000002, Time: 1_700_000_000_123, Type: wire.OpCreate}
	tx := Txn{Type: wire.OpCreate, Path: "/bench/node-0000000001", Data: make([]byte, 64), ACL: wire.OpenACLUnsafe, ParentCVersion: 2}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = Append(buf[:0], &h, &tx)
	}
}

func BenchmarkDecodeCreate(b *testing.B) {
	h := Header{SessionID: 0x0100000000000001, Cxid: 7, Zxid: 0x100000002, Time: 1_700_000_000_123, Type: wire.OpCreate}
	tx := Txn{Type: wire.OpCreate, Path: "/bench/node-0000000001", Data: make([]byte, 64), ACL: wire.OpenACLUnsafe, ParentCVersion: 2}
	buf := Append(nil, &h, &tx)
	b.ReportAllocs()
	for b.Loop() {
		if err := Decode(buf, &h, &tx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendShared: the record is Append's, and afterwards every Data of
// the txn (a multi's ops' too) is the copy inside the record, capped so
// that appending to it cannot write over the bytes after it.
func TestAppendShared(t *testing.T) {
	for _, tc := range sampleTxns() {
		tx := tc.t
		tx.Ops = append([]Txn(nil), tc.t.Ops...)
		want := Append(nil, &tc.h, &tc.t)
		got := AppendShared(make([]byte, 0, SizeHint(&tx)), &tc.h, &tx)
		if !bytes.Equal(got, want) {
			t.Fatalf("%v: AppendShared encodes %x, Append %x", tc.h.Type, got, want)
		}
		datas := []*[]byte{&tx.Data}
		for i := range tx.Ops {
			datas = append(datas, &tx.Ops[i].Data)
		}
		for _, d := range datas {
			if len(*d) == 0 {
				continue
			}
			if cap(*d) != len(*d) {
				t.Fatalf("%v: shared data has room to grow (len %d cap %d)", tc.h.Type, len(*d), cap(*d))
			}
			before := append([]byte(nil), *d...)
			i := bytes.Index(got, before)
			(*d)[0]++ // must show in the record: the bytes are shared
			if i < 0 || bytes.Equal(got, want) {
				t.Fatalf("%v: data %q is not the record's own bytes", tc.h.Type, before)
			}
			(*d)[0]--
		}
	}
}
