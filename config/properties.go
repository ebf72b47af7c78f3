package config

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxFileSize bounds what we read from a zoo.cfg (or dynamic config file).
// Real files are a few kilobytes; the bound only stops a mistaken path such
// as /dev/zero from eating memory.
const maxFileSize = 4 << 20

// property is one key/value pair as java.util.Properties.load produces it,
// before QuorumPeerConfig trims either side. Line is the 1-based number of
// the natural line the logical line starts on, for messages.
type property struct {
	Key, Value string
	Line       int
}

// readProperties reads r with the syntax of java.util.Properties.load
// (Java 9+ LineReader and loadConvert), returning the pairs in file order,
// duplicates included:
//
//   - natural lines end at \n, \r or \r\n; leading ' ', '\t', '\f' are
//     skipped; blank lines are ignored;
//   - a line whose first non-blank character is '#' or '!' is a comment
//     (a trailing backslash does not continue a comment);
//   - an odd number of backslashes at the end of a line joins the next
//     line, whose leading white space is dropped;
//   - the key ends at the first unescaped '=', ':' or white space; white
//     space around the separator, and a single '=' or ':' after white
//     space, are skipped; the rest of the line is the value, trailing white
//     space included;
//   - \t \n \r \f and \uXXXX are escapes; any other escaped character
//     stands for itself; a malformed \uXXXX is an error.
//
// One deliberate divergence: Properties.load(InputStream) decodes bytes as
// ISO-8859-1, so a raw UTF-8 byte sequence in zoo.cfg becomes mojibake in
// ZooKeeper. We keep bytes as they are (UTF-8). Files written by
// WriteZooCfg escape non-ASCII as \uXXXX, which both read identically.
func readProperties(r io.Reader) ([]property, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("file larger than %d bytes: %w", maxFileSize, ErrInvalid)
	}
	lr := lineReader{data: data, line: 1}
	var props []property
	for {
		raw, line, ok := lr.next()
		if !ok {
			return props, nil
		}
		p, err := splitProperty(raw)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		p.Line = line
		props = append(props, p)
	}
}

// lineReader yields logical lines exactly as java.util.Properties'
// LineReader does: comments and blank lines dropped, continuations joined,
// the continuation backslash removed, escapes left for splitProperty.
type lineReader struct {
	data []byte
	off  int
	line int // natural line number of data[off]
}

func isPropSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// eol consumes the line terminator at lr.off (\n, \r or \r\n).
func (lr *lineReader) eol() {
	if lr.data[lr.off] == '\r' && lr.off+1 < len(lr.data) && lr.data[lr.off+1] == '\n' {
		lr.off++
	}
	lr.off++
	lr.line++
}

func (lr *lineReader) next() (logical []byte, startLine int, ok bool) {
	var buf []byte
	skipWhite := true
	appendedLineBegin := false
	precedingBackslash := false
	for {
		if lr.off >= len(lr.data) {
			if len(buf) == 0 {
				return nil, 0, false
			}
			if precedingBackslash {
				buf = buf[:len(buf)-1]
			}
			return buf, startLine, true
		}
		c := lr.data[lr.off]
		if skipWhite {
			if isPropSpace(c) {
				lr.off++
				continue
			}
			if !appendedLineBegin && (c == '\r' || c == '\n') {
				lr.eol()
				continue
			}
			skipWhite = false
			appendedLineBegin = false
		}
		if len(buf) == 0 && (c == '#' || c == '!') {
			for lr.off < len(lr.data) && lr.data[lr.off] != '\n' && lr.data[lr.off] != '\r' {
				lr.off++
			}
			skipWhite = true
			continue
		}
		if c != '\n' && c != '\r' {
			if len(buf) == 0 && startLine == 0 {
				startLine = lr.line
			}
			buf = append(buf, c)
			lr.off++
			if c == '\\' {
				precedingBackslash = !precedingBackslash
			} else {
				precedingBackslash = false
			}
			continue
		}
		// End of a natural line.
		lr.eol()
		if len(buf) == 0 {
			skipWhite = true
			continue
		}
		if !precedingBackslash {
			return buf, startLine, true
		}
		buf = buf[:len(buf)-1]
		skipWhite = true
		appendedLineBegin = true
		precedingBackslash = false
	}
}

