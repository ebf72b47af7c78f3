package server

import (
	"encoding/binary"
	"slices"
	"sort"
	"unsafe"

	"github.com/corral-db/corral/rlog/datalog"
)

// recIndex maps an entry's zxid to its record in this member's data log
// (docs/design/rlog.md, "The data log's index in the ensemble") in a few
// bytes per record instead of a map entry (~70 bytes live heap each):
//
// Records are written one after another, in zxid order, so the index is
// a list of blocks, each up to blockRecords records lying back to back in
// one segment. A block keeps its first record's position, zxid and
// length, and for each further record the zxid's increase (uvarint) and
// the length's change (zigzag varint): two bytes for a run of equal-size
// appends. A record's position is the block's plus the sizes of the
// records before it. Released records are a bit in their block; a block
// whose records are all released is dropped (compact).
//
// A record whose zxid is not above the last one indexed (a proposal
// written again after a crash, the payloads of a SNAP image older than
// what this member held) starts a new run: within a run zxids and
// positions both increase, so a run is searched by binary search. Runs
// are few (one per such event) and are searched newest first; a zxid has
// at most one record not released (store writes only what find misses).
//
// recIndex is not safe for concurrent use (logData.mu guards it).
type recIndex struct {
	runs []recRun
	// max is the largest zxid ever added: a zxid above it is absent
	// without a search (every new append).
	max  int64
	live int // records not released
	// empty counts the blocks left with no live record since the last
	// compact.
	empty int
}

// blockRecords bounds a block (its released bitmap is a uint64).
const blockRecords = 64

type recRun struct {
	blocks []recBlock
}

type recBlock struct {
	pos         datalog.Pos // of the first record
	end         int64       // offset just after the last record, in pos.Seg
	first, last int64       // zxids
	firstLen    int32
	lastLen     int32
	n           uint8  // records
	live        uint8  // records not released
	released    uint64 // bit i: the i-th record is released
	enc         []byte // records 1..n-1: uvarint zxid delta, varint length delta
}

// rec is one record as the index gives it.
type rec struct {
	zxid int64
	pos  datalog.Pos
	n    int
}

// add indexes a record of n payload bytes at pos for zxid. The caller
// never adds a zxid that has a record not released (find first).
func (x *recIndex) add(zxid int64, pos datalog.Pos, n int) {
	x.live++
	x.max = max(x.max, zxid)
	var r *recRun
	if k := len(x.runs); k > 0 && len(x.runs[k-1].blocks) > 0 && x.runs[k-1].blocks[len(x.runs[k-1].blocks)-1].last < zxid {
		r = &x.runs[k-1]
	} else {
		x.runs = append(x.runs, recRun{})
		r = &x.runs[len(x.runs)-1]
	}
	if k := len(r.blocks); k > 0 {
		b := &r.blocks[k-1]
		if b.n < blockRecords && b.pos.Seg == pos.Seg && b.end == pos.Off && b.live > 0 {
			b.enc = binary.AppendUvarint(b.enc, uint64(zxid-b.last))
			b.enc = binary.AppendVarint(b.enc, int64(n)-int64(b.lastLen))
			b.last, b.lastLen = zxid, int32(n)
			b.end += datalog.RecordSize(n)
			b.n++
			b.live++
			return
		}
		// The block is done: keep its encoding in an allocation of its
		// own size rather than append's spare capacity.
		b.enc = slices.Clone(b.enc)
	}
	r.blocks = append(r.blocks, recBlock{
		pos: pos, end: pos.Off + datalog.RecordSize(n),
		first: zxid, last: zxid, firstLen: int32(n), lastLen: int32(n),
		n: 1, live: 1,
	})
}

// each calls fn for the block's records in order, with their index in
// the block, until fn returns false.
func (b *recBlock) each(fn func(i int, r rec) bool) {
	r := rec{zxid: b.first, pos: b.pos, n: int(b.firstLen)}
	enc := b.enc
	for i := 0; i < int(b.n); i++ {
		if i > 0 {
			dz, k := binary.Uvarint(enc)
			dn, k2 := binary.Varint(enc[k:])
			enc = enc[k+k2:]
			r.pos.Off += datalog.RecordSize(r.n)
			r.zxid += int64(dz)
			r.n += int(dn)
		}
		if !fn(i, r) {
			return
		}
	}
}

