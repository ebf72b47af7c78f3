package rlog

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Control is the control record of a log kept in a ZooKeeper tree: the
// data of the log's znode under rlog.root, "zkrl1 start=S end=E
// sealed=B" (docs/design/rlog.md, "The API on the tree's logs"). The
// server checks every change of one (CheckControl), and rlog/zklogs runs
// the API on them.
type Control struct {
	Start, End int64
	Sealed     bool
}

// ControlMagic starts every control record.
const ControlMagic = "zkrl1"

// Encode returns the record's bytes.
func (c Control) Encode() []byte {
	return fmt.Appendf(nil, "%s start=%d end=%d sealed=%t", ControlMagic, c.Start, c.End, c.Sealed)
}

// IsControl says whether b claims to be a control record (it may still
// not parse).
func IsControl(b []byte) bool {
	return bytes.HasPrefix(b, []byte(ControlMagic))
}

// ParseControl reads a control record; empty data is a new log's (all
// zero).
func ParseControl(b []byte) (Control, error) {
	var c Control
	if len(b) == 0 {
		return c, nil
	}
	f := strings.Fields(string(b))
	if len(f) != 4 || f[0] != ControlMagic {
		return c, fmt.Errorf("not a log's control record: %q", clip(b))
	}
	var seen int
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return c, fmt.Errorf("control record field %q: want key=value", kv)
		}
		var err error
		switch k {
		case "start":
			c.Start, err = strconv.ParseInt(v, 10, 64)
			seen |= 1
		case "end":
			c.End, err = strconv.ParseInt(v, 10, 64)
			seen |= 2
		case "sealed":
			c.Sealed, err = strconv.ParseBool(v)
			seen |= 4
		default:
			return c, fmt.Errorf("control record: unknown field %q", k)
		}
		if err != nil {
			return c, fmt.Errorf("control record field %q: %w", kv, err)
		}
	}
	if seen != 7 || c.Start < 0 || c.End < c.Start {
		return c, fmt.Errorf("control record %q: want start, end and sealed with 0 <= start <= end", clip(b))
	}
	return c, nil
}

// CheckControl says whether a log's control record may change from old
// to next: the start and the end never move down, the start never passes
// the end, and a sealed log stays sealed at its end.
func CheckControl(old, next Control) error {
	switch {
	case next.Start < old.Start:
		return fmt.Errorf("the start moves down from %d to %d", old.Start, next.Start)
	case next.End < old.End:
		return fmt.Errorf("the end moves down from %d to %d", old.End, next.End)
	case old.Sealed && (!next.Sealed || next.End != old.End):
		return fmt.Errorf("the log is sealed at %d", old.End)
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// EntryName is the name of the entry at offset off in a log kept in a
// tree: 20 decimal digits, so names sort as offsets do.
func EntryName(off int64) string { return fmt.Sprintf("%020d", off) }

// ParseEntryName returns the offset an entry's name gives, false for a
// name that is not an entry's.
func ParseEntryName(s string) (int64, bool) {
	if len(s) != 20 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
