package wal

import (
	"fmt"
	"os"
)

// PurgeBefore removes the oldest segments whose records all have zxids
// below zxid. The segment holding zxid, and the last segment, are always
// kept. Segments go oldest first, so a crash midway leaves a log that is
// still contiguous.
func (l *Log) PurgeBefore(zxid int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	if err := l.closeReader(false); err != nil {
		return err
	}
	removed := 0
	var err error
	for len(l.segs) > 1 && l.segs[0].last < zxid {
		if err = l.fs.Remove(l.path(l.segs[0].base)); err != nil {
			err = fmt.Errorf("wal: purging: %w", err)
			break
		}
		l.segs = l.segs[1:]
		removed++
	}
	if removed > 0 {
		if serr := l.fs.SyncDir(l.dir); serr != nil && err == nil {
			err = fmt.Errorf("wal: purging: %w", serr)
		}
	}
	return err
}

// TruncateAfter removes every record with a zxid greater than zxid (a
// Zab TRUNC). Later segments are removed newest first and the directory is
// synced before the segment holding zxid is cut, so a crash midway leaves
// a prefix of the old log; calling TruncateAfter again after Open finishes
// the job. The cut segment becomes the one appended to, and the bytes after
// the cut are zeroed.
func (l *Log) TruncateAfter(zxid int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	if zxid >= l.last {
		return nil
	}
	if err := l.flushLocked(); err != nil {
		return err
	}
	if err := l.closeFile(); err != nil {
		return l.fail(err)
	}
	if err := l.closeReader(false); err != nil {
		return l.fail(err)
	}
	removed := false
	for n := len(l.segs); n > 0 && l.segs[n-1].base > zxid; n = len(l.segs) {
		if err := l.fs.Remove(l.path(l.segs[n-1].base)); err != nil {
			return l.fail(fmt.Errorf("truncating: %w", err))
		}
		l.segs = l.segs[:n-1]
		removed = true
	}
	if removed {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return l.fail(fmt.Errorf("truncating: %w", err))
		}
		l.dirDirty = false
	}
	if len(l.segs) == 0 {
		l.last = 0
		return nil
	}
	seg := l.segs[len(l.segs)-1]
	f, err := l.fs.OpenFile(l.path(seg.base), os.O_RDWR, 0)
	if err != nil {
		return l.fail(fmt.Errorf("truncating: %w", err))
	}
	l.cur, l.f = seg, f
	cut, last, err := l.findCut(seg, zxid)
	if err != nil {
		return l.fail(err)
	}
	dirty := seg.end
	seg.end, seg.last = cut, last
	if err := resetTail(f, seg, dirty); err != nil {
		return l.fail(fmt.Errorf("truncating %s: %w", segmentName(seg.base), err))
	}
	l.last = last
	return nil
}

// findCut returns the offset just after the last record of seg with a zxid
// <= zxid, and that record's zxid.
func (l *Log) findCut(seg *segment, zxid int64) (int64, int64, error) {
	name := segmentName(seg.base)
	rr := newRecordReader(l.f, seg.end, l.opts.BufferSize)
	cut, last := int64(headerSize), int64(0)
	for {
		z, _, st, why, err := rr.next()
		switch {
		case err != nil:
			return 0, 0, fmt.Errorf("reading %s: %w", name, err)
		case st == recBad:
			return 0, 0, fmt.Errorf("%w: segment %s at offset %d: %s", ErrCorrupt, name, rr.off, why)
		case st == recEnd || z > zxid:
			return cut, last, nil
		}
		cut, last = rr.off, z
	}
}