// lookup returns the block and the index in it of zxid's record not
// released.
func (x *recIndex) lookup(zxid int64) (*recBlock, int, rec, bool) {
	if zxid > x.max {
		return nil, 0, rec{}, false
	}
	for k := len(x.runs) - 1; k >= 0; k-- {
		bs := x.runs[k].blocks
		j := sort.Search(len(bs), func(j int) bool { return bs[j].last >= zxid })
		if j == len(bs) || bs[j].first > zxid || bs[j].live == 0 {
			continue
		}
		b := &bs[j]
		var found rec
		at := -1
		b.each(func(i int, r rec) bool {
			if r.zxid < zxid {
				return true
			}
			if r.zxid == zxid && b.released&(1<<i) == 0 {
				found, at = r, i
			}
			return false
		})
		if at >= 0 {
			return b, at, found, true
		}
	}
	return nil, 0, rec{}, false
}

// find returns zxid's record, if it has one not released.
func (x *recIndex) find(zxid int64) (rec, bool) {
	_, _, r, ok := x.lookup(zxid)
	return r, ok
}

// release marks zxid's record released and returns it (for the data log's
// Release). A block left with no live record is dropped at the next
// compact.
func (x *recIndex) release(zxid int64) (rec, bool) {
	b, i, r, ok := x.lookup(zxid)
	if !ok {
		return rec{}, false
	}
	b.released |= 1 << i
	b.live--
	if b.live == 0 {
		b.enc = nil
		x.empty++
	}
	x.live--
	return r, true
}

// compact drops the blocks and runs with no live record (after a batch
// of releases: one pass, rather than a copy per release).
func (x *recIndex) compact() {
	if x.empty == 0 {
		return
	}
	x.empty = 0
	runs := x.runs[:0]
	for _, r := range x.runs {
		bs := slices.DeleteFunc(r.blocks, func(b recBlock) bool { return b.live == 0 })
		if len(bs) == 0 {
			continue
		}
		if cap(bs) > 2*len(bs)+8 {
			bs = slices.Clone(bs)
		}
		runs = append(runs, recRun{blocks: bs})
	}
	clear(x.runs[len(runs):])
	x.runs = runs
}

// all calls fn for every record not released, run by run in data-log
// order.
func (x *recIndex) all(fn func(r rec)) {
	for k := range x.runs {
		for j := range x.runs[k].blocks {
			b := &x.runs[k].blocks[j]
			if b.live == 0 {
				continue
			}
			b.each(func(i int, r rec) bool {
				if b.released&(1<<i) == 0 {
					fn(r)
				}
				return true
			})
		}
	}
}

// bytes is the memory the index holds: its slices' capacities.
func (x *recIndex) bytes() int64 {
	n := int64(unsafe.Sizeof(*x)) + int64(cap(x.runs))*int64(unsafe.Sizeof(recRun{}))
	for _, r := range x.runs {
		n += int64(cap(r.blocks)) * int64(unsafe.Sizeof(recBlock{}))
		for _, b := range r.blocks {
			n += int64(cap(b.enc))
		}
	}
	return n
}

// deadQueue holds the records of removed entries until a snapshot covers
// their removal (logData.releaseUpTo): (at, zxid) pairs, at the zxid of
// the delete or setData and zxid that of the entry's create, in the order
// the transactions applied, as varint deltas from the pair before (2 to
// 4 bytes a pair where a slice of pairs took 16: a trim deletes entries
// by the million). Not safe for concurrent use (logData.mu guards it).
type deadQueue struct {
	enc []byte
	// base is the pair before the first in enc; last is the newest.
	baseAt, baseZxid int64
	lastAt, lastZxid int64
	n                int
}

// push queues the record of the entry created at zxid, removed at at.
func (q *deadQueue) push(at, zxid int64) {
	if q.n == 0 {
		q.baseAt, q.baseZxid, q.lastAt, q.lastZxid = at, zxid, at, zxid
	}
	q.enc = binary.AppendVarint(q.enc, at-q.lastAt)
	q.enc = binary.AppendVarint(q.enc, zxid-q.lastZxid)
	q.lastAt, q.lastZxid = at, zxid
	q.n++
}

// popUpTo calls fn with the zxid of each queued record removed at or
// before upTo, from the front (transactions apply in zxid order, so these
// are a prefix), and drops them.
func (q *deadQueue) popUpTo(upTo int64, fn func(zxid int64)) {
	at, zxid := q.baseAt, q.baseZxid
	off := 0
	for q.n > 0 {
		da, k := binary.Varint(q.enc[off:])
		dz, k2 := binary.Varint(q.enc[off+k:])
		if at+da > upTo {
			break
		}
		at, zxid = at+da, zxid+dz
		off += k + k2
		q.n--
		fn(zxid)
	}
	if off == 0 {
		return
	}
	q.baseAt, q.baseZxid = at, zxid
	if q.n == 0 {
		q.enc = nil
		return
	}
	q.enc = append([]byte(nil), q.enc[off:]...)
}
