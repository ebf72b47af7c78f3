package ring

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func TestEncodeRoundTrip(t *testing.T) {
	for i := 0; i < *seeds; i++ {
		r := randomRing(newRNG(t, i))
		b := r.Encode()
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("seed %d: Decode(Encode(%v)): %v", i, r, err)
		}
		if got.Version() != r.Version() || !slices.Equal(got.tokens, r.tokens) {
			t.Fatalf("seed %d: round trip %v -> %v", i, r, got)
		}
		if !bytes.Equal(got.Encode(), b) {
			t.Fatalf("seed %d: encoding not stable", i)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	r, err := New(3, []Token{{5, 1}, {9, 2}})
	if err != nil {
		t.Fatal(err)
	}
	good := r.Encode()
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for name, b := range map[string][]byte{
		"empty":     nil,
		"header":    good[:headerLen-1],
		"truncated": good[:len(good)-1],
		"trailing":  append(bytes.Clone(good), 0),
		"format":    mut(func(b []byte) []byte { b[0] = 2; return b }),
		"no tokens": mut(func(b []byte) []byte { b[12] = 0; return b[:headerLen] }),
		"huge n":    mut(func(b []byte) []byte { b[9] = 0xff; return b }),
		"zero group": mut(func(b []byte) []byte {
			b[headerLen+8+3] = 0
			return b
		}),
		"unsorted": mut(func(b []byte) []byte {
			b[headerLen+entryLen+7] = 5 // second token 9 -> 5, equal to the first
			return b
		}),
	} {
		if _, err := Decode(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Decode(%x) = %v, want ErrCorrupt", name, b, err)
		}
	}
}

// FuzzDecode: Decode never panics, and whatever it accepts re-encodes to
// the same bytes (the encoding is canonical) and is a valid ring.
func FuzzDecode(f *testing.F) {
	for i := 0; i < 8; i++ {
		f.Add(randomRing(newRNG(nil, i)).Encode())
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode error %v is not ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(r.Encode(), b) {
			t.Fatalf("Decode accepted a non-canonical encoding %x (re-encodes to %x)", b, r.Encode())
		}
		if _, err := New(r.Version(), r.Tokens()); err != nil {
			t.Fatalf("Decode accepted an invalid ring: %v", err)
		}
		_ = r.Owner(b)
	})
}
