package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrMarshalling is wrapped by every decoding error: a short buffer, a
// negative or unreasonable length.
var ErrMarshalling = errors.New("wire: malformed record")

// Encoder appends jute-encoded values to a byte slice. The zero value is
// ready to use; Bytes returns what was written. Encoders never fail.
type Encoder struct {
	B []byte
}

func (e *Encoder) Bytes() []byte { return e.B }
func (e *Encoder) Len() int      { return len(e.B) }
func (e *Encoder) Reset()        { e.B = e.B[:0] }

func (e *Encoder) Int(v int32) {
	e.B = binary.BigEndian.AppendUint32(e.B, uint32(v))
}

func (e *Encoder) Long(v int64) {
	e.B = binary.BigEndian.AppendUint64(e.B, uint64(v))
}

func (e *Encoder) Bool(v bool) {
	if v {
		e.B = append(e.B, 1)
	} else {
		e.B = append(e.B, 0)
	}
}

// Buffer writes a jute buffer; a nil slice is written as length -1 (null),
// an empty non-nil slice as length 0.
func (e *Encoder) Buffer(b []byte) {
	if b == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(b)))
	e.B = append(e.B, b...)
}

// String writes a jute ustring (never null).
func (e *Encoder) String(s string) {
	e.Int(int32(len(s)))
	e.B = append(e.B, s...)
}

// Strings writes a vector<ustring>; nil is written as an empty vector, as
// the Java server does for responses.
func (e *Encoder) Strings(ss []string) {
	e.Int(int32(len(ss)))
	for _, s := range ss {
		e.String(s)
	}
}

// Decoder reads jute-encoded values from a byte slice. The first error
// sticks: later reads return zero values and Err reports it, so callers
// decode a whole record and check once.
type Decoder struct {
	B   []byte
	off int
	err error
	// Max bounds any single string, buffer or vector length; 0 means
	// DefaultMaxBuffer.
	Max int
	// Alias makes Buffer return the bytes inside B instead of a copy: for
	// a B that is never reused (a frame allocated for one message), where
	// the copy would only be garbage.
	Alias bool
}

// DefaultMaxBuffer is jute.maxbuffer's default, 0xfffff.
const DefaultMaxBuffer = 0xfffff

func NewDecoder(b []byte) *Decoder { return &Decoder{B: b} }

// Reset points the decoder at b and clears its offset and error, keeping
// Max, so one Decoder can serve every frame of a connection.
func (d *Decoder) Reset(b []byte) {
	d.B = b
	d.off = 0
	d.err = nil
}

func (d *Decoder) Err() error     { return d.err }
func (d *Decoder) Remaining() int { return len(d.B) - d.off }
func (d *Decoder) Offset() int    { return d.off }

func (d *Decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrMarshalling}, args...)...)
	}
}

func (d *Decoder) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || len(d.B)-d.off < n {
		d.fail("need %d bytes at offset %d, have %d", n, d.off, len(d.B)-d.off)
		return false
	}
	return true
}

func (d *Decoder) max() int {
	if d.Max > 0 {
		return d.Max
	}
	return DefaultMaxBuffer
}

func (d *Decoder) Int() int32 {
	if !d.need(4) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(d.B[d.off:]))
	d.off += 4
	return v
}

func (d *Decoder) Long() int64 {
	if !d.need(8) {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(d.B[d.off:]))
	d.off += 8
	return v
}

func (d *Decoder) Bool() bool {
	if !d.need(1) {
		return false
	}
	v := d.B[d.off] != 0
	d.off++
	return v
}

func (d *Decoder) length(what string) (int, bool) {
	n := d.Int()
	if d.err != nil {
		return 0, false
	}
	if n == -1 {
		return -1, true
	}
	if n < 0 || int(n) > d.max() {
		d.fail("unreasonable %s length %d", what, n)
		return 0, false
	}
	return int(n), true
}

// Buffer reads a jute buffer; length -1 yields nil. The result is a copy,
// so it stays valid after the frame buffer is reused, unless Alias is set
// (then it is B's bytes, capped so that an append cannot overwrite what
// follows).
func (d *Decoder) Buffer() []byte {
	n, ok := d.length("buffer")
	if !ok || n < 0 {
		return nil
	}
	if !d.need(n) {
		return nil
	}
	if d.Alias {
		b := d.B[d.off : d.off+n : d.off+n]
		d.off += n
		return b
	}
	b := make([]byte, n)
	copy(b, d.B[d.off:d.off+n])
	d.off += n
	return b
}

// String reads a ustring; null (-1) reads as "" and IsNull is not tracked
// because no request field distinguishes them.
func (d *Decoder) String() string {
	n, ok := d.length("string")
	if !ok || n < 0 {
		return ""
	}
	if !d.need(n) {
		return ""
	}
	s := string(d.B[d.off : d.off+n])
	d.off += n
	return s
}

// internedString reads a ustring like String but returns a shared constant
// for the few values almost every ACL carries, saving two allocations per
// world:anyone entry on the create path.
func (d *Decoder) internedString() string {
	n, ok := d.length("string")
	if !ok || n < 0 || !d.need(n) {
		return ""
	}
	b := d.B[d.off : d.off+n]
	d.off += n
	switch string(b) { // no allocation: the conversion only feeds comparisons
	case "world":
		return "world"
	case "anyone":
		return "anyone"
	case "auth":
		return "auth"
	case "digest":
		return "digest"
	case "ip":
		return "ip"
	case "":
		return ""
	}
	return string(b)
}

// VectorLen reads a vector length; -1 (null) yields 0. Each element takes at
// least minElem bytes, which bounds the count by what remains.
func (d *Decoder) VectorLen(minElem int) int {
	n, ok := d.length("vector")
	if !ok || n < 0 {
		return 0
	}
	if minElem > 0 && n > d.Remaining()/minElem {
		d.fail("vector of %d elements exceeds remaining %d bytes", n, d.Remaining())
		return 0
	}
	return n
}

func (d *Decoder) Strings() []string {
	n := d.VectorLen(4)
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.String())
	}
	return out
}

// clampInt converts lengths for callers that size buffers from int64s.
func clampInt(v int64) int {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(v)
}
