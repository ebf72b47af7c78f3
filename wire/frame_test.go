package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func rawFrame(n int32, payload []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(n)), payload...)
}

func TestReadFrameLimits(t *testing.T) {
	const max = 100
	exact := bytes.Repeat([]byte{0xab}, max)
	p, err := ReadFrame(bytes.NewReader(rawFrame(max, exact)), nil, max)
	if err != nil || !bytes.Equal(p, exact) {
		t.Fatalf("frame of exactly max: %d bytes, %v", len(p), err)
	}
	for _, n := range []int32{max + 1, -1, -0x80000000, 0x7fffffff} {
		// Enough bytes follow that only the length check can refuse it.
		_, err := ReadFrame(bytes.NewReader(rawFrame(n, make([]byte, max+1))), nil, max)
		if !errors.Is(err, ErrFrameTooLarge) || !errors.Is(err, ErrMarshalling) {
			t.Errorf("length %d: err = %v", n, err)
		}
	}
	// The default limit is jute.maxbuffer, 0xfffff, inclusive.
	if err := CheckFrameLength(DefaultMaxBuffer, 0); err != nil {
		t.Errorf("0xfffff with default max: %v", err)
	}
	if err := CheckFrameLength(DefaultMaxBuffer+1, 0); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("0x100000 with default max: %v", err)
	}
	// An empty frame is legal framing; the record decoder rejects it later.
	if p, err := ReadFrame(bytes.NewReader(rawFrame(0, nil)), nil, max); err != nil || len(p) != 0 {
		t.Errorf("empty frame: %x, %v", p, err)
	}
}

