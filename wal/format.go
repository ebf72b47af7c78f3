package wal

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"
	"strconv"
	"strings"
)

const (
	headerSize       = 32
	recordHeaderSize = 16
	formatVersion    = 1
	segmentPrefix    = "log."
	corruptSuffix    = ".corrupt"
)

var magic = [8]byte{'c', 'o', 'r', 'r', 'a', 'l', 'w', 'l'}

// castagnoli is read-only after initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var le = binary.LittleEndian

// segmentName is log.<base in lower-case hex>, as ZooKeeper names logs.
func segmentName(base int64) string {
	return segmentPrefix + strconv.FormatInt(base, 16)
}

// parseSegmentName accepts only the names segmentName produces, so that
// log.1.corrupt, log.0a or a stray log.tmp are not mistaken for segments.
func parseSegmentName(name string) (int64, bool) {
	s, ok := strings.CutPrefix(name, segmentPrefix)
	if !ok || s == "" || s[0] == '-' || s[0] == '+' {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 16, 64)
	if err != nil || v <= 0 || segmentName(v) != name {
		return 0, false
	}
	return v, true
}

func encodeHeader(base int64) [headerSize]byte {
	var h [headerSize]byte
	copy(h[0:8], magic[:])
	le.PutUint32(h[8:], formatVersion)
	le.PutUint64(h[16:], uint64(base))
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

func checkHeader(h [headerSize]byte, base int64) (headerState, string) {
	want := encodeHeader(base)
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
		return headerBad, "not a corral log segment (bad magic)"
	case le.Uint32(h[24:]) != crc32.Checksum(h[:24], castagnoli):
		return headerBad, "header checksum mismatch"
	case le.Uint32(h[8:]) != formatVersion:
		return headerBad, "unsupported format version " + strconv.FormatUint(uint64(le.Uint32(h[8:])), 10)
	default:
		return headerBad, "header zxid does not match file name"
	}
}

// appendRecord appends the encoding of one record to b. The CRC is computed
// over the bytes already in b, so nothing escapes and nothing allocates
// once b has grown.
func appendRecord(b []byte, zxid int64, data []byte) []byte {
	start := len(b)
	b = le.AppendUint32(b, uint32(len(data)))
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, uint64(zxid))
	b = append(b, data...)
	le.PutUint32(b[start+4:], crc32.Checksum(b[start+8:], castagnoli))
	return b
}

type recStatus int

const (
	recOK  recStatus = iota
	recEnd           // an all-zero header, or no room for a header: the segment's end
	recBad           // an invalid record
)

// recordReader reads the records of one segment sequentially.
type recordReader struct {
	br  *bufio.Reader
	off int64 // file offset of the next record
	end int64 // file offset where the segment's bytes end
	hdr [recordHeaderSize]byte
	buf []byte
}

// newRecordReader reads the records in [headerSize, end) of r.
func newRecordReader(r io.ReaderAt, end int64, bufSize int) *recordReader {
	n := max(min(int64(bufSize), end-headerSize), 16)
	return &recordReader{
		br:  bufio.NewReaderSize(io.NewSectionReader(r, headerSize, end-headerSize), int(n)),
		off: headerSize,
		end: end,
	}
}

// next returns the next record. data is valid until the following call.
// On recBad, reason says why and off is left at the bad record.
func (rr *recordReader) next() (zxid int64, data []byte, st recStatus, reason string, err error) {
	rem := rr.end - rr.off
	if rem < recordHeaderSize {
		return 0, nil, recEnd, "", nil
	}
	if _, err := io.ReadFull(rr.br, rr.hdr[:]); err != nil {
		return 0, nil, 0, "", err
	}
	length := le.Uint32(rr.hdr[0:])
	sum := le.Uint32(rr.hdr[4:])
	zxid = int64(le.Uint64(rr.hdr[8:]))
	if length == 0 && sum == 0 && zxid == 0 {
		return 0, nil, recEnd, "", nil
	}
	if int64(length) > rem-recordHeaderSize {
		return 0, nil, recBad, "record length exceeds the segment", nil
	}
	if cap(rr.buf) < int(length) {
		rr.buf = make([]byte, length)
	}
	data = rr.buf[:length]
	if _, err := io.ReadFull(rr.br, data); err != nil {
		return 0, nil, 0, "", err
	}
	c := crc32.Update(0, castagnoli, rr.hdr[8:])
	if crc32.Update(c, castagnoli, data) != sum {
		return 0, nil, recBad, "record checksum mismatch", nil
	}
	rr.off += recordHeaderSize + int64(length)
	return zxid, data, recOK, "", nil
}
