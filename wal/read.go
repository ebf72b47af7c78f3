package wal

import (
	"fmt"
	"io"
)

// ReadFrom calls fn for every record with a zxid >= zxid, in order. data is
// valid only during the call. It first flushes, so it sees every appended
// record, durable or not. fn runs without the Log's lock held, so it may
// call the Log (Append, Sync); records appended meanwhile may or may not be
// seen. A segment removed by a concurrent PurgeBefore or TruncateAfter ends
// the read with an error. An error from fn stops the read and is returned.
func (l *Log) ReadFrom(zxid int64, fn func(zxid int64, data []byte) error) error {
	l.mu.Lock()
	if err := l.usable(); err != nil {
		l.mu.Unlock()
		return err
	}
	if err := l.flushLocked(); err != nil {
		l.mu.Unlock()
		return err
	}
	segs := make([]segment, len(l.segs))
	for i, s := range l.segs {
		segs[i] = *s
	}
	l.mu.Unlock()

	start := 0
	for i, s := range segs {
		if s.base <= zxid {
			start = i
		}
	}
	var buf []byte
	for _, s := range segs[start:] {
		if s.last < zxid {
			continue
		}
		var err error
		if buf, err = l.readSegment(s, zxid, buf, fn); err != nil {
			return err
		}
	}
	return nil
}

func (l *Log) readSegment(s segment, from int64, buf []byte, fn func(int64, []byte) error) ([]byte, error) {
	name := segmentName(s.base)
	f, err := l.fs.Open(l.path(s.base))
	if err != nil {
		return buf, fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	var h [headerSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil && err != io.EOF {
		return buf, fmt.Errorf("wal: reading %s: %w", name, err)
	}
	if st, why := checkHeader(h, s.base); st != headerOK {
		return buf, fmt.Errorf("%w: segment %s: %s", ErrCorrupt, name, why)
	}
	rr := newRecordReader(f, s.end, l.opts.BufferSize)
	rr.buf = buf
	for {
		zxid, data, st, why, err := rr.next()
		switch {
		case err != nil:
			return rr.buf, fmt.Errorf("wal: reading %s: %w", name, err)
		case st == recEnd:
			return rr.buf, nil
		case st == recBad:
			return rr.buf, fmt.Errorf("%w: segment %s at offset %d: %s", ErrCorrupt, name, rr.off, why)
		case zxid < from:
			continue
		}
		if err := fn(zxid, data); err != nil {
			return rr.buf, err
		}
	}
}
