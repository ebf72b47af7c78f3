package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/corral-db/corral/zab"
)

func readOneFrame(b []byte, maxFrame int) ([]byte, error) {
	r := bytes.NewReader(b)
	var h [frameHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, unexpectedEOF(err)
	}
	return readBody(r, h, maxFrame, nil)
}

func TestFrameRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 100, readChunk - 1, readChunk, readChunk + 1, 3*readChunk + 17} {
		body := make([]byte, n)
		for i := range body {
			body[i] = byte(i * 7)
		}
		var buf bytes.Buffer
		split := n / 3
		if err := writeFrame(&buf, body[:split], body[split:]); err != nil {
			t.Fatal(err)
		}
		got, err := readOneFrame(buf.Bytes(), 4*readChunk)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(got, body) {
			t.Fatalf("%d bytes: body differs", n)
		}
	}
}

func TestFrameRejects(t *testing.T) {
	var buf bytes.Buffer
	if err := writeFrame(&buf, []byte("hello frame"), nil); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()

	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 1
	if _, err := readOneFrame(bad, 1<<20); !errors.Is(err, ErrChecksum) {
		t.Errorf("flipped bit: %v, want ErrChecksum", err)
	}
	if _, err := readOneFrame(good, 5); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("over the limit: %v, want ErrFrameTooLarge", err)
	}
	if _, err := readOneFrame(good[:len(good)-1], 1<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v, want ErrUnexpectedEOF", err)
	}
	// A length of 4 GiB with a few bytes behind it: refused before any
	// allocation by the limit, and with a large limit it fails on EOF
	// having allocated no more than readChunk.
	huge := make([]byte, frameHeaderSize+10)
	binary.BigEndian.PutUint32(huge, 1<<32-1)
	if _, err := readOneFrame(huge, 1<<20); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("huge length: %v, want ErrFrameTooLarge", err)
	}
	if _, err := readOneFrame(huge, maxFrameLimit); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("huge length, no limit: %v, want ErrUnexpectedEOF", err)
	}
}

// TestFrameMessagesStream: frames written back to back by the writer's
// path read back as the same messages through a frameReader.
func TestFrameMessagesStream(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var want []zab.Message
	var buf bytes.Buffer
	for i := 0; i < 200; i++ {
		m := randomMessage(r, allTypes()[i%len(allTypes())])
		want = append(want, m)
		head, tail := encodeHead(nil, m)
		if err := writeFrame(&buf, head, tail); err != nil {
			t.Fatal(err)
		}
	}
	fr := newFrameReader(&deadlineConn{c: pipeConn{r: &buf}, timeout: time.Second}, 512, 1<<20)
	for i, w := range want {
		body, err := fr.next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		m, err := DecodeMessage(body)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if m.String() != w.String() || len(m.Entries) != len(w.Entries) {
			t.Fatalf("frame %d: got %v, want %v", i, m, w)
		}
	}
	if _, err := fr.next(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want EOF", err)
	}
}

func TestQueueBounds(t *testing.T) {
	m := zab.Message{Type: zab.MsgPing}
	q := queue{maxMsgs: 3, maxBytes: 100}
	for i := 0; i < 3; i++ {
		if ok, ev := q.push(m, 10); !ok || ev != 0 {
			t.Fatalf("push %d: ok=%v evicted=%d", i, ok, ev)
		}
	}
	if ok, _ := q.push(m, 10); ok {
		t.Fatal("fourth message accepted by a 3-message queue")
	}
	q.take(nil)
	if ok, _ := q.push(m, 90); !ok {
		t.Fatal("90 bytes refused by an empty queue")
	}
	if ok, _ := q.push(m, 20); ok {
		t.Fatal("accepted 110 bytes in a 100-byte queue")
	}
	q.take(nil)
	if ok, _ := q.push(m, 1000); !ok {
		t.Fatal("a message above the byte bound must be accepted by an empty queue")
	}
	if ok, _ := q.push(m, 1); !ok {
		t.Fatal("refused a small message behind an oversized one (a NEWLEADER behind a SNAP)")
	}

	// Election queues keep the newest.
	e := queue{maxMsgs: 2, maxBytes: 100, dropOldest: true}
	for i := 1; i <= 5; i++ {
		ok, _ := e.push(zab.Message{Type: zab.MsgVote, Vote: zab.Vote{Round: uint64(i)}}, 10)
		if !ok {
			t.Fatalf("vote %d refused", i)
		}
	}
	got := e.take(nil)
	if len(got) != 2 || got[0].m.Vote.Round != 4 || got[1].m.Vote.Round != 5 {
		t.Fatalf("election queue kept %+v, want rounds 4 and 5", got)
	}
}

func TestBackoff(t *testing.T) {
	b := backoff{min: 10 * time.Millisecond, max: 70 * time.Millisecond}
	var got []time.Duration
	for i := 0; i < 5; i++ {
		got = append(got, b.next())
	}
	want := []time.Duration{10, 20, 40, 70, 70}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("backoff %v, want %v ms", got, want)
		}
	}
	b.reset()
	if d := b.next(); d != 10*time.Millisecond {
		t.Fatalf("after reset: %v", d)
	}
	// Jitter comes from the injected source: same seed, same waits, each
	// in [d/2, d].
	t1 := &TCP{rand: rand.New(rand.NewPCG(1, 2))}
	t2 := &TCP{rand: rand.New(rand.NewPCG(1, 2))}
	varied := false
	for i := 0; i < 100; i++ {
		d := time.Duration(1+i) * time.Millisecond
		j1, j2 := t1.jitter(d), t2.jitter(d)
		if j1 != j2 || j1 < d/2 || j1 > d {
			t.Fatalf("jitter(%v) = %v and %v", d, j1, j2)
		}
		varied = varied || j1 != d
	}
	if !varied {
		t.Fatal("jitter never changed a wait")
	}
}

// pipeConn is a read-only net.Conn over a reader, for frameReader tests.
type pipeConn struct {
	net.Conn // nil: only the methods below may be called
	r        io.Reader
}

func (p pipeConn) Read(b []byte) (int, error)      { return p.r.Read(b) }
func (p pipeConn) SetReadDeadline(time.Time) error { return nil }

// A frame larger than readChunk reports progress after each chunk read,
// and a large write after each writeChunk written; small frames and
// writes report nothing (a ping must not look like a snapshot moving).
func TestFrameProgress(t *testing.T) {
	for _, c := range []struct{ n, want int }{{100, 0}, {readChunk, 0}, {readChunk + 1, 2}, {3*readChunk + 17, 4}} {
		var buf bytes.Buffer
		if err := writeFrame(&buf, make([]byte, c.n), nil); err != nil {
			t.Fatal(err)
		}
		r := bytes.NewReader(buf.Bytes())
		var h [frameHeaderSize]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			t.Fatal(err)
		}
		got := 0
		if _, err := readBody(r, h, 4*readChunk, func() { got++ }); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("read %d bytes: %d progress reports, want %d", c.n, got, c.want)
		}
	}

	for _, c := range []struct{ n, want int }{{100, 0}, {writeChunk, 1}, {3*writeChunk + 5, 3}} {
		a, b := net.Pipe()
		go func() { _, _ = io.Copy(io.Discard, b) }()
		got := 0
		dc := &deadlineConn{c: a, timeout: time.Minute, progress: func() { got++ }}
		if _, err := dc.Write(make([]byte, c.n)); err != nil {
			t.Fatal(err)
		}
		a.Close()
		if got != c.want {
			t.Errorf("wrote %d bytes: %d progress reports, want %d", c.n, got, c.want)
		}
	}
}
