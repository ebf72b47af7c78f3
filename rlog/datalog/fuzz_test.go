package datalog

import (
	"bytes"
	"testing"
)

// FuzzDecodeRecord: any bytes decode to a record, a clean end or an error,
// never a panic; what decodes re-encodes to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(appendRecord(nil, Meta{Zxid: 1, Log: 2, Offset: 3}, []byte("hello")))
	f.Add(make([]byte, recordHeaderSize))
	f.Add([]byte{1, 2, 3})
	long := appendRecord(nil, Meta{Zxid: 7}, bytes.Repeat([]byte{9}, 100))
	f.Add(long[:50])
	f.Fuzz(func(t *testing.T, b []byte) {
		m, p, size, ok, err := DecodeRecord(b)
		if err != nil || !ok {
			return
		}
		if size > int64(len(b)) {
			t.Fatalf("size %d beyond the input's %d bytes", size, len(b))
		}
		if again := appendRecord(nil, m, p); !bytes.Equal(again, b[:size]) {
			t.Fatalf("re-encoding differs")
		}
	})
}
