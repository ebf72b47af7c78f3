package server

import "strconv"

// hex formats ids and zxids as ZooKeeper logs them: 0x and lower-case hex.
func hex(v int64) string { return "0x" + strconv.FormatUint(uint64(v), 16) }
