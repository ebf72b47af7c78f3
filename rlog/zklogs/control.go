package zklogs

import (
	"fmt"
	"strconv"
	"strings"
)

// control is a log's control record, the data of its znode.
type control struct {
	start, end int64
	sealed     bool
}

const controlMagic = "zkrl1"

func (c control) encode() []byte {
	return fmt.Appendf(nil, "%s start=%d end=%d sealed=%t", controlMagic, c.start, c.end, c.sealed)
}

// parseControl reads a control record; empty data is a new log.
func parseControl(b []byte) (control, error) {
	var c control
	if len(b) == 0 {
		return c, nil
	}
	f := strings.Fields(string(b))
	if len(f) != 4 || f[0] != controlMagic {
		return c, fmt.Errorf("not a log's control record: %q", truncate(b))
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
			c.start, err = strconv.ParseInt(v, 10, 64)
			seen |= 1
		case "end":
			c.end, err = strconv.ParseInt(v, 10, 64)
			seen |= 2
		case "sealed":
			c.sealed, err = strconv.ParseBool(v)
			seen |= 4
		default:
			return c, fmt.Errorf("control record: unknown field %q", k)
		}
		if err != nil {
			return c, fmt.Errorf("control record field %q: %w", kv, err)
		}
	}
	if seen != 7 || c.start < 0 || c.end < c.start {
		return c, fmt.Errorf("control record %q: want start, end and sealed with 0 <= start <= end", truncate(b))
	}
	return c, nil
}

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// entryName is the name of the entry at offset off: 20 decimal digits, so
// names sort as offsets do.
func entryName(off int64) string { return fmt.Sprintf("%020d", off) }

// parseEntryName returns the offset an entry's name gives, false for a
// name that is not an entry's (a child some client put there).
func parseEntryName(s string) (int64, bool) {
	if len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}
