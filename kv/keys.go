package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// Pebble key layout. The first byte separates the reserved keys from the
// data so that a table's data is one contiguous range:
//
//	metaApplied                              applied zxid (8 B BE)
//	metaNextID                               next table/family id (4 B BE)
//	metaTable | name                         table descriptor (schema.go)
//	dataPrefix | table(4) | esc(row) 00 01 | family(4) | esc(qual) 00 01 | ^version(8)
//	dataPrefix | table(4) | esc(row) 00 01 | family(4) | esc(qual) 00 01   (one-key column)
//
// esc doubles as a terminator-safe escape: 0x00 becomes 00 FF and the
// string ends with 00 01, so escaped strings sort as the raw strings do
// and no escaped string is a prefix of another. Every row's keys therefore
// sit in [rowPrefix, rowPrefix with its last byte 01 -> 02), and likewise
// for a family within a row and a column within a family. The version is
// stored complemented so the newest version of a column sorts first.
//
// A family that keeps one version stores each column under one key, the
// column prefix itself, and its value is version(8 BE) | value (a table
// descriptor says whether its families do: schema.go, oneKey). A put
// then overwrites the column with one Set: no seek for the version it
// displaces, no tombstone for it, and a flush keeps only a hot column's
// last write where the versioned layout flushes every version and the
// tombstone that deleted it. The two forms are told apart by what follows
// the escaped qualifier: nothing, or 8 bytes.
const (
	prefixMeta byte = 0x01
	prefixData byte = 0x02

	metaApplied byte = 'a'
	metaNextID  byte = 'n'
	metaTable   byte = 't'
)

var (
	keyApplied = []byte{prefixMeta, metaApplied}
	keyNextID  = []byte{prefixMeta, metaNextID}
)

func tableMetaKey(name string) []byte {
	k := make([]byte, 0, 2+len(name))
	k = append(k, prefixMeta, metaTable)
	return append(k, name...)
}

// appendEscaped appends esc(s) and its terminator 00 01.
func appendEscaped(dst, s []byte) []byte {
	for _, c := range s {
		if c == 0 {
			dst = append(dst, 0, 0xff)
			continue
		}
		dst = append(dst, c)
	}
	return append(dst, 0, 1)
}

// decodeEscaped reads one escaped string from the front of b and returns
// it and the rest of b.
func decodeEscaped(b []byte) (s, rest []byte, err error) {
	// One pass finds the terminator and counts the escapes, so the string
	// is allocated once at its size.
	esc := 0
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			continue
		}
		if i+1 >= len(b) {
			return nil, nil, errBadKey
		}
		switch b[i+1] {
		case 0xff:
			esc++
			i++
		case 0x01:
			s = make([]byte, 0, i-esc)
			if esc == 0 {
				return append(s, b[:i]...), b[i+2:], nil
			}
			for j := 0; j < i; j++ {
				s = append(s, b[j])
				if b[j] == 0 {
					j++ // the 0xff of 00 FF
				}
			}
			return s, b[i+2:], nil
		default:
			return nil, nil, errBadKey
		}
	}
	return nil, nil, errBadKey
}

// decodeEscapedView is decodeEscaped without a copy of a string that has
// no escapes: s is then a slice of b (its capacity capped).
func decodeEscapedView(b []byte) (s, rest []byte, err error) {
	i := bytes.IndexByte(b, 0)
	if i >= 0 && i+1 < len(b) && b[i+1] == 0x01 {
		return b[:i:i], b[i+2:], nil
	}
	return decodeEscaped(b)
}

var (
	errBadKey   = errors.New("kv: malformed data key")
	errBadValue = errors.New("kv: malformed one-key column value")
)

func tablePrefix(table uint32) []byte {
	k := make([]byte, 5, 64)
	k[0] = prefixData
	binary.BigEndian.PutUint32(k[1:], table)
	return k
}

func rowPrefix(table uint32, row []byte) []byte {
	return appendEscaped(tablePrefix(table), row)
}

func familyPrefix(table uint32, row []byte, family uint32) []byte {
	return binary.BigEndian.AppendUint32(rowPrefix(table, row), family)
}

