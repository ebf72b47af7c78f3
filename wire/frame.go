package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Framing (PROTOCOL §2, §13): every message is a big-endian int32 length of
// what follows, then that many bytes.

// ErrFrameTooLarge is wrapped, together with ErrMarshalling, by the error
// for a frame length that is negative or above the maximum. ZooKeeper
// answers such a frame by closing the connection without a reply.
var ErrFrameTooLarge = errors.New("wire: frame length out of range")

// FrameHeaderSize is the size of the length prefix.
const FrameHeaderSize = 4

// CheckFrameLength accepts 0 <= n <= max; max <= 0 means DefaultMaxBuffer.
// A frame of exactly max bytes is accepted, as in ZooKeeper.
func CheckFrameLength(n int32, max int) error {
	if max <= 0 {
		max = DefaultMaxBuffer
	}
	if n < 0 || int64(n) > int64(max) {
		return fmt.Errorf("%w: %w: length %d, max %d", ErrFrameTooLarge, ErrMarshalling, n, max)
	}
	return nil
}

// ReadFrame reads one frame from r and returns its payload. The payload is
// read into buf when it fits (the length prefix too), so a caller that
// passes the previous result back in, as ReadFrame(r, p[:0], max), reads
// every frame without allocating. max <= 0 means DefaultMaxBuffer.
//
// A clean end of stream before the length is io.EOF; a stream that ends
// inside a frame is io.ErrUnexpectedEOF; a bad length wraps
// ErrFrameTooLarge and nothing after the length is read.
func ReadFrame(r io.Reader, buf []byte, max int) ([]byte, error) {
	if cap(buf) < FrameHeaderSize {
		buf = make([]byte, 0, 512)
	}
	hdr := buf[:FrameHeaderSize]
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	return ReadFrameBody(r, int32(binary.BigEndian.Uint32(hdr)), buf, max)
}

// ReadFrameBody reads the n-byte payload of a frame whose length the caller
// has already read, e.g. after ruling out a four-letter word. It checks n
// like ReadFrame and reuses buf when it fits.
func ReadFrameBody(r io.Reader, n int32, buf []byte, max int) ([]byte, error) {
	if err := CheckFrameLength(n, max); err != nil {
		return nil, err
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	p := buf[:n]
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return p, nil
}

// frameRetain is the largest buffer a FrameReader keeps between frames:
// enough for the usual request, small enough that thousands of idle
// connections do not each pin a megabyte after one large write.
const frameRetain = 64 << 10

// FrameReader reads frames from one stream, reusing its buffer. The slice
// a read returns is valid until the next read. Not safe for concurrent
// use.
type FrameReader struct {
	r   io.Reader
	max int
	hdr [FrameHeaderSize]byte
	buf []byte
}

// NewFrameReader reads frames of at most max bytes (max <= 0 means
// DefaultMaxBuffer) from r, which should be buffered (bufio.Reader).
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxBuffer
	}
	return &FrameReader{r: r, max: max}
}

// Max is the largest frame the reader accepts.
func (f *FrameReader) Max() int { return f.max }

// ReadLength reads the next 4-byte length prefix without checking it, so
// the server can compare the first one of a connection with the
// four-letter words before treating it as a length.
func (f *FrameReader) ReadLength() (int32, error) {
	if _, err := io.ReadFull(f.r, f.hdr[:]); err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(f.hdr[:])), nil
}

// ReadBody checks n against Max and reads an n-byte payload.
func (f *FrameReader) ReadBody(n int32) ([]byte, error) {
	if err := CheckFrameLength(n, f.max); err != nil {
		return nil, err
	}
	buf := f.buf
	if cap(buf) < int(n) {
		buf = make([]byte, n)
		if n <= frameRetain {
			f.buf = buf
		}
		// A larger frame gets a one-off buffer that the next read
		// lets go of.
	}
	p := buf[:n]
	if _, err := io.ReadFull(f.r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return p, nil
}

// ReadFrame reads a length and its payload; errors as for the function
// ReadFrame.
func (f *FrameReader) ReadFrame() ([]byte, error) {
	n, err := f.ReadLength()
	if err != nil {
		return nil, err
	}
	return f.ReadBody(n)
}

// BeginFrame reserves a 4-byte length prefix and returns its offset, for
// EndFrame. Records encoded in between form the frame's payload; frames
// can be appended one after another into the same Encoder.
func (e *Encoder) BeginFrame() int {
	start := len(e.B)
	e.B = append(e.B, 0, 0, 0, 0)
	return start
}

// EndFrame writes the payload length into the prefix reserved at start and
// returns it. The caller checks it against the peer's limit if it cares;
// ZooKeeper does not check what it sends.
func (e *Encoder) EndFrame(start int) int {
	n := len(e.B) - start - FrameHeaderSize
	binary.BigEndian.PutUint32(e.B[start:], uint32(n))
	return n
}

// AppendFrame appends payload to dst as one frame.
func AppendFrame(dst, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...)
}

// WriteFrame writes payload to w as one frame with a single Write call.
// Hot paths should encode into an Encoder between BeginFrame and EndFrame
// instead, which avoids the copy.
func WriteFrame(w io.Writer, payload []byte) error {
	_, err := w.Write(AppendFrame(make([]byte, 0, FrameHeaderSize+len(payload)), payload))
	return err
}
