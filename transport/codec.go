package transport

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/corral-db/corral/zab"
)

// The binary encoding of a zab.Message, version 1:
//
//	version  u8  (codecVersion)
//	type     u8  (zab.MsgType, one of the known types)
//	flags    u8  (bit 0 NonVoting, bit 1 Reject, bit 2 Snapshot present,
//	              bit 3 Membership present, bit 4 Group non-zero)
//	sync     u8  (zab.SyncMode, 0 or a known mode)
//	state    u8  (zab.StateType, a known state)
//	uvarints From, To, Session, Epoch, CurrentEpoch, Zxid, Prev, Commit,
//	         Vote.Leader, Vote.Zxid, Vote.Epoch, Vote.Round
//	group    (flag bit 4) uvarint Group, the replica group's tag
//	membership (flag bit 3) uvarint MembershipZxid, then the voters and
//	         the observers, each a uvarint count and the uvarint ids
//	entries  uvarint count+1 (0: nil), then per entry uvarint Zxid, bytes Data
//	snapshot (flag bit 2) uvarint Zxid, bytes Data
//
// where bytes is a uvarint length+1 (0: nil) and the bytes. Nil and empty
// slices are told apart so that a decoded message is exactly the one
// encoded. The snapshot's bytes come last so that a frame writer can send
// them from the caller's buffer instead of copying them (encodeHead).
//
// Every field is encoded whatever the type, so the codec never needs to
// know which fields a type uses; the uvarints of unused zero fields cost a
// byte each.
const codecVersion = 1

const (
	flagNonVoting = 1 << iota
	flagReject
	flagSnapshot
	flagMembership
	flagGroup
	flagsKnown = flagNonVoting | flagReject | flagSnapshot | flagMembership | flagGroup
)

// The last value of each zab enumeration the codec knows. A decoder
// refuses anything beyond, so an unknown type is a malformed message
// rather than something zab would misread; codec_test.go fails when zab
// grows a value the codec does not list.
const (
	lastMsgType = zab.MsgSyncProgress
	lastSync    = zab.SyncSnap
	lastState   = zab.StateObserving
)

// headSize is the fixed part of the encoding.
const headSize = 5

// EncodedSize returns len(AppendMessage(nil, m)) without encoding.
func EncodedSize(m zab.Message) int {
	n := headSize +
		uvarintLen(m.From) + uvarintLen(m.To) + uvarintLen(m.Session) +
		uvarintLen(uint64(m.Epoch)) + uvarintLen(uint64(m.CurrentEpoch)) +
		uvarintLen(uint64(m.Zxid)) + uvarintLen(uint64(m.Prev)) + uvarintLen(uint64(m.Commit)) +
		uvarintLen(m.Vote.Leader) + uvarintLen(uint64(m.Vote.Zxid)) +
		uvarintLen(uint64(m.Vote.Epoch)) + uvarintLen(m.Vote.Round)
	if m.Group != 0 {
		n += uvarintLen(m.Group)
	}
	if mb := m.Membership; mb != nil {
		n += uvarintLen(uint64(m.MembershipZxid)) + uvarintLen(uint64(len(mb.Voters))) + uvarintLen(uint64(len(mb.Observers)))
		for _, ids := range [][]uint64{mb.Voters, mb.Observers} {
			for _, id := range ids {
				n += uvarintLen(id)
			}
		}
	}
	n += nilLenSize(m.Entries == nil, len(m.Entries))
	for i := range m.Entries {
		e := &m.Entries[i]
		n += uvarintLen(uint64(e.Zxid)) + bytesSize(e.Data)
	}
	if m.Snapshot != nil {
		n += uvarintLen(uint64(m.Snapshot.Zxid)) + bytesSize(m.Snapshot.Data)
	}
	return n
}

// AppendMessage appends the encoding of m to b and returns the extended
// slice.
func AppendMessage(b []byte, m zab.Message) []byte {
	b, tail := encodeHead(b, m)
	return append(b, tail...)
}

// encodeHead appends the encoding of m except the snapshot's bytes, which
// it returns: the full encoding is the appended bytes followed by tail.
func encodeHead(b []byte, m zab.Message) (head, tail []byte) {
	var flags byte
	if m.NonVoting {
		flags |= flagNonVoting
	}
	if m.Reject {
		flags |= flagReject
	}
	if m.Snapshot != nil {
		flags |= flagSnapshot
	}
	if m.Membership != nil {
		flags |= flagMembership
	}
	if m.Group != 0 {
		flags |= flagGroup
	}
	b = append(b, codecVersion, byte(m.Type), flags, byte(m.Sync), byte(m.State))
	for _, v := range [...]uint64{
		m.From, m.To, m.Session,
		uint64(m.Epoch), uint64(m.CurrentEpoch),
		uint64(m.Zxid), uint64(m.Prev), uint64(m.Commit),
		m.Vote.Leader, uint64(m.Vote.Zxid), uint64(m.Vote.Epoch), m.Vote.Round,
	} {
		b = binary.AppendUvarint(b, v)
	}
	if m.Group != 0 {
		b = binary.AppendUvarint(b, m.Group)
	}
	if mb := m.Membership; mb != nil {
		b = binary.AppendUvarint(b, uint64(m.MembershipZxid))
		for _, ids := range [][]uint64{mb.Voters, mb.Observers} {
			b = binary.AppendUvarint(b, uint64(len(ids)))
			for _, id := range ids {
				b = binary.AppendUvarint(b, id)
			}
		}
	}
	b = appendNilLen(b, m.Entries == nil, len(m.Entries))
	for i := range m.Entries {
		e := &m.Entries[i]
		b = binary.AppendUvarint(b, uint64(e.Zxid))
		b = appendNilLen(b, e.Data == nil, len(e.Data))
		b = append(b, e.Data...)
	}
	if m.Snapshot != nil {
		b = binary.AppendUvarint(b, uint64(m.Snapshot.Zxid))
		b = appendNilLen(b, m.Snapshot.Data == nil, len(m.Snapshot.Data))
		return b, m.Snapshot.Data
	}
	return b, nil
}

