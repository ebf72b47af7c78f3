package kvserver

import "testing"

// TestStaggeredMemTables: the default memtables of a group's first
// members differ, so that their flushes drift apart, and stay within 2x
// of DefaultMemTableSize.
func TestStaggeredMemTables(t *testing.T) {
	seen := make(map[uint64]uint64)
	for id := uint64(1); id <= 4; id++ {
		m := staggeredMemTable(id)
		if m < DefaultMemTableSize || m >= 2*DefaultMemTableSize {
			t.Fatalf("member %d: memtable %d outside [%d, %d)", id, m, DefaultMemTableSize, 2*DefaultMemTableSize)
		}
		if other, ok := seen[m]; ok {
			t.Fatalf("members %d and %d share memtable size %d", other, id, m)
		}
		seen[m] = id
	}
	if staggeredMemTable(1) != DefaultMemTableSize {
		t.Fatalf("member 1: %d, want the default %d", staggeredMemTable(1), DefaultMemTableSize)
	}
}
