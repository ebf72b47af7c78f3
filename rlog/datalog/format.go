package datalog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

const (
	headerSize       = 32
	recordHeaderSize = 32
	formatVersion    = 1
	segmentPrefix    = "data."
	spareName        = "data.next.tmp"
)

var magic = [8]byte{'c', 'o', 'r', 'r', 'a', 'l', 'd', 'l'}

// castagnoli is read-only after initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var le = binary.LittleEndian

// Meta says which append a record's bytes are: the zxid of the entry that
// carried it, the log's id and the append's byte offset in that log.
type Meta struct {
	Zxid   int64
	Log    uint64
	Offset int64
}

// Pos addresses a record: the segment's sequence number and the file
// offset of the record's header. The zero Pos is before every record.
type Pos struct {
	Seg uint64
	Off int64
}

// Less orders positions as the log writes them.
func (p Pos) Less(q Pos) bool {
	if p.Seg != q.Seg {
		return p.Seg < q.Seg
	}
	return p.Off < q.Off
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Seg, p.Off) }

// RecordSize is how many bytes of a segment a payload of n bytes takes.
func RecordSize(n int) int64 { return recordHeaderSize + int64(n) }

func segmentName(seq uint64) string { return fmt.Sprintf("%s%016x", segmentPrefix, seq) }

// parseSegmentName accepts only the names segmentName produces.
func parseSegmentName(name string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, segmentPrefix)
	if !ok || len(s) != 16 {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil || v == 0 || segmentName(v) != name {
		return 0, false
	}
	return v, true
}

func encodeHeader(seq uint64) [headerSize]byte {
	var h [headerSize]byte
	copy(h[0:8], magic[:])
	le.PutUint32(h[8:], formatVersion)
	le.PutUint64(h[16:], seq)
	le.PutUint32(h[24:], crc32.Checksum(h[:24], castagnoli))
	return h
}

type headerState int

const (
	headerOK headerState = iota
	// headerTorn: every byte is zero or what it should be, as when the
	// header never fully reached the disk.
	headerTorn
	headerBad
)

func checkHeader(h [headerSize]byte, seq uint64) (headerState, string) {
	want := encodeHeader(seq)
	if h == want {
		return headerOK, ""
	}
	torn := true
	for i := range h {
		if h[i] != 0 && h[i] != want[i] {
			torn = false
			break
		}
	}
	if torn {
		return headerTorn, "header incomplete"
	}
	switch {
	case [8]byte(h[0:8]) != magic:
		return headerBad, "not a corral data log segment (bad magic)"
	case le.Uint32(h[24:]) != crc32.Checksum(h[:24], castagnoli):
		return headerBad, "header checksum mismatch"
	case le.Uint32(h[8:]) != formatVersion:
		return headerBad, "unsupported format version " + strconv.FormatUint(uint64(le.Uint32(h[8:])), 10)
	default:
		return headerBad, "header sequence number does not match file name"
	}
}

// appendRecord appends the encoding of one record to b.
func appendRecord(b []byte, m Meta, payload []byte) []byte {
	start := len(b)
	b = le.AppendUint32(b, uint32(len(payload)))
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, uint64(m.Zxid))
	b = le.AppendUint64(b, m.Log)
	b = le.AppendUint64(b, uint64(m.Offset))
	b = append(b, payload...)
	le.PutUint32(b[start+4:], crc32.Checksum(b[start+8:], castagnoli))
	return b
}

// encodeRecordHeader returns the header of a record for a payload of n
// bytes whose CRC-32C is sum; the payload is written after it
// separately, without a copy. The record's checksum covers the header's
// fields after it and then the payload, combined from sum rather than
// read again.
func encodeRecordHeader(m Meta, n int, sum uint32) [recordHeaderSize]byte {
	var h [recordHeaderSize]byte
	le.PutUint32(h[0:], uint32(n))
	le.PutUint64(h[8:], uint64(m.Zxid))
	le.PutUint64(h[16:], m.Log)
	le.PutUint64(h[24:], uint64(m.Offset))
	le.PutUint32(h[4:], crcCombine(crc32.Checksum(h[8:], castagnoli), sum, int64(n)))
	return h
}

// PayloadSum is the CRC-32C of a payload, as AppendSummed takes it.
func PayloadSum(payload []byte) uint32 { return crc32.Checksum(payload, castagnoli) }

type recStatus int

const (
	recOK  recStatus = iota
	recEnd           // an all-zero header, or no room for one: the segment's end
	recBad           // an invalid record
)

// parsedHeader is a record header's fields.
type parsedHeader struct {
	length uint32
	sum    uint32
	meta   Meta
}

// parseRecordHeader classifies a record header; room is how many bytes of
// the segment follow the header (the payload must fit in them).
func parseRecordHeader(h []byte, room int64) (parsedHeader, recStatus, string) {
	if len(h) < recordHeaderSize {
		return parsedHeader{}, recEnd, ""
	}
	p := parsedHeader{
		length: le.Uint32(h[0:]),
		sum:    le.Uint32(h[4:]),
		meta: Meta{
			Zxid:   int64(le.Uint64(h[8:])),
			Log:    le.Uint64(h[16:]),
			Offset: int64(le.Uint64(h[24:])),
		},
	}
	if allZero(h[:recordHeaderSize]) {
		return p, recEnd, ""
	}
	if p.length == 0 {
		return p, recBad, "record with an empty payload"
	}
	if int64(p.length) > room {
		return p, recBad, "record length exceeds the segment"
	}
	return p, recOK, ""
}

func checkPayload(h []byte, p parsedHeader, payload []byte) bool {
	c := crc32.Update(0, castagnoli, h[8:recordHeaderSize])
	return crc32.Update(c, castagnoli, payload) == p.sum
}

// DecodeRecord decodes the record at the start of b: its meta, its payload
// (aliasing b) and its encoded size. It returns an error, never panics, for
// any b that is not one whole valid record prefix; ok is false with a nil
// error at an all-zero header (a segment's end).
func DecodeRecord(b []byte) (m Meta, payload []byte, size int64, ok bool, err error) {
	if len(b) < recordHeaderSize {
		return Meta{}, nil, 0, false, fmt.Errorf("%w: short record header (%d bytes)", ErrCorrupt, len(b))
	}
	p, st, why := parseRecordHeader(b, int64(len(b)-recordHeaderSize))
	switch st {
	case recEnd:
		return Meta{}, nil, 0, false, nil
	case recBad:
		return Meta{}, nil, 0, false, fmt.Errorf("%w: %s", ErrCorrupt, why)
	}
	payload = b[recordHeaderSize : recordHeaderSize+int(p.length)]
	if !checkPayload(b, p, payload) {
		return Meta{}, nil, 0, false, fmt.Errorf("%w: record checksum mismatch", ErrCorrupt)
	}
	return p.meta, payload, RecordSize(len(payload)), true, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
