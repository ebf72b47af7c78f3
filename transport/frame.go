package transport

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"time"
)

// A frame is
//
//	length u32 big-endian  (of the body)
//	crc    u32 big-endian  (CRC-32C of the body)
//	body   length bytes    (one encoded message)
//
// The CRC comes before the body so that a reader can check the body as
// soon as it has it; the length is checked against the maximum before
// anything is allocated for it.
const frameHeaderSize = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// writeFrame writes the frame of the body head+tail (the body is split so
// that a snapshot's bytes are written from the caller's buffer).
func writeFrame(w io.Writer, head, tail []byte) error {
	var h [frameHeaderSize]byte
	crc := crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, tail)
	binary.BigEndian.PutUint32(h[0:], uint32(len(head)+len(tail)))
	binary.BigEndian.PutUint32(h[4:], crc)
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	if len(tail) > 0 {
		if _, err := w.Write(tail); err != nil {
			return err
		}
	}
	return nil
}

// readChunk bounds how much a frame reader allocates ahead of the bytes
// actually received, so a lying length costs no more memory than the
// sender really sends.
const readChunk = 1 << 20

// frameReader reads frames from a connection. Between frames it waits as
// long as it takes (an idle link is normal; dead peers are found by TCP
// keepalive and by the writer's deadlines); once a frame has started, every
// read must make progress within the timeout, so a peer that stalls in the
// middle of a frame is cut off.
type frameReader struct {
	dc  *deadlineConn
	br  *bufio.Reader
	max int
	// progress, if set, is called after each readChunk of a frame body
	// larger than readChunk (a snapshot on its way).
	progress func()
}

func newFrameReader(dc *deadlineConn, bufSize, maxFrame int) *frameReader {
	return &frameReader{dc: dc, br: bufio.NewReaderSize(dc, bufSize), max: maxFrame}
}

// next returns the body of the next frame. The body is freshly allocated,
// so messages decoded from it may alias it.
func (r *frameReader) next() ([]byte, error) {
	r.dc.armRead(false)
	first, err := r.br.ReadByte()
	if err != nil {
		return nil, err
	}
	r.dc.armRead(true)
	var h [frameHeaderSize]byte
	h[0] = first
	if _, err := io.ReadFull(r.br, h[1:]); err != nil {
		return nil, unexpectedEOF(err)
	}
	return readBody(r.br, h, r.max, r.progress)
}

// readBody reads and checks the body announced by header h. progress, if
// not nil, is called after each readChunk of a body larger than one.
func readBody(r io.Reader, h [frameHeaderSize]byte, maxFrame int, progress func()) ([]byte, error) {
	n := binary.BigEndian.Uint32(h[0:])
	want := binary.BigEndian.Uint32(h[4:])
	if uint64(n) > uint64(maxFrame) {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, n, maxFrame)
	}
	body := make([]byte, 0, min(int(n), readChunk))
	for len(body) < int(n) {
		k := min(int(n)-len(body), readChunk)
		if cap(body)-len(body) < k {
			// Grow by doubling, as the bytes read prove the length honest.
			nb := make([]byte, len(body), min(int(n), max(2*cap(body), len(body)+k)))
			copy(nb, body)
			body = nb
		}
		if _, err := io.ReadFull(r, body[len(body):len(body)+k]); err != nil {
			return nil, unexpectedEOF(err)
		}
		body = body[:len(body)+k]
		if progress != nil && int(n) > readChunk {
			progress()
		}
	}
	if got := crc32.Checksum(body, castagnoli); got != want {
		return nil, fmt.Errorf("%w: crc %#x, header says %#x", ErrChecksum, got, want)
	}
	return body, nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// writeChunk is the most a deadlineConn writes under one deadline: a large
// frame (a snapshot) may take long in total, but each chunk must go out
// within the write timeout.
const writeChunk = 256 << 10

// deadlineConn puts progress deadlines on a connection: every write of up
// to writeChunk bytes, and every read while armed, must complete within
// timeout. A peer that stops reading (its process hung, its machine gone
// with data in flight) is detected by the writer; keepalive covers idle
// connections.
type deadlineConn struct {
	c       net.Conn
	timeout time.Duration
	armed   bool
	// progress, if set, is called after each full writeChunk written: a
	// frame too large for the writer's buffer (a snapshot) is leaving. Small frames go out through the buffer and report nothing.
	progress func()
}

func (d *deadlineConn) armRead(on bool) {
	if on == d.armed {
		return
	}
	d.armed = on
	if !on {
		_ = d.c.SetReadDeadline(time.Time{})
	}
}

func (d *deadlineConn) Read(p []byte) (int, error) {
	if d.armed {
		_ = d.c.SetReadDeadline(time.Now().Add(d.timeout))
	}
	return d.c.Read(p)
}

func (d *deadlineConn) Write(p []byte) (int, error) {
	var n int
	for len(p) > 0 {
		k := min(len(p), writeChunk)
		_ = d.c.SetWriteDeadline(time.Now().Add(d.timeout))
		w, err := d.c.Write(p[:k])
		n += w
		if err != nil {
			return n, err
		}
		p = p[k:]
		if d.progress != nil && k == writeChunk {
			d.progress()
		}
	}
	return n, nil
}
