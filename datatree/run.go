package datatree

import (
	"encoding/binary"
	"slices"
	"sort"
	"strconv"
)

// An entryRun holds the packed children of one node (pack.go): children
// whose whole state follows from their name, creation zxid and time, data
// and the run's ACL, as a log's entries do. They are kept as varint deltas
// in blocks of up to runBlockEntries, about a dozen bytes an entry, where a
// node costs ~100 (its slot, its record, its name).
//
// Every packed child's name is prefix followed by its number printed in
// exactly width decimal digits; numbers only grow as entries are added, so
// blocks are in number order and found by binary search. A removed entry
// is a bit in its block; a block whose entries are all removed is dropped.
// Each packed entry holds one reference to the run's ACL, as a node holds
// one to its own.
type entryRun struct {
	prefix string
	width  int
	acl    aclID

	blocks []runBlock
	// last is the largest number ever added (a new entry must be above it,
	// even if that entry has been removed).
	last uint64
	// lastZ and lastT are the czxid and ctime of entry last: a block
	// other than the last is full, so a block that takes an entry holds
	// the one added before it (or is new).
	lastZ, lastT int64
	any          bool // an entry was ever added (last is meaningful)
	live         int  // entries not removed
}

// runBlockEntries is the most entries a block holds: one word of removal
// bits.
const runBlockEntries = 64

// runBlock is up to runBlockEntries consecutive entries of a run. buf
// holds them in order: the first entry's data, then for each further
// entry the uvarint distance of its number from the one before, the
// varint distances of its czxid and ctime from the one before, and its
// data. Data is a uvarint tag then bytes: 0 for null data, 2k+1 for k raw
// bytes, 2k+2 for k bytes of the tree's EntryCodec form. buf is only
// appended to, so slices of it stay valid; a full block's is trimmed to
// its length.
type runBlock struct {
	first        uint64 // the first entry's number
	czxid, ctime int64  // the first entry's
	removed      uint64 // bit i: entry i is gone
	n            uint8  // entries in buf
	buf          []byte
}

// runEntry is one decoded entry. data is its encoded data: see
// runBlock.buf (a slice of the block's buffer, tag included).
type runEntry struct {
	num          uint64
	czxid, ctime int64
	data         []byte
}

// parse returns the number of the entry called name, and false if name
// is not a name of this run.
func (r *entryRun) parse(name string) (uint64, bool) {
	if len(name) != len(r.prefix)+r.width || name[:len(r.prefix)] != r.prefix {
		return 0, false
	}
	return parseDigits(name[len(r.prefix):])
}

// parseDigits is the value of a string of decimal digits, and false for
// anything else (a sign, or a value above 2^64-1).
func parseDigits(s string) (uint64, bool) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// splitEntryName splits a name into a prefix and its trailing decimal
// digits (at most 20), and false if it has no trailing digits or they do
// not fit 64 bits.
func splitEntryName(name string) (prefix string, width int, num uint64, ok bool) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' && len(name)-i < 20 {
		i--
	}
	if i == len(name) {
		return "", 0, 0, false
	}
	num, ok = parseDigits(name[i:])
	return name[:i], len(name) - i, num, ok
}

