package wal

import (
	"fmt"
	"io"
	"io/fs"
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
// encoded, has the given zxid. The segment is the spare, renamed: every
// block of it is already written (with zeros) and durable, so writing the
// header and records into it never changes the file's metadata, and Sync
// is an fdatasync of data alone (plus, the first time, a SyncDir for the
// rename). The header goes into the write buffer so that it reaches the
// file with the first records, in one write.
func (l *Log) createSegmentLocked(base int64, n int64) error {
	name := segmentName(base)
	waited, err := l.takeSpareLocked()
	if err != nil {
		return l.fail(fmt.Errorf("creating segment %s: %w", name, err))
	}
	capacity := max(l.opts.SegmentSize, headerSize+n)
	if capacity > l.opts.SegmentSize {
		waited = true
		if err := l.growSpare(capacity); err != nil {
			return l.fail(fmt.Errorf("creating segment %s: growing %s: %w", name, spareName, err))
		}
	}
	if waited {
		l.stats.SpareMisses++
	}
	// Rename replaces; a segment of that name would be lost. None can
	// exist (segments are named by increasing zxids, and Open and
	// TruncateAfter remove the ones past the last record), but check.
	if ok, err := vfs.Exists(l.fs, l.path(base)); err != nil || ok {
		if err == nil {
			err = fs.ErrExist
		}
		return l.fail(fmt.Errorf("creating segment %s: %w", name, err))
	}
	if err := l.fs.Rename(filepath.Join(l.dir, spareName), l.path(base)); err != nil {
		return l.fail(fmt.Errorf("creating segment %s: %w", name, err))
	}
	l.spare = spareNone
	l.dirDirty = true
	f, err := l.fs.OpenFile(l.path(base), os.O_RDWR, 0)
	if err != nil {
		return l.fail(fmt.Errorf("opening segment %s: %w", name, err))
	}
	seg := &segment{base: base, cap: capacity}
	l.segs = append(l.segs, seg)
	l.cur, l.f = seg, f
	l.stats.Segments++
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

// resetTail makes every byte of seg's file f in [seg.end, seg.cap) read
// as zero, durably: it writes zeros over [seg.end, dirty), where bytes
// after the last record may not be zero, and over whatever part of the
// segment the file is too short to hold, then syncs. Zeros are written,
// not truncated away and fallocated again, so that the blocks later
// records go to stay written ones (see prepareSpare).
func resetTail(f vfs.File, seg *segment, dirty int64) error {
	size, err := f.Size()
	if err != nil {
		return err
	}
	if err := vfs.WriteZeros(f, seg.end, min(dirty, size), nil); err != nil {
		return err
	}
	if err := vfs.WriteZeros(f, max(size, seg.end), seg.cap, nil); err != nil {
		return err
	}
	return f.Sync()
}
