package datalog

import (
	"fmt"
	"io"
)

// Cut removes every record at or after p, a record's position or the end
// of one (a TRUNC of the replication log cuts the data log with it):
// later segments are removed, the rest of p's segment is zeroed, and all
// of it is made durable before Cut returns. The live bytes of the records
// cut are discounted here; the caller must not Release them.
func (l *Log) Cut(p Pos) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	if err := l.usableLocked(); err != nil {
		l.mu.Unlock()
		return err
	}
	var later []*segment
	var keep *segment
	for _, s := range l.segs {
		if s.seq > p.Seg || (s.seq == p.Seg && p.Off <= headerSize) {
			later = append(later, s)
		} else {
			keep = s
		}
	}
	// The current segment changes before any is removed, so that the
	// flusher never syncs a closed file; nothing is in flight past here.
	l.cur = keep
	l.written = Pos{}
	if keep != nil {
		l.written = Pos{keep.seq, keep.end}
	}
	l.synced, l.reported = l.written, l.written
	l.sTotal = l.wTotal
	l.mu.Unlock()
	for i := len(later) - 1; i >= 0; i-- {
		if err := l.drop(later[i], true); err != nil {
			return l.fail(err)
		}
	}
	if keep != nil && keep.seq == p.Seg && p.Off < keep.end {
		cut, err := recordBytes(keep.f, p.Off, keep.end)
		if err != nil {
			return l.fail(fmt.Errorf("cutting %s at offset %d: %w", segmentName(keep.seq), p.Off, err))
		}
		if err := zeroAndSync(keep, p.Off); err != nil {
			return l.fail(fmt.Errorf("cutting %s at offset %d: %w", segmentName(keep.seq), p.Off, err))
		}
		l.mu.Lock()
		keep.end = p.Off
		keep.live -= cut
		l.mu.Unlock()
	}
	l.mu.Lock()
	l.written = Pos{}
	if keep != nil {
		l.written = Pos{keep.seq, keep.end}
	}
	l.synced, l.reported = l.written, l.written
	l.sTotal = l.wTotal
	l.notifyLocked()
	l.mu.Unlock()
	return nil
}

func zeroAndSync(s *segment, from int64) error {
	var zeros [64 << 10]byte
	for off := from; off < s.end; {
		n := min(int64(len(zeros)), s.end-off)
		if _, err := s.f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	return s.f.Sync()
}

// recordBytes sums the sizes of the records in [from, to) of f.
func recordBytes(f io.ReaderAt, from, to int64) (int64, error) {
	var sum int64
	var h [recordHeaderSize]byte
	for off := from; off+recordHeaderSize <= to; {
		if _, err := f.ReadAt(h[:], off); err != nil {
			return 0, err
		}
		ph, st, why := parseRecordHeader(h[:], to-off-recordHeaderSize)
		if st != recOK {
			return 0, fmt.Errorf("%w: at offset %d: %s", ErrCorrupt, off, why)
		}
		size := RecordSize(int(ph.length))
		sum += size
		off += size
	}
	return sum, nil
}
