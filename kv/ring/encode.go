package ring

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// FormatV1 is the first byte of the current encoding.
//
// Layout (all integers big-endian, fixed width, so that the encoding of a
// ring is unique and Decode can insist on it):
//
//	byte    format (1)
//	uint64  ring version
//	uint32  n, the number of tokens (1..MaxTokens)
//	n × { uint64 token, uint32 group }   strictly increasing tokens
const FormatV1 = 1

const (
	headerLen = 1 + 8 + 4
	entryLen  = 8 + 4
)

// ErrCorrupt wraps every Decode failure.
var ErrCorrupt = errors.New("ring: bad encoding")

// Encode returns the canonical encoding of r.
func (r *Ring) Encode() []byte {
	b := make([]byte, headerLen, headerLen+entryLen*len(r.tokens))
	b[0] = FormatV1
	binary.BigEndian.PutUint64(b[1:], r.version)
	binary.BigEndian.PutUint32(b[9:], uint32(len(r.tokens)))
	for _, t := range r.tokens {
		b = binary.BigEndian.AppendUint64(b, t.Token)
		b = binary.BigEndian.AppendUint32(b, uint32(t.Group))
	}
	return b
}

// Decode parses an encoding made by Encode. It accepts only canonical
// input: Decode(b) succeeds exactly when Encode of the result equals b.
func Decode(b []byte) (*Ring, error) {
	if len(b) < headerLen {
		return nil, fmt.Errorf("%w: %d bytes, want at least %d", ErrCorrupt, len(b), headerLen)
	}
	if b[0] != FormatV1 {
		return nil, fmt.Errorf("%w: format %d, want %d", ErrCorrupt, b[0], FormatV1)
	}
	version := binary.BigEndian.Uint64(b[1:])
	n := binary.BigEndian.Uint32(b[9:])
	if n == 0 || n > MaxTokens {
		return nil, fmt.Errorf("%w: %d tokens, want 1..%d", ErrCorrupt, n, MaxTokens)
	}
	if want := headerLen + entryLen*int(n); len(b) != want {
		return nil, fmt.Errorf("%w: %d bytes for %d tokens, want %d", ErrCorrupt, len(b), n, want)
	}
	ts := make([]Token, n)
	p := b[headerLen:]
	for i := range ts {
		ts[i].Token = binary.BigEndian.Uint64(p)
		ts[i].Group = GroupID(binary.BigEndian.Uint32(p[8:]))
		p = p[entryLen:]
		if ts[i].Group == 0 {
			return nil, fmt.Errorf("%w: token %d: %v", ErrCorrupt, i, ErrZeroGroup)
		}
		if i > 0 && ts[i].Token <= ts[i-1].Token {
			return nil, fmt.Errorf("%w: token %d (%#x) not above the previous (%#x)", ErrCorrupt, i, ts[i].Token, ts[i-1].Token)
		}
	}
	return &Ring{version: version, tokens: ts}, nil
}
