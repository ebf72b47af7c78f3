package zab

import (
	"fmt"
	"slices"
	"sort"
	"sync"
)

// MemoryStorage is a Storage kept in memory, with the methods a driver
// uses to follow Ready. It suits tests, simulations and drivers that keep
// the log in memory (diskless mode). It is safe for concurrent use.
type MemoryStorage struct {
	mu   sync.Mutex
	hs   HardState
	snap Snapshot
	ents []Entry // after snap.Zxid, increasing
}

// NewMemoryStorage returns an empty storage.
func NewMemoryStorage() *MemoryStorage { return &MemoryStorage{} }

// HardState implements Storage.
func (s *MemoryStorage) HardState() (HardState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hs, nil
}

// SetHardState replaces the hard state.
func (s *MemoryStorage) SetHardState(hs HardState) {
	s.mu.Lock()
	s.hs = hs
	s.mu.Unlock()
}

// Snapshot implements Storage.
func (s *MemoryStorage) Snapshot() (Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap, nil
}

// LastZxid implements Storage.
func (s *MemoryStorage) LastZxid() (Zxid, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastLocked(), nil
}

func (s *MemoryStorage) lastLocked() Zxid {
	if len(s.ents) > 0 {
		return s.ents[len(s.ents)-1].Zxid
	}
	return s.snap.Zxid
}

// Floor implements Storage.
func (s *MemoryStorage) Floor(z Zxid) (Zxid, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if z < s.snap.Zxid {
		return 0, ErrCompacted
	}
	i := sort.Search(len(s.ents), func(i int) bool { return s.ents[i].Zxid > z })
	if i == 0 {
		return s.snap.Zxid, nil
	}
	return s.ents[i-1].Zxid, nil
}

// Entries implements Storage. The returned slice has no spare capacity,
// so appending to it never writes into the storage.
func (s *MemoryStorage) Entries(after, upTo Zxid, maxBytes uint64) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if after < s.snap.Zxid {
		return nil, ErrCompacted
	}
	lo := sort.Search(len(s.ents), func(i int) bool { return s.ents[i].Zxid > after })
	hi := lo
	var size uint64
	for hi < len(s.ents) && s.ents[hi].Zxid <= upTo {
		size += uint64(len(s.ents[hi].Data))
		if hi > lo && size > maxBytes {
			break
		}
		hi++
	}
	return s.ents[lo:hi:hi], nil
}

// Entry returns the entry with zxid z, if the log holds it.
func (s *MemoryStorage) Entry(z Zxid) (Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.ents), func(i int) bool { return s.ents[i].Zxid >= z })
	if i < len(s.ents) && s.ents[i].Zxid == z {
		return s.ents[i], true
	}
	return Entry{}, false
}

// SetData replaces the data of the entry with zxid z, in place, and
// reports whether the log holds it. Slices Entries handed out earlier
// share the log's array and see the change: a caller that uses SetData
// must not hand those slices on (replica's slimLog copies them).
func (s *MemoryStorage) SetData(z Zxid, data []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.ents), func(i int) bool { return s.ents[i].Zxid >= z })
	if i < len(s.ents) && s.ents[i].Zxid == z {
		s.ents[i].Data = data
		return true
	}
	return false
}

// Append adds entries after the last one; their zxids must increase.
func (s *MemoryStorage) Append(ents []Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.lastLocked()
	for _, e := range ents {
		if e.Zxid <= last {
			return fmt.Errorf("zab: append %v after %v", e.Zxid, last)
		}
		last = e.Zxid
	}
	s.ents = append(s.ents, ents...)
	return nil
}

// Truncate drops every entry after z. The remaining entries move to a new
// array, so slices handed out earlier never see later appends.
func (s *MemoryStorage) Truncate(z Zxid) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if z < s.snap.Zxid {
		return ErrCompacted
	}
	i := sort.Search(len(s.ents), func(i int) bool { return s.ents[i].Zxid > z })
	if i < len(s.ents) {
		s.ents = slices.Clone(s.ents[:i])
	}
	return nil
}

// ApplySnapshot replaces the log and snapshot with snap (a SNAP sync).
func (s *MemoryStorage) ApplySnapshot(snap Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap = snap
	s.ents = nil
}

// Compact records snap as the newest snapshot and drops the entries it
// covers. snap.Zxid must be held (a log entry or the current snapshot).
func (s *MemoryStorage) Compact(snap Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if snap.Zxid < s.snap.Zxid {
		return ErrCompacted
	}
	i := sort.Search(len(s.ents), func(i int) bool { return s.ents[i].Zxid > snap.Zxid })
	if snap.Zxid != s.snap.Zxid && (i == 0 || s.ents[i-1].Zxid != snap.Zxid) {
		return fmt.Errorf("zab: compact at %v: not in the log", snap.Zxid)
	}
	s.snap = snap
	s.ents = slices.Clone(s.ents[i:])
	return nil
}

// All returns a copy of the snapshot and every entry, for tests and for
// simulated crashes.
func (s *MemoryStorage) All() (Snapshot, []Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap, slices.Clone(s.ents)
}
