package zkfmt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"

	"github.com/corral-db/corral/wire"
)

// ErrCorrupt is wrapped by every error a decoder returns for bad input.
var ErrCorrupt = errors.New("zkfmt: corrupt input")

// MaxField bounds a single buffer, string or vector length (1 GiB). A
// ZooKeeper server refuses anything near it (jute.maxbuffer); the bound only
// stops a corrupt length from looking plausible.
const MaxField = 1 << 30

// growChunk is how much a decoder allocates ahead of the bytes that arrive.
const growChunk = 1 << 20

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// decoder reads jute's binary archive from r. Errors stick: after the
// first, every read returns a zero value. If sum is set it is fed every
// byte consumed, as ZooKeeper's CheckedInputStream is.
type decoder struct {
	r   io.Reader
	sum hash.Hash32
	err error
	// eof: the input ended (cleanly between fields or in the middle of
	// one); the optional trailing sections use it.
	eof     bool
	scratch [8]byte
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) full(p []byte) bool {
	if d.err != nil {
		return false
	}
	n, err := io.ReadFull(d.r, p)
	if d.sum != nil {
		d.sum.Write(p[:n])
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			d.eof = true
			d.fail(corruptf("truncated"))
		} else {
			d.fail(err)
		}
		return false
	}
	return true
}

func (d *decoder) int32() int32 {
	if !d.full(d.scratch[:4]) {
		return 0
	}
	return int32(binary.BigEndian.Uint32(d.scratch[:4]))
}

func (d *decoder) int64() int64 {
	if !d.full(d.scratch[:8]) {
		return 0
	}
	return int64(binary.BigEndian.Uint64(d.scratch[:8]))
}

func (d *decoder) byte() byte {
	if !d.full(d.scratch[:1]) {
		return 0
	}
	return d.scratch[0]
}

func (d *decoder) bool() bool { return d.byte() != 0 }

// length reads a length prefix; -1 (null) is returned as -1.
func (d *decoder) length(what string) int {
	n := d.int32()
	if d.err != nil {
		return 0
	}
	if n < -1 || n > MaxField {
		d.fail(corruptf("%s of length %d", what, n))
		return 0
	}
	return int(n)
}

// bytesN reads n bytes, growing the slice as they arrive.
func (d *decoder) bytesN(n int) []byte {
	out := make([]byte, 0, min(n, growChunk))
	for len(out) < n && d.err == nil {
		k := min(n-len(out), growChunk)
		l := len(out)
		out = append(out, make([]byte, k)...)
		d.full(out[l : l+k])
	}
	if d.err != nil {
		return nil
	}
	return out
}

// buffer reads a jute buffer; null is nil, empty is a non-nil empty slice.
func (d *decoder) buffer() []byte {
	n := d.length("buffer")
	if d.err != nil || n < 0 {
		return nil
	}
	return d.bytesN(n)
}

// string reads a jute ustring; null reads as "" with null set.
func (d *decoder) string() (s string, null bool) {
	n := d.length("string")
	if d.err != nil {
		return "", false
	}
	if n < 0 {
		return "", true
	}
	return string(d.bytesN(n)), false
}

func (d *decoder) str() string {
	s, _ := d.string()
	return s
}

func (d *decoder) acl() wire.ACL {
	var a wire.ACL
	a.Perms = d.int32()
	a.ID.Scheme = d.str()
	a.ID.ID = d.str()
	return a
}

// acls reads vector<ACL>; null reads as nil.
func (d *decoder) acls() []wire.ACL {
	n := d.length("acl vector")
	if d.err != nil || n < 0 {
		return nil
	}
	out := make([]wire.ACL, 0, min(n, 64))
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.acl())
	}
	return out
}

// encoder appends jute's binary archive to buf.
type encoder struct {
	buf []byte
}

func (e *encoder) int32(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }
func (e *encoder) int64(v int64) { e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v)) }
func (e *encoder) byte(b byte)   { e.buf = append(e.buf, b) }

func (e *encoder) bool(b bool) {
	if b {
		e.byte(1)
	} else {
		e.byte(0)
	}
}

func (e *encoder) buffer(b []byte) {
	if b == nil {
		e.int32(-1)
		return
	}
	e.int32(int32(len(b)))
	e.buf = append(e.buf, b...)
}

func (e *encoder) string(s string) {
	e.int32(int32(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *encoder) acls(acl []wire.ACL) {
	if acl == nil {
		e.int32(-1)
		return
	}
	e.int32(int32(len(acl)))
	for _, a := range acl {
		e.int32(a.Perms)
		e.string(a.ID.Scheme)
		e.string(a.ID.ID)
	}
}

func newAdler() hash.Hash32 { return adler32.New() }
