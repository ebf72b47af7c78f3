package datalog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/corral-db/corral/vfs"
)

// Open opens the data log in dir, creating the directory if needed. It
// validates every segment, calling Options.OnRecover for each record, and
// repairs the tail as the package documentation describes.
func Open(fsys vfs.FS, dir string, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	l := &Log{
		fs: fsys, dir: dir, opts: opts, log: opts.Logger,
		changed: make(chan struct{}),
		kick:    make(chan struct{}, 1),
		wrote:   make(chan struct{}, 1),
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("datalog: %w", err)
	}
	names, err := fsys.List(dir)
	if err != nil {
		return nil, fmt.Errorf("datalog: %w", err)
	}
	var seqs []uint64
	for _, name := range names {
		if seq, ok := parseSegmentName(name); ok {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	closeAll := func() {
		for _, s := range l.segs {
			s.f.Close()
		}
	}
	for i, seq := range seqs {
		last := i == len(seqs)-1
		seg, err := l.openSegment(seq, last)
		if err != nil {
			closeAll()
			return nil, err
		}
		if seg != nil {
			l.segs = append(l.segs, seg)
		}
	}
	// A spare left by a crash may be half filled; prepare a fresh one.
	if err := fsys.Remove(filepath.Join(dir, spareName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		closeAll()
		return nil, fmt.Errorf("datalog: removing stale %s: %w", spareName, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		closeAll()
		return nil, fmt.Errorf("datalog: %w", err)
	}
	if n := len(l.segs); n > 0 {
		l.cur = l.segs[n-1]
		l.written = Pos{l.cur.seq, l.cur.end}
		l.synced, l.reported = l.written, l.written
	}
	if !opts.PrepareInline {
		l.prep = startPreparer(fsys, dir, opts.SegmentSize)
		l.kickPreparer()
	}
	if !opts.NoFlusher {
		l.stop = make(chan struct{})
		l.done = make(chan struct{})
		go l.flush()
	}
	return l, nil
}

// openSegment validates one segment. The last one's torn tail is repaired
// (nil is returned when the whole segment goes); damage in any other is
// ErrCorrupt naming the file and offset.
func (l *Log) openSegment(seq uint64, last bool) (*segment, error) {
	name := segmentName(seq)
	f, err := l.fs.OpenFile(l.path(seq), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("datalog: %w", err)
	}
	seg, bad, badOff, err := l.scan(f, seq)
	if err == nil && !last && bad != "" {
		err = fmt.Errorf("%w: %s (not the last segment) at offset %d: %s", ErrCorrupt, name, badOff, bad)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if !last {
		return seg, nil
	}
	if seg == nil {
		// A torn header: the crash came before the segment's first sync,
		// so nothing in it was ever reported synced.
		f.Close()
		if err := l.fs.Remove(l.path(seq)); err != nil {
			return nil, fmt.Errorf("datalog: removing %s: %w", name, err)
		}
		l.log.Warn("datalog: removed last segment with a torn header", "segment", name, "reason", bad)
		return nil, nil
	}
	size, err := f.Size()
	if err == nil {
		err = l.repairTail(seg, size, bad)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return seg, nil
}

// repairTail leaves only zeros after the last segment's last valid record
// and syncs it.
func (l *Log) repairTail(seg *segment, size int64, bad string) error {
	name := segmentName(seg.seq)
	dirty, err := vfs.DirtyEnd(seg.f, seg.end, size)
	if err != nil {
		return fmt.Errorf("datalog: reading %s: %w", name, err)
	}
	if bad == "" && dirty > seg.end {
		bad = "non-zero bytes after the last record"
	}
	if bad != "" {
		if err := vfs.WriteZeros(seg.f, seg.end, dirty, nil); err != nil {
			return fmt.Errorf("datalog: repairing %s: %w", name, err)
		}
		l.log.Warn("datalog: cut torn tail", "segment", name, "offset", seg.end, "reason", bad)
	}
	if err := seg.f.Sync(); err != nil {
		return fmt.Errorf("datalog: syncing %s: %w", name, err)
	}
	return nil
}

// scan reads a segment's records in order until a clean end or the first
// invalid one. A torn header returns a nil segment and the reason; a bad
// header or record returns the reason and its offset.
func (l *Log) scan(f vfs.File, seq uint64) (seg *segment, bad string, badOff int64, err error) {
	name := segmentName(seq)
	size, err := f.Size()
	if err != nil {
		return nil, "", 0, fmt.Errorf("datalog: %s: %w", name, err)
	}
	var h [headerSize]byte
	if _, err := f.ReadAt(h[:min(size, headerSize)], 0); err != nil && err != io.EOF {
		return nil, "", 0, fmt.Errorf("datalog: reading %s: %w", name, err)
	}
	st, why := checkHeader(h, seq)
	switch {
	case st == headerTorn || size < headerSize:
		return nil, "header incomplete", 0, nil
	case st == headerBad:
		return nil, "", 0, fmt.Errorf("%w: %s at offset 0: %s", ErrCorrupt, name, why)
	}
	seg = &segment{seq: seq, end: headerSize, cap: size, f: f}
	br := bufio.NewReaderSize(io.NewSectionReader(f, headerSize, size-headerSize), 1<<20)
	var rh [recordHeaderSize]byte
	var buf []byte
	for {
		room := size - seg.end
		if room < recordHeaderSize {
			return seg, "", 0, nil
		}
		if _, err := io.ReadFull(br, rh[:]); err != nil {
			return nil, "", 0, fmt.Errorf("datalog: reading %s: %w", name, err)
		}
		ph, rst, why := parseRecordHeader(rh[:], room-recordHeaderSize)
		if rst == recEnd {
			return seg, "", 0, nil
		}
		if rst == recBad {
			return seg, why, seg.end, nil
		}
		if cap(buf) < int(ph.length) {
			buf = make([]byte, ph.length)
		}
		payload := buf[:ph.length]
		if _, err := io.ReadFull(br, payload); err != nil {
			return nil, "", 0, fmt.Errorf("datalog: reading %s: %w", name, err)
		}
		if !checkPayload(rh[:], ph, payload) {
			return seg, "record checksum mismatch", seg.end, nil
		}
		if l.opts.OnRecover != nil {
			l.opts.OnRecover(Pos{seq, seg.end}, ph.meta, len(payload))
		}
		size := RecordSize(len(payload))
		seg.end += size
		seg.live += size
	}
}