// appendName appends the name of entry num.
func (r *entryRun) appendName(dst []byte, num uint64) []byte {
	dst = append(dst, r.prefix...)
	var b [20]byte
	digits := strconv.AppendUint(b[:0], num, 10)
	for k := len(digits); k < r.width; k++ {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

func (r *entryRun) name(num uint64) string {
	return string(r.appendName(make([]byte, 0, len(r.prefix)+r.width), num))
}

// add appends an entry; num must be above r.last. data is the entry's
// encoded data (tag and bytes).
func (r *entryRun) add(num uint64, czxid, ctime int64, data []byte) {
	k := len(r.blocks)
	if k == 0 || r.blocks[k-1].n == runBlockEntries {
		if k > 0 {
			r.blocks[k-1].buf = slices.Clip(slices.Clone(r.blocks[k-1].buf))
		}
		r.blocks = append(r.blocks, runBlock{first: num, czxid: czxid, ctime: ctime, n: 1,
			buf: append(make([]byte, 0, 64+len(data)), data...)})
	} else {
		b := &r.blocks[k-1]
		b.buf = binary.AppendUvarint(b.buf, num-r.last)
		b.buf = binary.AppendVarint(b.buf, czxid-r.lastZ)
		b.buf = binary.AppendVarint(b.buf, ctime-r.lastT)
		b.buf = append(b.buf, data...)
		b.n++
	}
	r.last, r.lastZ, r.lastT, r.any = num, czxid, ctime, true
	r.live++
}

// find returns the block holding num and num's index in it, and false if
// no live entry has that number.
func (r *entryRun) find(num uint64) (bi, i int, e runEntry, ok bool) {
	bi = sort.Search(len(r.blocks), func(i int) bool { return r.blocks[i].first > num }) - 1
	if bi < 0 {
		return 0, 0, runEntry{}, false
	}
	b := &r.blocks[bi]
	found := false
	b.each(func(j int, x runEntry) bool {
		if x.num >= num {
			if x.num == num && b.removed&(1<<j) == 0 {
				i, e, found = j, x, true
			}
			return false
		}
		return true
	})
	return bi, i, e, found
}

// get returns the live entry num.
func (r *entryRun) get(num uint64) (runEntry, bool) {
	_, _, e, ok := r.find(num)
	return e, ok
}

// remove takes entry num out of the run, if it is there.
func (r *entryRun) remove(num uint64) bool {
	bi, i, _, ok := r.find(num)
	if !ok {
		return false
	}
	b := &r.blocks[bi]
	b.removed |= 1 << i
	r.live--
	if b.removed == uint64(1)<<b.n-1 { // every entry (n = 64 wraps to all ones)
		r.blocks = slices.Delete(r.blocks, bi, bi+1)
		if cap(r.blocks) > 2*len(r.blocks)+8 {
			r.blocks = slices.Clip(slices.Clone(r.blocks))
		}
	}
	return true
}

// each calls f with every live entry numbered from or above, in number
// order, until f returns false.
func (r *entryRun) each(from uint64, f func(e runEntry) bool) {
	start := max(sort.Search(len(r.blocks), func(i int) bool { return r.blocks[i].first > from })-1, 0)
	for bi := start; bi < len(r.blocks); bi++ {
		b := &r.blocks[bi]
		more := true
		b.each(func(j int, e runEntry) bool {
			if b.removed&(1<<j) == 0 && e.num >= from {
				more = f(e)
			}
			return more
		})
		if !more {
			return
		}
	}
}

// each decodes the block's entries in order (removed ones included) and
// calls f with each and its index until f returns false.
func (b *runBlock) each(f func(i int, e runEntry) bool) {
	e := runEntry{num: b.first, czxid: b.czxid, ctime: b.ctime}
	p := b.buf
	for i := 0; i < int(b.n); i++ {
		if i > 0 {
			d, k := binary.Uvarint(p)
			p = p[k:]
			dz, kz := binary.Varint(p)
			p = p[kz:]
			dt, kt := binary.Varint(p)
			p = p[kt:]
			e.num += d
			e.czxid += dz
			e.ctime += dt
		}
		tag, k := binary.Uvarint(p)
		size := k
		if tag > 0 {
			size += int((tag - 1) / 2)
		}
		e.data = p[:size:size]
		p = p[size:]
		if !f(i, e) {
			return
		}
	}
}

// encodeRaw appends data's encoded form as raw bytes.
func encodeRaw(dst, data []byte) []byte {
	if data == nil {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, 2*uint64(len(data))+1)
	return append(dst, data...)
}

// encodePacked appends the encoded form of the codec's bytes p.
func encodePacked(dst, p []byte) []byte {
	dst = binary.AppendUvarint(dst, 2*uint64(len(p))+2)
	return append(dst, p...)
}

// splitData returns an encoded data's bytes and whether they are the
// codec's form; nil for null data.
func splitData(enc []byte) (b []byte, packed bool) {
	tag, k := binary.Uvarint(enc)
	if tag == 0 {
		return nil, false
	}
	return enc[k:], tag%2 == 0
}
