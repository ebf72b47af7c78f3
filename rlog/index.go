package rlog

import (
	"unsafe"

	"github.com/corral-db/corral/rlog/datalog"
)

// The index of one log maps logical offsets to data-log records without an
// entry per append. Records of many logs interleave in the data log, so a
// read finds the nearest point at or below its offset and walks the record
// headers from there, skipping other logs' records. A point is added at a
// log's first record in each segment and then every indexEvery bytes of
// the log, so a walk crosses at most indexEvery bytes of the log (plus
// what other logs interleaved) and the index costs one point per
// indexEvery bytes: 24 B per MiB, 24 MiB per TiB. segUse counts, per
// segment, the log's record bytes there and where its data in the segment
// ends, so that trim and delete release whole segments.

// point: the append at logical offset off has its record at pos.
type point struct {
	off int64
	pos datalog.Pos
}

// segUse is one segment's share of a log.
type segUse struct {
	seg   uint64
	bytes int64 // record bytes (datalog.RecordSize) of the log's records there
	end   int64 // logical end of the log's last record there
}

// deadRecord is a record of an append that failed at apply (its offset
// was taken meanwhile): a walk must skip it. Rare: the leader's Prepare
// assigns offsets, so only an append prepared under a leader that lost
// office fails so.
type deadRecord struct {
	zxid int64
	seg  uint64
}

type index struct {
	points []point
	segs   []segUse
	dead   []deadRecord
	since  int64 // log bytes since the last point
}

const defaultIndexEvery = 1 << 20

// add records an append of n bytes at offset off stored at pos.
func (x *index) add(off, n int64, pos datalog.Pos, every int64) {
	lastSeg := len(x.segs) == 0 || x.segs[len(x.segs)-1].seg != pos.Seg
	if lastSeg || x.since >= every || len(x.points) == 0 {
		x.points = append(x.points, point{off: off, pos: pos})
		x.since = 0
	}
	x.since += n
	if lastSeg {
		x.segs = append(x.segs, segUse{seg: pos.Seg})
	}
	u := &x.segs[len(x.segs)-1]
	u.bytes += datalog.RecordSize(int(n))
	u.end = off + n
}

// find returns the index of the last point at or below off (0 if none).
func (x *index) find(off int64) int {
	lo, hi := 0, len(x.points)
	for lo < hi {
		m := (lo + hi) / 2
		if x.points[m].off <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return max(lo-1, 0)
}

// trim drops what lies wholly below start and returns the segments'
// shares to release.
func (x *index) trim(start int64) []segUse {
	i := 0
	for i < len(x.segs) && x.segs[i].end <= start {
		i++
	}
	released := append([]segUse(nil), x.segs[:i]...)
	x.segs = append(x.segs[:0:0], x.segs[i:]...)
	if j := x.find(start); j > 0 {
		x.points = append(x.points[:0:0], x.points[j:]...)
	}
	if len(x.segs) == 0 {
		x.points = nil
	}
	if len(released) > 0 {
		first := uint64(0)
		if len(x.segs) > 0 {
			first = x.segs[0].seg
		}
		keep := x.dead[:0]
		for _, d := range x.dead {
			if first != 0 && d.seg >= first {
				keep = append(keep, d)
			}
		}
		x.dead = keep
	}
	return released
}

func (x *index) isDead(zxid int64) bool {
	for _, d := range x.dead {
		if d.zxid == zxid {
			return true
		}
	}
	return false
}

// bytes is the memory the index holds (its slices' capacity).
func (x *index) bytes() int64 {
	return int64(cap(x.points))*int64(unsafe.Sizeof(point{})) +
		int64(cap(x.segs))*int64(unsafe.Sizeof(segUse{})) +
		int64(cap(x.dead))*int64(unsafe.Sizeof(deadRecord{})) +
		int64(unsafe.Sizeof(*x))
}
