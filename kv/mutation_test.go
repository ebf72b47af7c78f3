package kv

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func sampleMutations() []*Mutation {
	return append([]*Mutation{
		{Op: OpPut, ReqID: 7, Table: "t", Row: []byte("r\x00"), Cells: []Cell{{"cf", []byte("q"), []byte("v")}, {"cf2", nil, nil}}},
		{Op: OpDelete, Table: "t", Row: []byte("r"), Delete: Delete{Scope: ScopeRow}},
		{Op: OpDelete, Table: "t", Row: []byte("r"), Delete: Delete{Scope: ScopeFamily, Family: "cf"}},
		{Op: OpDelete, Table: "t", Row: []byte("r"), Delete: Delete{Scope: ScopeColumn, Family: "cf", Qualifier: []byte("q")}},
		{Op: OpCheckAndPut, ReqID: 1 << 60, Table: "t", Row: []byte("r"), Cells: []Cell{{"cf", []byte("q"), []byte("2")}}, Cond: Condition{Family: "cf", Qualifier: []byte("q"), Value: []byte("1")}},
		{Op: OpCheckAndDelete, Table: "t", Row: []byte("r"), Delete: Delete{Scope: ScopeRow}, Cond: Condition{Family: "cf", Absent: true}},
		{Op: OpCreateTable, Table: "users", Families: []FamilySpec{{"cf", 3}, {"meta", 0}}},
		{Op: OpDropTable, Table: "users"},
		{Op: OpPut, ReqID: 9, Client: 1 << 63, Seq: 300, Table: "t", Row: []byte("r"), Cells: []Cell{{"cf", []byte("q"), []byte("v")}}},
		{Op: OpCheckAndDelete, Client: 5, Seq: 1, Table: "t", Row: []byte("r"), Delete: Delete{Scope: ScopeRow}, Cond: Condition{Family: "cf", Absent: true}},
	}, moveSampleMutations()...)
}

func TestMutationRoundTrip(t *testing.T) {
	for _, m := range sampleMutations() {
		b, err := m.Encode()
		if err != nil {
			t.Fatalf("%v: encode: %v", m.Op, err)
		}
		got, err := DecodeMutation(b)
		if err != nil {
			t.Fatalf("%v: decode: %v", m.Op, err)
		}
		b2, err := got.Encode()
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("%v: re-encoding differs (%v)", m.Op, err)
		}
		if got.Op != m.Op || got.ReqID != m.ReqID || got.Table != m.Table || !bytes.Equal(got.Row, m.Row) || len(got.Cells) != len(m.Cells) || got.Cond.Absent != m.Cond.Absent {
			t.Fatalf("%v: decoded %+v, want %+v", m.Op, got, m)
		}
		// Every strict prefix is an error, never a panic or a mutation.
		for i := 0; i < len(b); i++ {
			if _, err := DecodeMutation(b[:i]); err == nil {
				t.Fatalf("%v: prefix of %d bytes decoded", m.Op, i)
			}
		}
	}
}

func TestMutationValidate(t *testing.T) {
	big := make([]byte, MaxValueLen+1)
	bad := []*Mutation{
		{Op: OpPut, Table: "", Row: []byte("r"), Cells: []Cell{{"cf", nil, nil}}},
		{Op: OpPut, Table: "a:b", Row: []byte("r"), Cells: []Cell{{"cf", nil, nil}}},
		{Op: OpPut, Table: "t", Row: nil, Cells: []Cell{{"cf", nil, nil}}},
		{Op: OpPut, Table: "t", Row: make([]byte, MaxRowLen+1), Cells: []Cell{{"cf", nil, nil}}},
		{Op: OpPut, Table: "t", Row: []byte("r")},
		{Op: OpPut, Table: "t", Row: []byte("r"), Cells: []Cell{{"cf", nil, big}}},
		{Op: OpPut, Table: "t", Row: []byte("r"), Cells: []Cell{{"", nil, nil}}},
		{Op: OpDelete, Table: "t", Row: []byte("r")},
		{Op: OpCreateTable, Table: "t"},
		{Op: OpCreateTable, Table: "t", Families: []FamilySpec{{"a", 1}, {"a", 1}}},
		{Op: OpCreateTable, Table: strings.Repeat("x", MaxNameLen+1), Families: []FamilySpec{{"a", 1}}},
		{Op: 99, Table: "t"},
	}
	for i, m := range bad {
		if _, err := m.Encode(); !errors.Is(err, ErrInvalid) {
			t.Fatalf("case %d (%v): got %v, want ErrInvalid", i, m.Op, err)
		}
	}
}

// FuzzDecodeMutation: any bytes decode to an error or to a valid mutation
// that re-encodes to the same bytes; nothing panics.
func FuzzDecodeMutation(f *testing.F) {
	for _, m := range sampleMutations() {
		b, err := m.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMutation(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error not ErrInvalid: %v", err)
			}
			return
		}
		b, err := m.Encode()
		if err != nil {
			t.Fatalf("decoded mutation does not encode: %v", err)
		}
		if !bytes.Equal(b, data) {
			t.Fatalf("re-encoding differs:\n in  %x\n out %x", data, b)
		}
	})
}

// BenchmarkDecodeMutation decodes the paper's record put: ten 100-byte
// columns of one family, with a request id.
func BenchmarkDecodeMutation(b *testing.B) {
	m := &Mutation{Op: OpPut, Table: "usertable", Row: []byte("user6284781860667377211"), Client: 7, Seq: 9}
	for i := range 10 {
		m.Cells = append(m.Cells, Cell{Family: "f", Qualifier: fmt.Appendf(nil, "field%d", i), Value: bytes.Repeat([]byte{'v'}, 100)})
	}
	data, err := m.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeMutation(data); err != nil {
			b.Fatal(err)
		}
	}
}
