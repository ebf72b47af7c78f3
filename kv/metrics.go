package kv

// StoreMetrics are the figures of a store's pebble database that a
// member's metrics endpoint exports (kvserver/metrics.go), read at once.
type StoreMetrics struct {
	Temperature Temperature
	// Per LSM level (0..6): tables and their bytes.
	LevelTables, LevelBytes [7]int64
	// ReadAmp is the sublevels of L0 plus the non-empty levels below:
	// the sorted runs a point read may consult.
	ReadAmp int
	// MemTableBytes and MemTables are the memtables allocated (the
	// mutable one and those waiting to flush).
	MemTableBytes uint64
	MemTables     int64
	// BlockCache: its bytes in use, hits and misses since open.
	BlockCacheBytes, BlockCacheHits, BlockCacheMisses int64
	// DiskBytes is the space the database's files take.
	DiskBytes uint64
	// TableIters counts the sstable iterators open; Snapshots the pebble
	// snapshots open.
	TableIters int64
	Snapshots  int
	// BytesFlushed and BytesCompacted are the bytes written by flushes
	// and by compactions since open, over every level.
	BytesFlushed, BytesCompacted uint64
	// RowCacheHits and RowCacheMisses count the plain reads of a row
	// that the row cache answered and did not; RowCacheBytes is what it
	// holds.
	RowCacheHits, RowCacheMisses, RowCacheBytes int64
}

// Metrics reads the store's pebble figures and its temperature (with
// debtThreshold as in Temperature).
func (s *Store) Metrics(debtThreshold uint64) (StoreMetrics, error) {
	t, err := s.Temperature(debtThreshold)
	if err != nil {
		return StoreMetrics{}, err
	}
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.db == nil {
		return StoreMetrics{}, errClosed
	}
	m := s.db.Metrics()
	sm := StoreMetrics{
		Temperature:      t,
		ReadAmp:          m.ReadAmp(),
		MemTableBytes:    m.MemTable.Size,
		MemTables:        m.MemTable.Count,
		BlockCacheBytes:  m.BlockCache.Size,
		BlockCacheHits:   m.BlockCache.Hits,
		BlockCacheMisses: m.BlockCache.Misses,
		DiskBytes:        m.DiskSpaceUsage(),
		TableIters:       m.TableIters,
		Snapshots:        m.Snapshots.Count,
	}
	sm.RowCacheHits, sm.RowCacheMisses, sm.RowCacheBytes = s.rows.stats()
	for i := range m.Levels {
		if i >= len(sm.LevelTables) {
			break
		}
		l := &m.Levels[i]
		sm.LevelTables[i], sm.LevelBytes[i] = l.TablesCount, l.TablesSize
		sm.BytesFlushed += l.TableBytesFlushed
		sm.BytesCompacted += l.TableBytesCompacted
	}
	return sm, nil
}
