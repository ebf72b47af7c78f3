package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
)

// Snapshot images in their earlier form, a leader's tree snapshot followed
// by every payload of its data log (snapstream.go has the streamed form):
//
//	imageMagic | u64 tree length | tree | { u64 zxid | u32 length | u32 crc | payload }* | u64 0
var imageMagic = [16]byte{'c', 'o', 'r', 'r', 'a', 'l', '-', 'r', 'l', 'o', 'g', '-', 's', 'n', 'a', 'p'}

// image wraps a tree snapshot with every payload this member holds: the
// image's earlier form, which a leader of an earlier build sends and
// install still takes. A leader now streams the payloads instead
// (snapstream.go); tests build this form here.
func (d *logData) image(tree []byte) ([]byte, error) {
	if d.dl == nil {
		return tree, nil // inline: the tree is everything
	}
	d.mu.Lock()
	zxids := make([]int64, 0, d.idx.live)
	d.idx.all(func(r rec) { zxids = append(zxids, r.zxid) })
	d.mu.Unlock()
	slices.Sort(zxids)
	out := append(imageMagic[:len(imageMagic):len(imageMagic)], make([]byte, 8)...)
	binary.BigEndian.PutUint64(out[16:], uint64(len(tree)))
	out = append(out, tree...)
	var hdr [16]byte
	for _, z := range zxids {
		m, b, p, err := d.readRecord(z)
		if errors.Is(err, errNoPayload) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, err
		}
		if m.Zxid != z {
			return nil, fmt.Errorf("rlog: the record at %s is not %s", p, hex(z))
		}
		binary.BigEndian.PutUint64(hdr[:], uint64(z))
		binary.BigEndian.PutUint32(hdr[8:], uint32(len(b)))
		binary.BigEndian.PutUint32(hdr[12:], crc32.Checksum(b, castagnoli))
		out = append(out, hdr[:]...)
		out = append(out, b...)
	}
	return append(out, 0, 0, 0, 0, 0, 0, 0, 0), nil
}

// isImage says whether a snapshot from a leader carries payloads.
func isImage(b []byte) bool { return bytes.HasPrefix(b, imageMagic[:]) }

// install stores the payloads of an image, syncs them, and returns the
// tree snapshot inside.
func (d *logData) install(b []byte) ([]byte, error) {
	bad := func(why string) ([]byte, error) {
		return nil, fmt.Errorf("rlog snapshot image from the leader: %s", why)
	}
	if d.dl == nil {
		return bad("it carries payloads of a data log, and this member is diskless (every entry inline): " +
			"every member needs the same durability")
	}
	if len(b) < 24 {
		return bad("truncated header")
	}
	n := binary.BigEndian.Uint64(b[16:])
	if n > uint64(len(b)-24) {
		return bad("tree length past the end")
	}
	tree := b[24 : 24+n]
	rest := b[24+n:]
	for {
		if len(rest) < 8 {
			return bad("no end marker")
		}
		z := int64(binary.BigEndian.Uint64(rest))
		if z == 0 {
			if len(rest) != 8 {
				return bad("bytes after the end marker")
			}
			break
		}
		if len(rest) < 16 {
			return bad("truncated record header")
		}
		l := binary.BigEndian.Uint32(rest[8:])
		crc := binary.BigEndian.Uint32(rest[12:])
		if uint64(l) > uint64(len(rest)-16) {
			return bad("record past the end")
		}
		payload := rest[16 : 16+l]
		if crc32.Checksum(payload, castagnoli) != crc {
			return bad(fmt.Sprintf("checksum mismatch in the payload of %s", hex(z)))
		}
		if _, err := d.store(z, payload); err != nil {
			return nil, err
		}
		rest = rest[16+l:]
	}
	if err := d.syncWritten(); err != nil {
		return nil, err
	}
	return tree, nil
}
