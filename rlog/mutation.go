package rlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/corral-db/corral/rlog/datalog"
)

// Op is a kind of mutation.
type Op uint8

const (
	OpCreate Op = iota + 1
	OpAppend
	OpTrim
	OpSeal
	OpDelete
)

func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpAppend:
		return "append"
	case OpTrim:
		return "trim"
	case OpSeal:
		return "seal"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// NoOffset is an append's Offset when it names no expected offset.
const NoOffset = -1

// Mutation is one change to the replicated logs, the content of a zab
// entry. Its replicated part is logical (which log, which offsets, how
// many bytes, their checksum); the payload travels with the proposal but
// is stored in each member's data log, and a member's own WAL record
// names where (Local) instead of carrying the bytes again.
type Mutation struct {
	Op   Op
	Name string
	// Offset: for OpAppend the expected offset in a request (NoOffset for
	// any) and the offset the leader assigned in a proposal; for OpTrim
	// the new start.
	Offset int64
	// Log is, in an append's proposal, the id of the log the leader
	// resolved Name to (a log's id is the zxid that created it), so that a
	// log deleted and created again between proposal and commit does not
	// take the append.
	Log uint64
	// Length and Sum (CRC32C) describe an append's payload.
	Length int64
	Sum    uint32
	// Payload is an append's bytes, in the proposal form; nil otherwise.
	Payload []byte
	// Local is where this member's data log holds the payload, in the
	// member's WAL form; nil otherwise.
	Local *datalog.Pos
}

