package datatree

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/corral-db/corral/wire"
)

// ValidatePath reports whether path is a legal znode path, with ZooKeeper's
// PathUtils.validatePath rules: non-empty, absolute, no trailing '/' (except
// the root), no empty, "." or ".." segment, and none of the characters
// U+0000–U+001F, U+007F–U+009F, U+D800–U+F8FF, U+FFF0–U+FFFF.
//
// Java checks UTF-16 code units, so every character outside the BMP (a
// surrogate pair) is rejected too, and so is invalid UTF-8, which Java
// decodes to U+FFFD. The error wraps wire.CodeBadArguments.
func ValidatePath(path string) error {
	if reason := pathProblem(path); reason != "" {
		return fmt.Errorf("%w: invalid path %q: %s", wire.CodeBadArguments, path, reason)
	}
	return nil
}

func pathProblem(path string) string {
	if len(path) == 0 {
		return "path length must be > 0"
	}
	if path[0] != '/' {
		return "path must start with / character"
	}
	if len(path) == 1 {
		return ""
	}
	if path[len(path)-1] == '/' {
		return "path must not end with / character"
	}
	for i := 1; i < len(path); {
		c := path[i]
		if c < utf8.RuneSelf {
			switch {
			case c == 0:
				return "null character not allowed @" + strconv.Itoa(i)
			case c == '/' && path[i-1] == '/':
				return "empty node name specified @" + strconv.Itoa(i)
			case c == '.' && isDotSegment(path, i):
				return "relative paths not allowed @" + strconv.Itoa(i)
			case c <= 0x1f || c == 0x7f:
				return "invalid character @" + strconv.Itoa(i)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(path[i:])
		if badRune(r, size) {
			return "invalid character @" + strconv.Itoa(i)
		}
		i += size
	}
	return ""
}

// isDotSegment reports whether the '.' at i ends a "." or ".." segment.
func isDotSegment(path string, i int) bool {
	if i+1 != len(path) && path[i+1] != '/' {
		return false
	}
	if path[i-1] == '/' {
		return true
	}
	return path[i-1] == '.' && i >= 2 && path[i-2] == '/'
}

func badRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size <= 1:
		return true // invalid UTF-8: Java sees U+FFFD
	case r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0xd800 && r <= 0xf8ff:
		return true
	case r >= 0xfff0:
		return true // U+FFF0–U+FFFF, and everything outside the BMP
	}
	return false
}

// ParentPath returns the parent of an absolute path: "/" for a child of the
// root, "" for the root itself.
func ParentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	switch {
	case i < 0 || p == "/":
		return ""
	case i == 0:
		return "/"
	}
	return p[:i]
}

// BaseName returns the last segment of p ("" for the root).
func BaseName(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// Paths of the nodes every tree starts with.
const (
	RootPath      = "/"
	ProcPath      = "/zookeeper"
	QuotaPath     = "/zookeeper/quota"
	ConfigPath    = "/zookeeper/config"
	procChildName = "zookeeper"
)

// IsReservedPath reports whether p is one of the nodes ZooKeeper refuses to
// delete (DataTree.isSpecialPath): "/", "/zookeeper", "/zookeeper/quota" and
// "/zookeeper/config". A delete of one gets BadArguments.
func IsReservedPath(p string) bool {
	switch p {
	case RootPath, ProcPath, QuotaPath, ConfigPath:
		return true
	}
	return false
}

// SequentialSuffix formats a parent's child-create counter as the suffix of
// a sequential node's name, exactly as Java's String.format("%010d"): ten
// digits, zero padded, the sign counting toward the width (-1 gives
// "-000000001").
func SequentialSuffix(counter int32) string {
	var b [11]byte
	return string(AppendSequentialSuffix(b[:0], counter))
}

// AppendSequentialSuffix appends SequentialSuffix(counter) to dst.
func AppendSequentialSuffix(dst []byte, counter int32) []byte {
	v := int64(counter)
	width := 10
	if v < 0 {
		dst = append(dst, '-')
		v = -v
		width--
	}
	var digits [10]byte
	n := len(strconv.AppendInt(digits[:0], v, 10))
	for ; n < width; width-- {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, v, 10)
}
