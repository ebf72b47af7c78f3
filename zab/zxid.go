package zab

import "fmt"

// Zxid is a ZooKeeper transaction id: the epoch of the leader that
// proposed the transaction in the high 32 bits and a counter in the low
// 32 bits. Zxids order every state change; comparing two as integers
// compares (epoch, counter).
type Zxid uint64

// NewZxid builds the zxid (epoch, counter).
func NewZxid(epoch, counter uint32) Zxid {
	return Zxid(uint64(epoch)<<32 | uint64(counter))
}

// Epoch is the epoch of the leader that proposed the transaction.
func (z Zxid) Epoch() uint32 { return uint32(z >> 32) }

// Counter is the position of the transaction within its epoch; the first
// proposal of an epoch has counter 1.
func (z Zxid) Counter() uint32 { return uint32(z) }

// String formats a zxid as ZooKeeper logs it, in hexadecimal.
func (z Zxid) String() string { return fmt.Sprintf("0x%x", uint64(z)) }

// Entry is one transaction: its zxid and the bytes of the state machine
// that proposed it. zab never looks inside Data.
type Entry struct {
	Zxid Zxid
	Data []byte
}

func entriesBytes(ents []Entry) uint64 {
	var n uint64
	for i := range ents {
		n += uint64(len(ents[i].Data))
	}
	return n
}
