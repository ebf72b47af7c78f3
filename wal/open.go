package wal

import (
	"fmt"
	"os"
	"slices"

	"github.com/corral-db/corral/vfs"
)

// Open opens the log in dir, creating the directory if needed. It
// validates every segment and repairs the tail as the package
// documentation describes; on return every record in the log is durable.
func Open(fsys vfs.FS, dir string, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	l := &Log{fs: fsys, dir: dir, opts: opts, log: opts.Logger}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	names, err := fsys.List(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	var bases []int64
	for _, name := range names {
		if base, ok := parseSegmentName(name); ok {
			bases = append(bases, base)
		}
	}
	slices.Sort(bases)

	var prev int64
	for i, base := range bases {
		if i == len(bases)-1 {
			break
		}
		res, err := l.scanFile(base, prev)
		if err != nil {
			return nil, err
		}
		if why := strictProblem(res); why != "" {
			return nil, fmt.Errorf("%w: segment %s (not the last) at offset %d: %s", ErrCorrupt, segmentName(base), res.end, why)
		}
		l.segs = append(l.segs, &segment{base: base, last: res.last, end: res.end, cap: res.size})
		prev = res.last
	}
	if err := l.openTail(bases, prev); err != nil {
		l.closeFile()
		return nil, err
	}
	// A spare left by the previous process may be half zero-filled, or
	// hold records of a segment whose rename never became durable; nothing
	// in it was acknowledged. Prepare a fresh one rather than trust it.
	if removed, err := removeSpare(fsys, dir); err != nil {
		l.closeFile()
		return nil, fmt.Errorf("wal: removing stale %s: %w", spareName, err)
	} else if removed {
		l.log.Info("wal: removed stale spare segment file", "file", spareName)
	}
	if err := fsys.SyncDir(dir); err != nil {
		l.closeFile()
		return nil, fmt.Errorf("wal: %w", err)
	}
	if n := len(l.segs); n > 0 {
		l.last = l.segs[n-1].last
	}
	if !opts.PrepareInline {
		l.prep = startPreparer(fsys, dir, opts.SegmentSize)
		l.kickLocked()
	}
	return l, nil
}

// strictProblem says what is wrong with a segment that is not the last, in
// which nothing may be torn.
func strictProblem(res scanResult) string {
	switch {
	case res.hdr != headerOK:
		return res.hdrWhy
	case res.bad != "":
		return res.bad
	case res.count == 0:
		return "no records"
	}
	return ""
}

func (l *Log) scanFile(base, prev int64) (scanResult, error) {
	f, err := l.fs.Open(l.path(base))
	if err != nil {
		return scanResult{}, fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	res, err := scanSegment(f, base, prev, l.opts.BufferSize)
	if err != nil {
		return res, fmt.Errorf("wal: reading %s: %w", segmentName(base), err)
	}
	return res, nil
}

// openTail validates the last segment, repairs it, and opens it for
// appending. If it holds no valid record it is removed (or, if its header
// is torn but records follow, set aside) and the segment before it, already
// validated, becomes the tail.
func (l *Log) openTail(bases []int64, prev int64) error {
	if len(bases) == 0 {
		return nil
	}
	base := bases[len(bases)-1]
	name := segmentName(base)
	f, err := l.fs.OpenFile(l.path(base), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	res, err := scanSegment(f, base, prev, l.opts.BufferSize)
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("wal: reading %s: %w", name, err)
	}
	if res.hdr == headerBad {
		_ = f.Close()
		return fmt.Errorf("%w: segment %s: %s", ErrCorrupt, name, res.hdrWhy)
	}
	if res.hdr == headerTorn || res.count == 0 {
		_ = f.Close()
		return l.dropTail(base, res)
	}
	seg := &segment{base: base, last: res.last, end: res.end, cap: max(res.size, l.opts.SegmentSize)}
	l.segs = append(l.segs, seg)
	l.cur, l.f = seg, f
	return l.repairTail(res.bad, res.size)
}

// dropTail removes a last segment that never had a record synced, and makes
// the previous segment the tail.
func (l *Log) dropTail(base int64, res scanResult) error {
	name := segmentName(base)
	why := res.bad
	if res.hdr == headerTorn {
		why = res.hdrWhy
	}
	if res.count > 0 {
		// A torn header in front of valid records: nothing here was acknowledged
		// (the header is synced with the first records), but keep the bytes for
		// an operator rather than delete what looks like data.
		l.log.Warn("wal: setting aside last segment with a torn header",
			"segment", name, "reason", why, "records", res.count, "to", name+corruptSuffix)
		if err := l.fs.Rename(l.path(base), l.path(base)+corruptSuffix); err != nil {
			return fmt.Errorf("wal: %w", err)
		}
	} else {
		l.log.Warn("wal: removing last segment that holds no valid record",
			"segment", name, "reason", why)
		if err := l.fs.Remove(l.path(base)); err != nil {
			return fmt.Errorf("wal: %w", err)
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	if len(l.segs) == 0 {
		return nil
	}
	seg := l.segs[len(l.segs)-1]
	f, err := l.fs.OpenFile(l.path(seg.base), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	size := seg.cap
	seg.cap = max(seg.cap, l.opts.SegmentSize)
	l.cur, l.f = seg, f
	return l.repairTail("", size)
}

// repairTail makes sure nothing but zeros follows the tail's last valid
// record, that the tail is as long as its capacity, and that all of it is
// durable (a previous process may have written records it did not sync).
func (l *Log) repairTail(bad string, size int64) error {
	seg, f := l.cur, l.f
	name := segmentName(seg.base)
	dirty, err := vfs.DirtyEnd(f, seg.end, size)
	if err != nil {
		return fmt.Errorf("wal: reading %s: %w", name, err)
	}
	if bad == "" && dirty > seg.end {
		bad = "non-zero bytes after the last record"
	}
	if bad != "" || size < seg.cap {
		if err := resetTail(f, seg, dirty); err != nil {
			return fmt.Errorf("wal: repairing %s: %w", name, err)
		}
	} else if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: syncing %s: %w", name, err)
	}
	if bad != "" {
		l.log.Warn("wal: truncated torn log tail",
			"segment", name, "offset", seg.end, "reason", bad,
			"last_zxid", fmt.Sprintf("%#x", seg.last))
	}
	return nil
}
