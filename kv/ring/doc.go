// Package ring is the consistent-hash ring of the sharded KV store (ACaZoo,
// part 2): which replica group (RG) owns which rows.
//
// Each RG owns one or more tokens on a 64-bit circle. A row key is hashed
// onto the same circle with Hash (xxHash64, seed 0), and the row belongs to
// the RG holding the first token at or after that hash, wrapping past the
// largest token to the smallest. A token t therefore owns the half-open
// range (previous token, t].
//
// Why xxHash64: its output is fully specified (clients in other languages
// compute the same placement with a stock library), it mixes short and
// sequential keys well over all 64 bits (FNV-1a does not: keys differing
// only in the last byte land close together on the circle), and it is
// already a dependency of pebble. The hash is part of the on-disk and
// in-znode contract: changing it moves every row.
//
// A Ring is an immutable value: AddGroup and RemoveGroup return a new Ring
// with a higher Version together with the list of Moves that turn the old
// placement into the new one. Encode gives a versioned, canonical byte form
// for storing the ring in a znode; Decode accepts exactly that form.
//
// The package is pure: no I/O, no goroutines, no locks.
package ring
