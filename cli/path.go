package cli

import (
	"strconv"
	"unicode/utf16"
)

// validatePath checks a znode path as the Java client does before sending
// anything (PathUtils.validatePath), with the same messages, so that a bad
// path fails the same way against every server. A sequential create
// validates path+"1": its last segment may be empty ("/q/").
func validatePath(path string, sequential bool) error {
	if sequential {
		path += "1"
	}
	switch {
	case path == "":
		return usagef("Path length must be > 0")
	case path[0] != '/':
		return usagef("Path must start with / character")
	case len(path) == 1:
		return nil
	case path[len(path)-1] == '/':
		return usagef("Path must not end with / character")
	}
	// Java indexes UTF-16 code units; so does the position in the message.
	chars := utf16.Encode([]rune(path))
	reason := ""
	last := chars[0]
	for i := 1; i < len(chars); i++ {
		c := chars[i]
		switch {
		case c == 0:
			reason = "null character not allowed @" + strconv.Itoa(i)
		case c == '/' && last == '/':
			reason = "empty node name specified @" + strconv.Itoa(i)
		case c == '.' && last == '.':
			if chars[i-2] == '/' && (i+1 == len(chars) || chars[i+1] == '/') {
				reason = "relative paths not allowed @" + strconv.Itoa(i)
			}
		case c == '.':
			if chars[i-1] == '/' && (i+1 == len(chars) || chars[i+1] == '/') {
				reason = "relative paths not allowed @" + strconv.Itoa(i)
			}
		case c > 0 && c <= 0x1f, c >= 0x7f && c <= 0x9f,
			c >= 0xd800 && c <= 0xf8ff, c >= 0xfff0:
			reason = "invalid character @" + strconv.Itoa(i)
		}
		if reason != "" {
			return usagef(`Invalid path string "` + path + `" caused by ` + reason)
		}
		last = c
	}
	return nil
}