// DecodeMessage decodes one message that spans all of b. The Data of the
// entries and of the snapshot alias b, so b must not be reused while the
// message is in use. It never panics, and it allocates no more than a
// small multiple of len(b) whatever the lengths b claims.
func DecodeMessage(b []byte) (zab.Message, error) {
	d := decoder{b: b}
	m := d.message()
	if d.err != nil {
		return zab.Message{}, d.err
	}
	if len(d.b) != 0 {
		return zab.Message{}, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(d.b))
	}
	return m, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, a...))
	}
}

func (d *decoder) message() zab.Message {
	var m zab.Message
	if len(d.b) < headSize {
		d.fail("%d bytes, shorter than the header", len(d.b))
		return m
	}
	version, typ, flags, sync, state := d.b[0], d.b[1], d.b[2], d.b[3], d.b[4]
	d.b = d.b[headSize:]
	switch {
	case version != codecVersion:
		d.fail("version %d, want %d", version, codecVersion)
	case typ == 0 || zab.MsgType(typ) > lastMsgType:
		d.fail("unknown message type %d", typ)
	case flags&^flagsKnown != 0:
		d.fail("unknown flags %#x", flags)
	case zab.SyncMode(sync) > lastSync:
		d.fail("unknown sync mode %d", sync)
	case zab.StateType(state) > lastState:
		d.fail("unknown state %d", state)
	}
	m.Type = zab.MsgType(typ)
	m.NonVoting = flags&flagNonVoting != 0
	m.Reject = flags&flagReject != 0
	m.Sync = zab.SyncMode(sync)
	m.State = zab.StateType(state)

	m.From = d.uvarint("from")
	m.To = d.uvarint("to")
	m.Session = d.uvarint("session")
	m.Epoch = d.uint32("epoch")
	m.CurrentEpoch = d.uint32("current epoch")
	m.Zxid = zab.Zxid(d.uvarint("zxid"))
	m.Prev = zab.Zxid(d.uvarint("prev"))
	m.Commit = zab.Zxid(d.uvarint("commit"))
	m.Vote.Leader = d.uvarint("vote leader")
	m.Vote.Zxid = zab.Zxid(d.uvarint("vote zxid"))
	m.Vote.Epoch = d.uint32("vote epoch")
	m.Vote.Round = d.uvarint("vote round")
	if flags&flagGroup != 0 && d.err == nil {
		if m.Group = d.uvarint("group"); m.Group == 0 && d.err == nil {
			d.fail("group flag with group 0")
		}
	}
	if flags&flagMembership != 0 && d.err == nil {
		m.MembershipZxid = zab.Zxid(d.uvarint("membership zxid"))
		mb := &zab.Membership{}
		mb.Voters = d.ids("voters")
		mb.Observers = d.ids("observers")
		m.Membership = mb
	}

	if n, isNil := d.nilLen("entries"); !isNil && d.err == nil {
		// Every entry takes at least two bytes (a zxid and a length), so
		// a count beyond half the input is a lie: refuse it before
		// allocating for it.
		if n > len(d.b)/2 {
			d.fail("%d entries in %d bytes", n, len(d.b))
			return m
		}
		m.Entries = make([]zab.Entry, n)
		for i := range m.Entries {
			m.Entries[i].Zxid = zab.Zxid(d.uvarint("entry zxid"))
			m.Entries[i].Data = d.bytes("entry data")
			if d.err != nil {
				return m
			}
		}
	}
	if flags&flagSnapshot != 0 && d.err == nil {
		s := &zab.Snapshot{}
		s.Zxid = zab.Zxid(d.uvarint("snapshot zxid"))
		s.Data = d.bytes("snapshot data")
		m.Snapshot = s
	}
	return m
}

// ids decodes a count and that many uvarint server ids. Each takes at
// least a byte, so a count beyond the input is refused before allocating.
func (d *decoder) ids(what string) []uint64 {
	n := d.uvarint(what)
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("%d %s in %d bytes", n, what, len(d.b))
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = d.uvarint(what)
	}
	return out
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint for %s", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint32(what string) uint32 {
	v := d.uvarint(what)
	if v > math.MaxUint32 {
		d.fail("%s %d overflows 32 bits", what, v)
		return 0
	}
	return uint32(v)
}

// nilLen decodes a length+1 (0: nil).
func (d *decoder) nilLen(what string) (n int, isNil bool) {
	v := d.uvarint(what)
	if d.err != nil || v == 0 {
		return 0, true
	}
	if v-1 > uint64(len(d.b)) {
		d.fail("%s length %d exceeds the %d bytes left", what, v-1, len(d.b))
		return 0, true
	}
	return int(v - 1), false
}

func (d *decoder) bytes(what string) []byte {
	n, isNil := d.nilLen(what)
	if isNil {
		return nil
	}
	// Full slice expression: an append to the decoded data must not
	// overwrite the bytes that follow it in the frame.
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func appendNilLen(b []byte, isNil bool, n int) []byte {
	if isNil {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, uint64(n)+1)
}

func nilLenSize(isNil bool, n int) int {
	if isNil {
		return 1
	}
	return uvarintLen(uint64(n) + 1)
}

func bytesSize(p []byte) int { return nilLenSize(p == nil, len(p)) + len(p) }

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
