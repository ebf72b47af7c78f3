package wal

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/corral-db/corral/vfs"
)

// segment is what the Log knows about one segment file.
type segment struct {
	base int64 // zxid of its first record, and its name
	last int64 // zxid of its last record
	end  int64 // offset just after its last record written to the file
	cap  int64 // its preallocated size
}

func (l *Log) path(base int64) string { return filepath.Join(l.dir, segmentName(base)) }

// scanResult is what scanSegment found in a segment file.
type scanResult struct {
	hdr    headerState
	hdrWhy string
	count  int    // valid records
	last   int64  // zxid of the last valid record
	end    int64  // offset after the last valid record
	size   int64  // file size
	bad    string // why the scan stopped before a clean end; "" if it did not
}

// scanSegment validates a segment: its header, then its records in order
// until a clean end or the first invalid one. prev is the zxid of the last
// record before this segment.
func scanSegment(f vfs.File, base, prev int64, bufSize int) (scanResult, error) {
	size, err := f.Size()
	if err != nil {
		return scanResult{}, err
	}
	res := scanResult{size: size, end: headerSize}
	var h [headerSize]byte
	if _, err := f.ReadAt(h[:min(size, headerSize)], 0); err != nil && err != io.EOF {
		return res, err
	}
	res.hdr, res.hdrWhy = checkHeader(h, base)
	if res.hdr == headerBad || size <= headerSize {
		res.end = min(size, headerSize)
		return res, nil
	}
	rr := newRecordReader(f, size, bufSize)
	for {
		zxid, _, st, why, err := rr.next()
		if err != nil {
			return res, err
		}
		if st == recOK {
			switch {
			case res.count == 0 && zxid != base:
				st, why = recBad, fmt.Sprintf("first record zxid %#x does not match the segment name", zxid)
			case zxid <= prev:
				st, why = recBad, fmt.Sprintf("record zxid %#x not after %#x", zxid, prev)
			}
		}
		if st == recBad {
			res.bad = why
			break
		}
		if st == recEnd {
			break
		}
		res.count++
		res.last, prev = zxid, zxid
		res.end = rr.off
	}
	return res, nil
}

// createSegmentLocked starts a segment whose first record, n bytes long
// encoded, has the given zxid. The header goes into the write buffer so
// that it reaches the file with the first records, in one write.
func (l *Log) createSegmentLocked(base int64, n int64) error {
	f, err := l.fs.OpenFile(l.path(base), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return l.fail(fmt.Errorf("creating segment %s: %w", segmentName(base), err))
	}
	capacity := max(l.opts.SegmentSize, headerSize+n)
	if err := f.Preallocate(capacity); err != nil {
		_ = f.Close()
		return l.fail(fmt.Errorf("preallocating segment %s: %w", segmentName(base), err))
	}
	seg := &segment{base: base, cap: capacity}
	l.segs = append(l.segs, seg)
	l.cur, l.f = seg, f
	l.dirDirty = true
	h := encodeHeader(base)
	l.buf = append(l.buf, h[:]...)
	return nil
}

// sealLocked makes the current segment durable and closes it: a segment
// other than the last never holds unsynced bytes, which is what lets Open
// treat damage anywhere but the tail as corruption.
func (l *Log) sealLocked() error {
	if err := l.flushLocked(); err != nil {
		return err
	}
	if l.f == nil {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return l.fail(fmt.Errorf("syncing segment %s: %w", segmentName(l.cur.base), err))
	}
	err := l.f.Close()
	l.cur, l.f = nil, nil
	if err != nil {
		return l.fail(fmt.Errorf("closing segment: %w", err))
	}
	return nil
}

// zeroTail makes [seg.end, seg.cap) of f read as zeros and durable, by
// truncating and preallocating again, which costs no data writes where
// fallocate is supported.
func zeroTail(f vfs.File, seg *segment) error {
	if err := f.Truncate(seg.end); err != nil {
		return err
	}
	if err := f.Preallocate(seg.cap); err != nil {
		return err
	}
	return f.Sync()
}

// hasNonZero reports whether any byte of f in [from, to) is not zero.
func hasNonZero(f vfs.File, from, to int64) (bool, error) {
	buf := make([]byte, min(to-from, 1<<20))
	for off := from; off < to; {
		n := min(int64(len(buf)), to-off)
		if _, err := f.ReadAt(buf[:n], off); err != nil && err != io.EOF {
			return false, err
		}
		for _, b := range buf[:n] {
			if b != 0 {
				return true, nil
			}
		}
		off += n
	}
	return false, nil
}
