package server

import (
	"bytes"
	"testing"

	"github.com/corral-db/corral/zab"
)

// FuzzDecodeCheckpoint: a sidecar read back at restart may be damaged in
// any way; decoding it returns entries or an error, never panics, and
// what it returns encodes and decodes to the same entries.
func FuzzDecodeCheckpoint(f *testing.F) {
	for _, ents := range [][]zab.Entry{
		nil,
		{{Zxid: 1, Data: []byte("x")}},
		{{Zxid: 5, Data: []byte("a")}, {Zxid: 7}, {Zxid: 1 << 33, Data: bytes.Repeat([]byte("b"), 300)}},
	} {
		var b bytes.Buffer
		if err := encodeCheckpoint(&b, ents); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
		f.Add(append(bytes.Clone(b.Bytes()), 0, 1, 2, 3)) // a recycled spare's tail
	}
	f.Add([]byte(checkpointMagicV1 + "\x01\x09\x02ok\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ents, err := decodeCheckpoint(b)
		if err != nil {
			return
		}
		roundTripCheckpoint(t, ents)
	})
}
