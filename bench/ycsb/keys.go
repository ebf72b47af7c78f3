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

// Inserts is YCSB's insert key sequence (its acknowledged counter),
// shared by a system's threads: Take the next record number to insert,
// Ack it when the insert is done, Last is the newest record number below
// which every insert is done (reads never pass it).
type Inserts struct{ a *ackCounter }

// NewInserts starts the sequence at start: records below it exist.
func NewInserts(start int64) *Inserts { return &Inserts{a: newAckCounter(start)} }

// Take hands out the next record number to insert.
func (i *Inserts) Take() int64 { return i.a.take() }

// Ack marks record k's insert done, whether or not it succeeded.
func (i *Inserts) Ack(k int64) { i.a.ack(k) }

// Last is the newest record number below which every insert is done.
func (i *Inserts) Last() int64 { return i.a.last() }

// Latest is YCSB's "latest" distribution over the inserts: zipfian over
// how recently a record was inserted.
type Latest struct{ s *skewedLatest }

// NewLatest draws over basis's acknowledged records.
func NewLatest(basis *Inserts) *Latest { return &Latest{s: newSkewedLatest(basis.a)} }

// Next draws a record number no greater than basis's Last.
func (l *Latest) Next(r *rand.Rand) int64 { return l.s.next(r) }
