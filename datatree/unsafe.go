package datatree

import "unsafe"

// unsafeBytes views s as a byte slice for read-only hashing; the result
// must never be written or retained.
func unsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
