package rlog

import (
	"bytes"
	"testing"

	"github.com/corral-db/corral/rlog/datalog"
)

func TestMutationRoundTrip(t *testing.T) {
	local := datalog.Pos{Seg: 3, Off: 4096}
	ms := []Mutation{
		{Op: OpCreate, Name: "a"},
		NewAppend("log-1", NoOffset, []byte("hello")),
		NewAppend("log.2", 42, bytes.Repeat([]byte{7}, 1000)),
		{Op: OpAppend, Name: "x", Offset: 5, Length: 10, Sum: 9, Local: &local},
		{Op: OpTrim, Name: "x", Offset: 77},
		{Op: OpSeal, Name: "x"},
		{Op: OpDelete, Name: "x"},
	}
	for _, m := range ms {
		b := Encode(nil, &m)
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%+v: %v", m, err)
		}
		if !bytes.Equal(Encode(nil, &got), b) {
			t.Fatalf("%+v re-encodes differently", m)
		}
	}
}

func TestSplitAttach(t *testing.T) {
	p := []byte("payload bytes")
	m := NewAppend("l", 7, p)
	prop := Encode(nil, &m)
	wal, payload, err := SplitPayload(prop, datalog.Pos{Seg: 1, Off: 32})
	if err != nil || !bytes.Equal(payload, p) {
		t.Fatalf("split: %v %q", err, payload)
	}
	if bytes.Contains(wal, p) {
		t.Fatal("the WAL form still carries the payload")
	}
	back, err := AttachPayload(wal, payload)
	if err != nil || !bytes.Equal(back, prop) {
		t.Fatalf("attach: %v", err)
	}
	if _, err := AttachPayload(wal, []byte("other bytes!!")); err == nil {
		t.Fatal("attach of a different payload succeeded")
	}
}

func TestDecodeRejects(t *testing.T) {
	good := NewAppend("l", NoOffset, []byte("abc"))
	b := Encode(nil, &good)
	bad := map[string][]byte{
		"empty":    nil,
		"version":  append([]byte{9}, b[1:]...),
		"op":       append([]byte{1, 99}, b[2:]...),
		"trailing": append(append([]byte{}, b...), 0),
		"short":    b[:len(b)-1],
		"badsum":   append(append([]byte{}, b[:len(b)-1]...), b[len(b)-1]^1),
		"name":     Encode(nil, &Mutation{Op: OpCreate, Name: "a/b"}),
		"noname":   Encode(nil, &Mutation{Op: OpSeal}),
	}
	for what, data := range bad {
		if _, err := Decode(data); err == nil {
			t.Errorf("%s: decoded", what)
		}
	}
}

// FuzzDecodeMutation: any bytes decode or fail, never panic; what decodes
// re-encodes to the same bytes.
func FuzzDecodeMutation(f *testing.F) {
	local := datalog.Pos{Seg: 2, Off: 99}
	for _, m := range []Mutation{
		{Op: OpCreate, Name: "a"}, NewAppend("b", 3, []byte("xyz")),
		{Op: OpAppend, Name: "c", Offset: NoOffset, Length: 5, Sum: 1, Local: &local},
		{Op: OpTrim, Name: "d", Offset: 8}, {Op: OpDelete, Name: "e"},
	} {
		f.Add(Encode(nil, &m))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		if again := Encode(nil, &m); !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs: %x vs %x", again, b)
		}
	})
}
