package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/corral-db/corral/wire"
)

// syncWriter collects what the writer goroutine writes.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	got chan struct{}
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.mu.Unlock()
	select {
	case w.got <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *syncWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// decodeInts decodes length-prefixed frames each holding one int.
func decodeInts(t *testing.T, b []byte) []int32 {
	t.Helper()
	var out []int32
	for len(b) > 0 {
		if len(b) < 8 || binary.BigEndian.Uint32(b) != 4 {
			t.Fatalf("not a 4-byte frame: % x", b[:min(len(b), 8)])
		}
		out = append(out, int32(binary.BigEndian.Uint32(b[4:])))
		b = b[8:]
	}
	return out
}

func putInt(o *outbuf, v int32) {
	o.frame(func(e *wire.Encoder) { e.Int(v) })
}

// TestTryReleaseHandsTheRestToTheWriter: what a non-blocking write does
// not take goes to the writer goroutine ahead of frames queued since, so
// the client still reads every frame once and in order, whether the
// socket took all of it, part of it or nothing.
func TestTryReleaseHandsTheRestToTheWriter(t *testing.T) {
	for _, took := range []int{-1, 0, 3, 8, 13} { // -1: everything
		o := newOutbuf(1 << 20)
		w := &syncWriter{got: make(chan struct{}, 1)}
		done := make(chan error, 1)
		go func() { done <- o.run(w, nil) }()

		var direct []byte
		frames := 0
		o.hold()
		for v := int32(1); v <= 3; v++ {
			putInt(o, v)
		}
		o.tryRelease(func(b []byte) (int, error) {
			k := took
			if k < 0 || k > len(b) {
				k = len(b)
			}
			direct = append(direct, b[:k]...)
			putInt(o, 4) // queued by another goroutine during the write
			return k, nil
		}, func(n int) { frames += n })
		putInt(o, 5)
		o.finish()
		if err := <-done; err != nil {
			t.Fatalf("took %d: writer: %v", took, err)
		}
		all := append(direct, w.bytes()...)
		got := decodeInts(t, all)
		want := []int32{1, 2, 3, 4, 5}
		if !slices.Equal(got, want) {
			t.Errorf("took %d: client read %v, want %v", took, got, want)
		}
		if took < 0 && frames != 3 {
			t.Errorf("a whole write counted %d frames, want 3", frames)
		}
		if took >= 0 && frames != 0 {
			t.Errorf("took %d: a partial write counted %d frames, want 0 (the writer counts them)", took, frames)
		}
	}
}

// TestTryReleaseWaitsForTheLastHolder: with two holders (the reader running
// a write to completion, and apply inside it) only the last one writes.
func TestTryReleaseWaitsForTheLastHolder(t *testing.T) {
	o := newOutbuf(1 << 20)
	o.hold()
	o.hold()
	putInt(o, 7)
	calls := 0
	o.tryRelease(func(b []byte) (int, error) { calls++; return len(b), nil }, nil)
	if calls != 0 {
		t.Fatal("the first of two holders wrote")
	}
	var out bytes.Buffer
	o.release(&out, nil)
	if got := decodeInts(t, out.Bytes()); !slices.Equal(got, []int32{7}) {
		t.Fatalf("the last holder wrote %v, want [7]", got)
	}
}

// TestTryReleaseWriteErrorClosesTheBuffer: a failed write ends the
// connection's output, as a failed write of the writer does.
func TestTryReleaseWriteErrorClosesTheBuffer(t *testing.T) {
	o := newOutbuf(1 << 20)
	o.hold()
	putInt(o, 1)
	boom := errors.New("reset")
	o.tryRelease(func([]byte) (int, error) { return 0, boom }, nil)
	o.mu.Lock()
	closed, err := o.closed, o.err
	o.mu.Unlock()
	if !closed || !errors.Is(err, boom) {
		t.Fatalf("after a failed write: closed %v, err %v; want closed with %v", closed, err, boom)
	}
	if err := o.run(io.Discard, nil); !errors.Is(err, boom) {
		t.Fatalf("writer ended with %v, want %v", err, boom)
	}
}
