package kv

import (
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"

	"github.com/corral-db/corral/zab"
)

// Fingerprint returns the applied zxid and a hash (FNV-1a, 64 bits) of
// every key and value the store holds, reserved keys included, read at
// one point: replicas at the same applied zxid have the same fingerprint.
// It reads the whole database, for tests and the simulator; an empty
// store's fingerprint is 0.
func (s *Store) Fingerprint() (zab.Zxid, uint64, error) {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.db == nil {
		return 0, 0, errClosed
	}
	s.mu.RLock()
	snap := s.db.NewSnapshot()
	applied := s.Applied()
	s.mu.RUnlock()
	defer snap.Close()
	it, err := snap.NewIter(&pebble.IterOptions{})
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	n := 0
	var lb [binary.MaxVarintLen64]byte
	mix := func(b []byte) {
		for _, c := range lb[:binary.PutUvarint(lb[:], uint64(len(b)))] {
			h = (h ^ uint64(c)) * prime
		}
		for _, c := range b {
			h = (h ^ uint64(c)) * prime
		}
	}
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return 0, 0, err
		}
		mix(it.Key())
		mix(v)
		n++
	}
	if err := it.Error(); err != nil {
		return 0, 0, err
	}
	if n == 0 {
		return applied, 0, nil
	}
	return applied, h, nil
}