func columnPrefix(table uint32, row []byte, family uint32, qual []byte) []byte {
	return appendEscaped(familyPrefix(table, row, family), qual)
}

func cellKey(table uint32, row []byte, family uint32, qual []byte, version uint64) []byte {
	return binary.BigEndian.AppendUint64(columnPrefix(table, row, family, qual), ^version)
}

// escapedEnd returns the end of the range of keys that begin with p, an
// escaped string's prefix ending in its terminator 00 01: the same bytes
// ending 00 02, which no escaped string continues.
func escapedEnd(p []byte) []byte {
	e := append([]byte(nil), p...)
	e[len(e)-1] = 0x02
	return e
}

// prefixEnd returns the smallest key above every key that begins with p.
func prefixEnd(p []byte) []byte {
	e := append([]byte(nil), p...)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] != 0xff {
			e[i]++
			return e[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}

// cellKeyParts is a decoded data key.
type cellKeyParts struct {
	table   uint32
	row     []byte
	family  uint32
	qual    []byte
	version uint64
	// oneKey: the key is a one-key column's (no version in it); the
	// version is the value's first 8 bytes (cellValue).
	oneKey bool
	// rest is the key after its escaped row: a key's row prefix is
	// k[:len(k)-len(rest)].
	rest []byte
}

func decodeCellKey(k []byte) (cellKeyParts, error) {
	if len(k) < 5 || k[0] != prefixData {
		return cellKeyParts{}, errBadKey
	}
	row, rest, err := decodeEscaped(k[5:])
	if err != nil {
		return cellKeyParts{}, err
	}
	p, err := decodeCellKeyRest(rest)
	p.table, p.row = binary.BigEndian.Uint32(k[1:5]), row
	return p, err
}

// decodeCellKeyRest decodes what follows a data key's escaped row: the
// family, the qualifier and the version (table and row left unset).
func decodeCellKeyRest(rest []byte) (cellKeyParts, error) {
	return decodeRest(rest, decodeEscaped)
}

// decodeCellKeyRestView is decodeCellKeyRest with a qualifier that is a
// slice of rest unless it has escapes: valid only as long as rest is.
func decodeCellKeyRestView(rest []byte) (cellKeyParts, error) {
	return decodeRest(rest, decodeEscapedView)
}

func decodeRest(rest []byte, decode func([]byte) ([]byte, []byte, error)) (cellKeyParts, error) {
	p := cellKeyParts{rest: rest}
	if len(rest) < 4 {
		return p, errBadKey
	}
	p.family = binary.BigEndian.Uint32(rest)
	qual, rest, err := decode(rest[4:])
	if err != nil {
		return p, err
	}
	p.qual = qual
	switch len(rest) {
	case 0:
		p.oneKey = true
	case 8:
		p.version = ^binary.BigEndian.Uint64(rest)
	default:
		return p, errBadKey
	}
	return p, nil
}

// columnOf returns the column prefix of k, a data key decoded into p: k
// itself for a one-key column, else all but its version.
func (p *cellKeyParts) columnOf(k []byte) []byte {
	if p.oneKey {
		return k
	}
	return k[:len(k)-8]
}

// cellValue returns the version and value of the cell whose key decoded
// into p and whose stored value is v: a one-key column's value carries its
// version in front. The value is a slice of v.
func (p *cellKeyParts) cellValue(v []byte) (uint64, []byte, error) {
	if !p.oneKey {
		return p.version, v, nil
	}
	return splitOneKeyValue(v)
}

// oneKeyValue appends a one-key column's stored value to dst.
func oneKeyValue(dst []byte, version uint64, value []byte) []byte {
	return append(binary.BigEndian.AppendUint64(dst, version), value...)
}

// splitOneKeyValue splits a one-key column's stored value.
func splitOneKeyValue(v []byte) (uint64, []byte, error) {
	if len(v) < 8 {
		return 0, nil, errBadValue
	}
	return binary.BigEndian.Uint64(v), v[8:], nil
}
