package vfs

import (
	"bytes"
	"errors"
	"testing"
)

// WriteZeros overwrites exactly [from, to) with zeros, in pieces, and a
// closed stop ends it before it writes.
func TestWriteZeros(t *testing.T) {
	m := NewMem()
	f, err := m.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	size := int64(2*ZeroWrite + 100)
	if _, err := f.Write(bytes.Repeat([]byte{7}, int(size))); err != nil {
		t.Fatal(err)
	}
	from, to := int64(10), size-10
	if err := WriteZeros(f, from, to, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, size)
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		want := byte(7)
		if int64(i) >= from && int64(i) < to {
			want = 0
		}
		if b != want {
			t.Fatalf("byte %d is %d, want %d", i, b, want)
		}
	}

	stop := make(chan struct{})
	close(stop)
	if err := WriteZeros(f, 0, size, stop); !errors.Is(err, ErrStopped) {
		t.Fatalf("stopped fill returned %v, want ErrStopped", err)
	}
	if _, err := f.ReadAt(got[:1], 0); err != nil || got[0] != 7 {
		t.Fatalf("a stopped fill wrote: first byte %d (%v)", got[0], err)
	}
}
