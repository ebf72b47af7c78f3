package ycsb

import (
	"math/rand/v2"
	"strconv"
)

// KeyChooser is YCSB's scrambled zipfian over the record numbers [0, n),
// exported for experiments that drive other stores with YCSB's key
// popularity (bench/kv). It holds no mutable state, so threads may share
// one, each with its own *rand.Rand.
type KeyChooser struct{ z *scrambledZipfian }

// NewKeyChooser returns the scrambled zipfian over [0, n).
func NewKeyChooser(n int64) *KeyChooser {
	return &KeyChooser{z: newScrambledZipfian(0, max(n, 1)-1)}
}

// Next draws a record number in [0, n).
func (k *KeyChooser) Next(r *rand.Rand) int64 { return k.z.next(r) }

// KeyName is YCSB's name of record k ("user" and its hashed number), the
// row key every store gets.
func KeyName(k int64) string { return "user" + strconv.FormatInt(fnvhash64(k), 10) }
