package fakezk

import (
	"encoding/binary"

	"github.com/corral-db/corral/wire"
)

// PasswdSize is the session password length a 3.x server hands out.
const passwdSize = 16

// BeginFrame reserves the 4-byte length prefix and returns its offset.
func beginFrame(e *wire.Encoder) int {
	at := e.Len()
	e.Int(0)
	return at
}

// EndFrame patches the length prefix reserved by beginFrame.
func endFrame(e *wire.Encoder, at int) {
	binary.BigEndian.PutUint32(e.B[at:], uint32(e.Len()-at-4))
}

// ycsbRecordSize is a YCSB record as the ycsb experiment stores it: ten
// fields of 100 bytes.
const ycsbRecordSize = 10 * 100
