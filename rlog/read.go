package rlog

import (
	"context"
	"errors"
	"fmt"

	"github.com/corral-db/corral/rlog/datalog"
)

// ReadResult is what a read returns: the bytes from the requested offset,
// the offset after them, and the log's positions (the committed end is
// what a tailing reader waits past).
type ReadResult struct {
	Data []byte
	Next int64
	Stat Stat
}

// Read returns up to max committed bytes of the named log from off. At the
// committed end, with wait, it waits until more commits, the log is sealed
// or deleted, or ctx ends (then it returns no bytes and no error). A read
// below the start is CodeTruncated, past the end CodeOutOfRange.
func (s *State) Read(ctx context.Context, name string, off, max int64, wait bool) (ReadResult, error) {
	if max <= 0 {
		max = s.opts.MaxAppend
	}
	for {
		ch := s.changed()
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ReadResult{}, errClosed
		}
		s.advanceLocked()
		l := s.logs[name]
		if l == nil {
			s.mu.Unlock()
			return ReadResult{}, &Error{Code: CodeNotFound, Log: name, Offset: off}
		}
		st := statOf(l)
		switch {
		case off < l.start:
			err := s.errLocked(CodeTruncated, l, off)
			s.mu.Unlock()
			return ReadResult{}, err
		case off > l.end:
			err := s.errLocked(CodeOutOfRange, l, off)
			s.mu.Unlock()
			return ReadResult{}, err
		}
		if off < l.committed {
			limit := min(l.committed, off+max)
			i := l.x.find(off)
			pts := l.x.points[i:]
			dead := append([]deadRecord(nil), l.x.dead...)
			id := l.id
			s.mu.Unlock()
			data, err := s.walk(pts, id, dead, off, limit)
			if err != nil {
				if errors.Is(err, datalog.ErrNotFound) {
					// A trim dropped the segment under the read.
					if st2, serr := s.Stat(name); serr == nil && off < st2.Start {
						return ReadResult{}, &Error{Code: CodeTruncated, Log: name, Start: st2.Start,
							End: st2.End, Committed: st2.Committed, Sealed: st2.Sealed, Offset: off}
					}
				}
				return ReadResult{}, err
			}
			return ReadResult{Data: data, Next: off + int64(len(data)), Stat: st}, nil
		}
		s.mu.Unlock()
		if !wait || (st.Sealed && off >= st.End) {
			return ReadResult{Next: off, Stat: st}, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ReadResult{Next: off, Stat: st}, nil
		}
	}
}

// walk reads the log's bytes [off, limit) from the data log, starting at
// the index point pts[0] and walking record headers, skipping other logs'
// records and dead ones.
func (s *State) walk(pts []point, id uint64, dead []deadRecord, off, limit int64) ([]byte, error) {
	if len(pts) == 0 {
		return nil, fmt.Errorf("rlog: log %d has committed bytes but no index", id)
	}
	isDead := func(z int64) bool {
		for _, d := range dead {
			if d.zxid == z {
				return true
			}
		}
		return false
	}
	out := make([]byte, 0, limit-off)
	want := off
	pi := 0
	p := pts[0].pos
	for want < limit {
		m, n, next, err := s.dl.Next(p)
		if errors.Is(err, datalog.ErrEndOfSegment) {
			for pi < len(pts) && pts[pi].pos.Seg <= p.Seg {
				pi++
			}
			if pi == len(pts) {
				return nil, fmt.Errorf("rlog: log %d: offset %d not found in the data log", id, want)
			}
			p = pts[pi].pos
			continue
		}
		if err != nil {
			return nil, err
		}
		if m.Log == id && m.Offset <= want && want < m.Offset+int64(n) && !isDead(m.Zxid) {
			_, payload, err := s.dl.Read(p)
			if err != nil {
				return nil, err
			}
			take := payload[want-m.Offset : min(int64(n), limit-m.Offset)]
			out = append(out, take...)
			want += int64(len(take))
		}
		p = next
	}
	return out, nil
}
