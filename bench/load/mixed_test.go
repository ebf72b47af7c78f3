package load

import (
	"encoding/binary"
	"testing"

	"github.com/corral-db/corral/wire"
)

// decodedRequest is one request of a batch as the server would read it.
type decodedRequest struct {
	op   wire.Op
	path string
	data []byte
}

// decodeMixedBatch splits a batch into frames and decodes the getData and
// setData requests strictly.
func decodeMixedBatch(t *testing.T, b []byte) []decodedRequest {
	t.Helper()
	var out []decodedRequest
	for len(b) > 0 {
		n := int(binary.BigEndian.Uint32(b))
		d := wire.NewDecoder(b[4 : 4+n])
		b = b[4+n:]
		d.Int() // xid
		op := wire.Op(d.Int())
		r := decodedRequest{op: op, path: d.String()}
		switch op {
		case wire.OpGetData:
			if d.Bool() {
				t.Fatalf("getData %s sets a watch", r.path)
			}
		case wire.OpSetData:
			r.data = d.Buffer()
			if v := d.Int(); v != -1 {
				t.Fatalf("setData %s version %d", r.path, v)
			}
		default:
			t.Fatalf("unexpected op %d", op)
		}
		if d.Err() != nil || d.Remaining() != 0 {
			t.Fatalf("op %d: %v, %d bytes left", op, d.Err(), d.Remaining())
		}
		out = append(out, r)
	}
	return out
}

func TestMixedSourceReadShareIsExactPerHundred(t *testing.T) {
	ks := &KeySpace{Root: DefaultRoot, Prefix: "k", Counts: []int64{7, 5}}
	picker, err := NewKeyPicker(ks)
	if err != nil {
		t.Fatal(err)
	}
	data := Value(1024)
	for _, pct := range []int{0, 1, 30, 50, 70, 99, 100} {
		s := NewMixedSource(picker, pct, data, 42)
		var e wire.Encoder
		const n = 1000
		reads := 0
		readsInDeck := 0
		for i := range n {
			e.Reset()
			read := s.NextOp(&e, int32(i+1))
			reqs := decodeMixedBatch(t, e.B)
			if len(reqs) != 1 {
				t.Fatalf("%d requests in one batch", len(reqs))
			}
			if read != (reqs[0].op == wire.OpGetData) {
				t.Fatalf("nextOp said read=%v for op %d", read, reqs[0].op)
			}
			if !read && len(reqs[0].data) != len(data) {
				t.Fatalf("setData of %d bytes, want %d", len(reqs[0].data), len(data))
			}
			if read {
				reads++
				readsInDeck++
			}
			if (i+1)%ratioDeck == 0 {
				if readsInDeck != pct {
					t.Errorf("%d%%: %d reads in requests %d-%d", pct, readsInDeck, i+1-ratioDeck, i)
				}
				readsInDeck = 0
			}
		}
		if reads != n*pct/100 || s.Reads != int64(reads) || s.Writes != int64(n-reads) {
			t.Errorf("%d%%: %d reads of %d (source counted %d reads, %d writes)", pct, reads, n, s.Reads, s.Writes)
		}
	}
}

func TestMixedSourceInterleavesReadsAndWrites(t *testing.T) {
	picker, err := NewKeyPicker(&KeySpace{Root: DefaultRoot, Prefix: "k", Counts: []int64{10}})
	if err != nil {
		t.Fatal(err)
	}
	s := NewMixedSource(picker, 50, nil, 7)
	var e wire.Encoder
	// Unshuffled, the first 50 would all be reads.
	runs, prev := 0, false
	for i := range ratioDeck {
		read := s.NextOp(&e, int32(i+1))
		if i == 0 || read != prev {
			runs++
		}
		prev = read
	}
	if runs < 10 {
		t.Errorf("%d runs of reads and writes in 100 requests at 50%%: not shuffled", runs)
	}
}

func TestKeyPickerCoversTheKeySpaceUniformly(t *testing.T) {
	ks := &KeySpace{Root: "/r", Prefix: "p", Counts: []int64{50, 30, 0, 20}}
	picker, err := NewKeyPicker(ks)
	if err != nil {
		t.Fatal(err)
	}
	if picker.total() != 100 {
		t.Fatalf("total %d", picker.total())
	}
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "/r/p-0-0"}, {49, "/r/p-0-49"}, {50, "/r/p-1-0"}, {79, "/r/p-1-29"}, {80, "/r/p-3-0"}, {99, "/r/p-3-19"}} {
		if got := string(picker.appendPath(nil, c.n)); got != c.want {
			t.Errorf("node %d = %s, want %s", c.n, got, c.want)
		}
	}
	// Every node is addressed about equally often (expected 1000 each;
	// the seed is fixed, so this is exact, not flaky).
	s := NewMixedSource(picker, 100, nil, 3)
	hits := map[string]int{}
	var e wire.Encoder
	for i := range 100_000 {
		e.Reset()
		s.NextOp(&e, int32(i+1))
		hits[decodeMixedBatch(t, e.B)[0].path]++
	}
	if len(hits) != 100 {
		t.Fatalf("%d distinct nodes addressed, want 100", len(hits))
	}
	for p, h := range hits {
		if h < 850 || h > 1150 {
			t.Errorf("%s addressed %d times of 100000, want about 1000", p, h)
		}
	}
	if _, err := NewKeyPicker(&KeySpace{Counts: []int64{0}}); err == nil {
		t.Error("an empty key space was accepted")
	}
}
