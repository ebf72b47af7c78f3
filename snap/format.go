package snap

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strconv"
	"strings"
)

const (
	headerSize    = 32
	trailerSize   = 16
	formatVersion = 1
	namePrefix    = "snapshot."
	tmpSuffix     = ".tmp"
	corruptSuffix = ".corrupt"
)

var (
	magic        = [8]byte{'c', 'o', 'r', 'r', 'a', 'l', 's', 'n'}
	trailerMagic = [4]byte{'s', 'n', 'p', 'e'}
	castagnoli   = crc32.MakeTable(crc32.Castagnoli) // read-only
	le           = binary.LittleEndian
)

var (
	// ErrCorrupt marks a snapshot whose bytes are damaged: a bad header,
	// a body whose CRC or length does not match the trailer, a truncated
	// file. A fn passed to Load may wrap it to report a body it cannot
	// decode.
	ErrCorrupt = errors.New("snap: corrupt snapshot")
	// ErrNoSnapshot is returned by Load when no usable snapshot exists.
	ErrNoSnapshot = errors.New("snap: no snapshot")
	// ErrDone is returned by a Writer used after Commit or Abort.
	ErrDone = errors.New("snap: writer already committed or aborted")
)

// Name returns the file name of the snapshot of zxid.
func Name(zxid int64) string { return namePrefix + strconv.FormatInt(zxid, 16) }

// parseName accepts only names Name produces.
func parseName(name string) (int64, bool) {
	s, ok := strings.CutPrefix(name, namePrefix)
	if !ok || s == "" || s[0] == '-' || s[0] == '+' {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 16, 64)
	if err != nil || v < 0 || Name(v) != name {
		return 0, false
	}
	return v, true
}

func encodeHeader(zxid int64) [headerSize]byte {
	var h [headerSize]byte
	copy(h[0:8], magic[:])
	le.PutUint32(h[8:], formatVersion)
	le.PutUint64(h[16:], uint64(zxid))
	le.PutUint32(h[24:], crc32.Checksum(h[:24], castagnoli))
	return h
}

// checkHeader returns why h is not the header of the snapshot of zxid, or
// "" if it is.
func checkHeader(h [headerSize]byte, zxid int64) string {
	switch {
	case [8]byte(h[0:8]) != magic:
		return "not a corral snapshot (bad magic)"
	case le.Uint32(h[24:]) != crc32.Checksum(h[:24], castagnoli):
		return "header checksum mismatch"
	case le.Uint32(h[8:]) != formatVersion:
		return "unsupported format version " + strconv.FormatUint(uint64(le.Uint32(h[8:])), 10)
	case int64(le.Uint64(h[16:])) != zxid:
		return "header zxid does not match file name"
	}
	return ""
}

func encodeTrailer(n int64, sum uint32) [trailerSize]byte {
	var t [trailerSize]byte
	le.PutUint64(t[0:], uint64(n))
	le.PutUint32(t[8:], sum)
	copy(t[12:], trailerMagic[:])
	return t
}
