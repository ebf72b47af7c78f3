package datalog

import "errors"

// Scan calls fn with the meta, payload length and position of every
// record, segment by segment in write order (headers only: Read checks a
// payload's checksum). It is for rebuilding an index at open, before
// anything is appended.
func (l *Log) Scan(fn func(m Meta, n int, p Pos) error) error {
	for _, s := range l.Segments() {
		p := Pos{Seg: s.Seq, Off: headerSize}
		for {
			m, n, next, err := l.Next(p)
			if errors.Is(err, ErrEndOfSegment) {
				break
			}
			if err != nil {
				return err
			}
			if err := fn(m, n, p); err != nil {
				return err
			}
			p = next
		}
	}
	return nil
}