// splitProperty separates a logical line into key and value as
// Properties.load0 does, then unescapes both.
func splitProperty(line []byte) (property, error) {
	keyLen := 0
	valueStart := len(line)
	hasSep := false
	precedingBackslash := false
	for keyLen < len(line) {
		c := line[keyLen]
		if (c == '=' || c == ':') && !precedingBackslash {
			valueStart = keyLen + 1
			hasSep = true
			break
		}
		if isPropSpace(c) && !precedingBackslash {
			valueStart = keyLen + 1
			break
		}
		if c == '\\' {
			precedingBackslash = !precedingBackslash
		} else {
			precedingBackslash = false
		}
		keyLen++
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isPropSpace(c) {
			if !hasSep && (c == '=' || c == ':') {
				hasSep = true
			} else {
				break
			}
		}
		valueStart++
	}
	key, err := unescapeProperty(line[:keyLen])
	if err != nil {
		return property{}, err
	}
	value, err := unescapeProperty(line[valueStart:])
	if err != nil {
		return property{}, err
	}
	return property{Key: key, Value: value}, nil
}

// unescapeProperty is Properties.loadConvert. \uXXXX escapes are UTF-16
// code units; a surrogate pair becomes one rune, a lone surrogate U+FFFD.
func unescapeProperty(in []byte) (string, error) {
	if !containsByte(in, '\\') {
		return string(in), nil
	}
	var sb strings.Builder
	sb.Grow(len(in))
	var units []uint16 // pending \u code units, flushed on any other byte
	flush := func() {
		if len(units) > 0 {
			sb.WriteString(string(utf16.Decode(units)))
			units = units[:0]
		}
	}
	for i := 0; i < len(in); {
		c := in[i]
		i++
		if c != '\\' || i >= len(in) {
			// A lone trailing backslash cannot survive the line reader, but
			// keep it rather than fail if it ever does.
			flush()
			sb.WriteByte(c)
			continue
		}
		c = in[i]
		i++
		switch c {
		case 'u':
			if i+4 > len(in) {
				return "", fmt.Errorf("malformed \\uxxxx encoding: %w", ErrInvalid)
			}
			var v uint16
			for _, h := range in[i : i+4] {
				d, ok := hexDigit(h)
				if !ok {
					return "", fmt.Errorf("malformed \\uxxxx encoding %q: %w", in[i-2:i+4], ErrInvalid)
				}
				v = v<<4 | uint16(d)
			}
			i += 4
			units = append(units, v)
			continue
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'n':
			c = '\n'
		case 'f':
			c = '\f'
		}
		flush()
		sb.WriteByte(c)
	}
	flush()
	return sb.String(), nil
}

func containsByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// javaTrim is String.trim: it strips every char <= U+0020 from both ends,
// which is what QuorumPeerConfig does to every key and value.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// escapeProperty is Properties.saveConvert: it escapes s so that
// readProperties (and java.util.Properties) read it back unchanged. Keys
// escape every space; values only a leading one. Non-ASCII and control
// characters become \uXXXX so that ZooKeeper, which reads the file as
// ISO-8859-1, sees the same characters as we do. (Invalid UTF-8 comes back
// as U+FFFD: it has no faithful \uXXXX form.) Unlike saveConvert, a
// value keeps '=', ':', '#' and '!' as they are: the key ends at the
// first separator and a comment only at the start of a line, so a reader
// takes them literally, and server.N=127.0.0.1:2888:3888 stays readable.
func escapeProperty(s string, isKey bool) string {
	var sb strings.Builder
	sb.Grow(len(s))
	for i, r := range s {
		switch r {
		case ' ':
			if i == 0 || isKey {
				sb.WriteByte('\\')
			}
			sb.WriteByte(' ')
		case '\t':
			sb.WriteString(`\t`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\f':
			sb.WriteString(`\f`)
		case '=', ':', '#', '!':
			if isKey {
				sb.WriteByte('\\')
			}
			sb.WriteRune(r)
		case '\\':
			sb.WriteString(`\\`)
		default:
			if r < 0x20 || r > 0x7e {
				var buf [2]uint16
				units := buf[:0]
				if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
					units = append(units, uint16(r1), uint16(r2))
				} else {
					units = append(units, uint16(r))
				}
				for _, u := range units {
					fmt.Fprintf(&sb, `\u%04X`, u)
				}
				continue
			}
			sb.WriteRune(r)
		}
	}
	return sb.String()
}