const (
	mutationVersion = 1
	flagPayload     = 1 << 0
	flagLocal       = 1 << 1
	// MaxNameLen bounds a log's name (it is a znode's name too).
	MaxNameLen = 255
	// maxLength bounds an append's length in the encoding, whatever a
	// State's own limit.
	maxLength = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the CRC32C an append's Sum carries.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// NewAppend returns the proposal form of an append of payload.
func NewAppend(name string, expect int64, payload []byte) Mutation {
	m := NewAppendRequest(name, expect, payload)
	m.Sum = Checksum(payload)
	return m
}

// NewAppendRequest is NewAppend without the checksum: a request to a
// Proposer, whose State.Prepare checksums the payload when it makes the
// proposal (nothing reads a request's Sum before that), so the API does
// not pass over every payload once more.
func NewAppendRequest(name string, expect int64, payload []byte) Mutation {
	return Mutation{Op: OpAppend, Name: name, Offset: expect, Length: int64(len(payload)), Payload: payload}
}

// ValidName reports whether s can name a log: 1 to 255 bytes of letters,
// digits, '.', '_' and '-', not "." or "..".
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Encode appends the encoding of m to dst:
//
//	version u8 (1) | op u8 | flags u8 | name: uvarint length, bytes |
//	OpAppend: log uvarint | offset varint | length uvarint | sum u32 LE |
//	          [payload, if flag 1] | [seg uvarint, off uvarint, if flag 2]
//	OpTrim:   offset varint
func Encode(dst []byte, m *Mutation) []byte {
	var flags byte
	if m.Op == OpAppend && m.Payload != nil {
		flags |= flagPayload
	} else if m.Op == OpAppend && m.Local != nil {
		flags |= flagLocal
	}
	dst = append(dst, mutationVersion, byte(m.Op), flags)
	dst = binary.AppendUvarint(dst, uint64(len(m.Name)))
	dst = append(dst, m.Name...)
	switch m.Op {
	case OpAppend:
		dst = binary.AppendUvarint(dst, m.Log)
		dst = binary.AppendVarint(dst, m.Offset)
		dst = binary.AppendUvarint(dst, uint64(m.Length))
		dst = binary.LittleEndian.AppendUint32(dst, m.Sum)
		if flags&flagPayload != 0 {
			dst = append(dst, m.Payload...)
		}
		if flags&flagLocal != 0 {
			dst = binary.AppendUvarint(dst, m.Local.Seg)
			dst = binary.AppendUvarint(dst, uint64(m.Local.Off))
		}
	case OpTrim:
		dst = binary.AppendVarint(dst, m.Offset)
	}
	return dst
}

var errMalformed = errors.New("rlog: malformed mutation")

func malformed(why string) error { return fmt.Errorf("%w: %s", errMalformed, why) }

// Decode decodes a mutation, checking everything: version, op, flags, the
// name, lengths, the payload's checksum, no trailing bytes. The payload
// aliases b. It never panics.
func Decode(b []byte) (Mutation, error) {
	var m Mutation
	if len(b) < 3 {
		return m, malformed("short")
	}
	if b[0] != mutationVersion {
		return m, malformed(fmt.Sprintf("version %d", b[0]))
	}
	m.Op = Op(b[1])
	flags := b[2]
	if m.Op < OpCreate || m.Op > OpDelete {
		return m, malformed(fmt.Sprintf("unknown op %d", b[1]))
	}
	if flags&^(flagPayload|flagLocal) != 0 || flags == flagPayload|flagLocal || (flags != 0 && m.Op != OpAppend) {
		return m, malformed(fmt.Sprintf("flags %#x", flags))
	}
	b = b[3:]
	n, k := uvarint(b)
	if k <= 0 || n > MaxNameLen || uint64(len(b)-k) < n {
		return m, malformed("bad name length")
	}
	m.Name = string(b[k : k+int(n)])
	if !ValidName(m.Name) {
		return m, malformed(fmt.Sprintf("bad name %q", m.Name))
	}
	b = b[k+int(n):]
	m.Offset = NoOffset
	switch m.Op {
	case OpAppend:
		id, k := uvarint(b)
		if k <= 0 {
			return m, malformed("bad log id")
		}
		m.Log = id
		b = b[k:]
		off, k := varint(b)
		if k <= 0 || off < NoOffset {
			return m, malformed("bad offset")
		}
		b = b[k:]
		length, k := uvarint(b)
		if k <= 0 || length == 0 || length > maxLength {
			return m, malformed("bad length")
		}
		b = b[k:]
		if len(b) < 4 {
			return m, malformed("short checksum")
		}
		m.Offset, m.Length, m.Sum = off, int64(length), binary.LittleEndian.Uint32(b)
		b = b[4:]
		if flags&flagPayload != 0 {
			if uint64(len(b)) < length {
				return m, malformed("short payload")
			}
			m.Payload = b[:length:length]
			b = b[length:]
			if Checksum(m.Payload) != m.Sum {
				return m, malformed("payload checksum mismatch")
			}
		}
		if flags&flagLocal != 0 {
			seg, k := uvarint(b)
			if k <= 0 {
				return m, malformed("bad local position")
			}
			b = b[k:]
			off, k := uvarint(b)
			if k <= 0 || off > 1<<62 {
				return m, malformed("bad local position")
			}
			b = b[k:]
			m.Local = &datalog.Pos{Seg: seg, Off: int64(off)}
		}
	case OpTrim:
		off, k := varint(b)
		if k <= 0 || off < 0 {
			return m, malformed("bad offset")
		}
		m.Offset = off
		b = b[k:]
	}
	if len(b) != 0 {
		return m, malformed(fmt.Sprintf("%d trailing bytes", len(b)))
	}
	return m, nil
}

// SplitPayload is the log store's hook: it returns the WAL form of a
// proposal-form entry (the payload replaced by local, where this member's
// data log holds it) and the payload. Entries without a payload come back
// unchanged with a nil payload.
func SplitPayload(data []byte, local datalog.Pos) (wal, payload []byte, err error) {
	m, err := Decode(data)
	if err != nil {
		return nil, nil, err
	}
	if m.Payload == nil {
		return data, nil, nil
	}
	payload = m.Payload
	m.Payload, m.Local = nil, &local
	return Encode(nil, &m), payload, nil
}

// AttachPayload turns a WAL-form entry back into the proposal form (for a
// DIFF to a learner), with the payload read from the data log.
func AttachPayload(wal []byte, payload []byte) ([]byte, error) {
	m, err := Decode(wal)
	if err != nil {
		return nil, err
	}
	if m.Op != OpAppend || m.Local == nil {
		return wal, nil
	}
	if int64(len(payload)) != m.Length || Checksum(payload) != m.Sum {
		return nil, fmt.Errorf("rlog: payload for %s at %d does not match the entry", m.Name, m.Local)
	}
	m.Local, m.Payload = nil, payload
	return Encode(nil, &m), nil
}

// uvarint and varint decode only the shortest encoding of a value, so that
// one mutation has one encoding; k <= 0 on anything else.
func uvarint(b []byte) (uint64, int) {
	v, k := binary.Uvarint(b)
	if k > 0 && k != len(binary.AppendUvarint(nil, v)) {
		return 0, -1
	}
	return v, k
}

func varint(b []byte) (int64, int) {
	v, k := binary.Varint(b)
	if k > 0 && k != len(binary.AppendVarint(nil, v)) {
		return 0, -1
	}
	return v, k
}
