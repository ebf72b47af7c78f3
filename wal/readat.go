package wal

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
)

// Pos is where a record lies: the base of its segment and its offset in
// the segment's file. A record's Pos does not change while the record
// exists (TruncateAfter cuts after it, PurgeBefore removes whole
// segments).
type Pos struct {
	Base int64
	Off  int64
	// Len is the record's data length: ReadAt then reads the record in
	// one call. 0 if not known.
	Len int
}

// ErrNoRecord is returned by ReadAt when no record of the zxid lies at the
// position: its segment was purged or truncated away, or the position is
// not one AppendPos returned for that zxid.
var ErrNoRecord = errors.New("wal: no such record")

// AppendPos is Append, and returns where the record lies.
func (l *Log) AppendPos(zxid int64, data []byte) (Pos, error) {
	var p Pos
	err := l.appendRec(zxid, data, &p)
	return p, err
}

// ReadAt returns a copy of the data of the record of zxid at p, checked
// against its CRC. The record must have been written (a Flush or Sync
// returned after its Append). ReadAt does not take the Log's lock, so it
// never waits for an append or a sync: it reads the segment's file
// through a handle of its own (one, cached; PurgeBefore, TruncateAfter
// and Close close it). It serves the occasional catch-up of a learner,
// not a hot path.
func (l *Log) ReadAt(p Pos, zxid int64) ([]byte, error) {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	if l.rclosed {
		return nil, ErrClosed
	}
	if p.Off < headerSize {
		return nil, fmt.Errorf("%w: %#x at %d in segment %s", ErrNoRecord, zxid, p.Off, segmentName(p.Base))
	}
	if l.rf == nil || l.rfBase != p.Base {
		if err := l.closeReaderLocked(); err != nil {
			return nil, err
		}
		rf, err := l.fs.Open(l.path(p.Base))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %#x in segment %s, which is gone", ErrNoRecord, zxid, segmentName(p.Base))
		}
		if err != nil {
			return nil, fmt.Errorf("wal: %w", err)
		}
		l.rf, l.rfBase = rf, p.Base
	}
	rec := make([]byte, recordHeaderSize+min(max(p.Len, 0), l.opts.MaxRecordSize))
	n, err := l.rf.ReadAt(rec, p.Off)
	if n < recordHeaderSize {
		return nil, fmt.Errorf("%w: %#x at %d in segment %s: %v", ErrNoRecord, zxid, p.Off, segmentName(p.Base), err)
	}
	length := le.Uint32(rec[0:])
	if int64(le.Uint64(rec[8:])) != zxid || int(length) > l.opts.MaxRecordSize {
		return nil, fmt.Errorf("%w: %#x at %d in segment %s", ErrNoRecord, zxid, p.Off, segmentName(p.Base))
	}
	if have := n - recordHeaderSize; int(length) != have || n != len(rec) {
		// The length was not known (or is not the one given): read the
		// record as its header says.
		rec = append(rec[:recordHeaderSize:recordHeaderSize], make([]byte, length)...)
		if _, err := l.rf.ReadAt(rec[recordHeaderSize:], p.Off+recordHeaderSize); err != nil {
			return nil, fmt.Errorf("%w: %#x at %d in segment %s: %v", ErrCorrupt, zxid, p.Off, segmentName(p.Base), err)
		}
	}
	return l.recordFrom(rec, p, zxid)
}

// recordFrom checks the record at the start of b and returns a copy of its
// data.
func (l *Log) recordFrom(b []byte, p Pos, zxid int64) ([]byte, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: %#x at %d in segment %s: %s", ErrCorrupt, zxid, p.Off, segmentName(p.Base), why)
	}
	if len(b) < recordHeaderSize {
		return nil, bad("short record")
	}
	length := le.Uint32(b[0:])
	if int64(le.Uint64(b[8:])) != zxid {
		return nil, fmt.Errorf("%w: %#x at %d in segment %s", ErrNoRecord, zxid, p.Off, segmentName(p.Base))
	}
	if int(length) > len(b)-recordHeaderSize {
		return nil, bad("short record")
	}
	end := recordHeaderSize + int(length)
	if crc32.Checksum(b[8:end], castagnoli) != le.Uint32(b[4:]) {
		return nil, bad("record checksum mismatch")
	}
	return append([]byte(nil), b[recordHeaderSize:end]...), nil
}

// closeReader closes ReadAt's cached handle; with final, ReadAt fails
// from then on.
func (l *Log) closeReader(final bool) error {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	l.rclosed = l.rclosed || final
	return l.closeReaderLocked()
}

func (l *Log) closeReaderLocked() error {
	if l.rf == nil {
		return nil
	}
	err := l.rf.Close()
	l.rf = nil
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	return nil
}