func TestReadFrameEOF(t *testing.T) {
	if _, err := ReadFrame(bytes.NewReader(nil), nil, 0); err != io.EOF {
		t.Errorf("empty stream: %v, want io.EOF", err)
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{0, 0}), nil, 0); err != io.ErrUnexpectedEOF {
		t.Errorf("half a length: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := ReadFrame(bytes.NewReader(rawFrame(10, []byte("abc"))), nil, 0); err != io.ErrUnexpectedEOF {
		t.Errorf("short payload: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := ReadFrame(bytes.NewReader(rawFrame(10, nil)), nil, 0); err != io.ErrUnexpectedEOF {
		t.Errorf("no payload: %v, want io.ErrUnexpectedEOF", err)
	}
	fr := NewFrameReader(bytes.NewReader(rawFrame(10, []byte("abc"))), 0)
	if _, err := fr.ReadFrame(); err != io.ErrUnexpectedEOF {
		t.Errorf("FrameReader short payload: %v", err)
	}
	fr = NewFrameReader(bytes.NewReader(nil), 0)
	if _, err := fr.ReadFrame(); err != io.EOF {
		t.Errorf("FrameReader empty stream: %v", err)
	}
}

func TestReadFrameReusesBuffer(t *testing.T) {
	stream := append(rawFrame(3, []byte("abc")), rawFrame(5, []byte("hello"))...)
	r := bytes.NewReader(stream)
	buf := make([]byte, 0, 64)
	p, err := ReadFrame(r, buf, 0)
	if err != nil || string(p) != "abc" {
		t.Fatalf("first: %q, %v", p, err)
	}
	if &p[0] != &buf[:1][0] {
		t.Error("payload not read into the caller's buffer")
	}
	q, err := ReadFrame(r, p[:0], 0)
	if err != nil || string(q) != "hello" {
		t.Fatalf("second: %q, %v", q, err)
	}
	if &q[0] != &buf[:1][0] {
		t.Error("second payload not read into the caller's buffer")
	}
	// A frame larger than the buffer gets a new one.
	big := bytes.Repeat([]byte("z"), 100)
	p, err = ReadFrame(bytes.NewReader(rawFrame(100, big)), buf, 0)
	if err != nil || !bytes.Equal(p, big) {
		t.Fatalf("big: %d, %v", len(p), err)
	}
}

func TestFrameReader(t *testing.T) {
	var e Encoder
	var want [][]byte
	for i, size := range []int{0, 1, 300, frameRetain + 1, 17, 2 * frameRetain, 5} {
		payload := bytes.Repeat([]byte{byte(i + 1)}, size)
		want = append(want, payload)
		s := e.BeginFrame()
		e.B = append(e.B, payload...)
		if n := e.EndFrame(s); n != size {
			t.Fatalf("EndFrame = %d, want %d", n, size)
		}
	}
	fr := NewFrameReader(bufio.NewReader(bytes.NewReader(e.Bytes())), 3*frameRetain)
	for i, w := range want {
		p, err := fr.ReadFrame()
		if err != nil || !bytes.Equal(p, w) {
			t.Fatalf("frame %d: %d bytes, %v; want %d bytes", i, len(p), err, len(w))
		}
	}
	if cap(fr.buf) > frameRetain {
		t.Errorf("reader retains a %d-byte buffer", cap(fr.buf))
	}
	if _, err := fr.ReadFrame(); err != io.EOF {
		t.Errorf("after last frame: %v", err)
	}
	if fr.Max() != 3*frameRetain {
		t.Errorf("Max = %d", fr.Max())
	}
	if NewFrameReader(nil, 0).Max() != DefaultMaxBuffer {
		t.Error("default max")
	}
}

func TestFrameReaderLengthThenBody(t *testing.T) {
	// The server reads the first length itself to look for a four-letter
	// word, then reads the body of a real frame.
	ruok, _ := FourLetterCode("ruok")
	in := append(binary.BigEndian.AppendUint32(nil, uint32(ruok)), '\n')
	fr := NewFrameReader(bytes.NewReader(in), 0)
	n, err := fr.ReadLength()
	if err != nil || n != ruok {
		t.Fatalf("ReadLength = %d, %v", n, err)
	}
	if _, err := fr.ReadBody(n); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("ruok as a length: %v", err)
	}

	connect := frame(&ConnectRequest{Passwd: make([]byte, 16), HasReadOnly: true})
	fr = NewFrameReader(bytes.NewReader(connect), 0)
	n, err = fr.ReadLength()
	if err != nil || n != 45 {
		t.Fatalf("ReadLength = %d, %v", n, err)
	}
	if _, ok := FourLetterWord(n); ok {
		t.Fatal("a ConnectRequest length looks like a four-letter word")
	}
	p, err := fr.ReadBody(n)
	if err != nil {
		t.Fatal(err)
	}
	var r ConnectRequest
	if err := r.Decode(NewDecoder(p)); err != nil || !r.HasReadOnly {
		t.Errorf("decoded %+v, %v", r, err)
	}
	// ReadBody with a length from elsewhere, via the function form too.
	q, err := ReadFrameBody(bytes.NewReader(connect[4:]), n, nil, 0)
	if err != nil || !bytes.Equal(p, q) {
		t.Errorf("ReadFrameBody: %v", err)
	}
	if _, err := ReadFrameBody(bytes.NewReader(connect[4:]), n, nil, 44); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("ReadFrameBody over max: %v", err)
	}
}

func TestWriteAndAppendFrame(t *testing.T) {
	var w bytes.Buffer
	if err := WriteFrame(&w, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFrame(&w, nil); err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 0}
	if !bytes.Equal(w.Bytes(), want) {
		t.Errorf("WriteFrame wrote %x, want %x", w.Bytes(), want)
	}
	if got := AppendFrame(AppendFrame(nil, []byte("abc")), nil); !bytes.Equal(got, want) {
		t.Errorf("AppendFrame = %x", got)
	}
	var e Encoder
	e.B = append(e.B, "prefix"...)
	s := e.BeginFrame()
	e.Int(1)
	e.EndFrame(s)
	if got := e.Bytes(); string(got) != "prefix\x00\x00\x00\x04\x00\x00\x00\x01" {
		t.Errorf("frame after existing bytes: %q", got)
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestWriteFrameError(t *testing.T) {
	if err := WriteFrame(errWriter{}, []byte("x")); err != io.ErrClosedPipe {
		t.Errorf("err = %v", err)
	}
}
