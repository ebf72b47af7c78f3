package kv

import (
	"bytes"
	"cmp"
	"container/list"
	"encoding/binary"
	"slices"
	"sync"
)

// rowCache keeps the rows that plain reads (every family, the newest
// version, no bounds: what Get and MultiGet return by default) read last,
// by table id and row key, in least-recently-used order within a byte
// budget: a zipfian read load reads a few rows over and over, and a hit
// skips the pebble iterator and its seek through every level.
//
// Consistency. Every commit of a batch increments Store.seq under
// Store.mu; a read's view notes the seq it was opened at. A commit that
// writes a row replaces the row's entry, under Store.mu and before the
// commit is visible, with the row's new cells or a mark, either holding
// the commit's seq (write), so that no read after the commit finds the
// row's old cells. A read that
// missed fills the entry with what its view read only if no commit after
// its view wrote the row: the row's entry, if any, is older than the
// view, and floor (the newest seq of a mark evicted or of a clear) is not
// newer. Reads fill before they release their view, so a snapshot
// install (which clears under dbMu held exclusively) never follows a
// fill from the database it replaced.
//
// Lock order: Store.mu, then rowCache.mu. Cached cells are shared by every
// read that hits them and must not be modified.
type rowCache struct {
	mu      sync.Mutex
	max     int64                    // budget in bytes; 0: off
	bytes   int64                    // guarded by mu
	floor   uint64                   // guarded by mu
	entries map[string]*list.Element // guarded by mu; values are *rowEntry
	lru     list.List                // guarded by mu; front: most recent
	// hits and misses count plain reads (metrics).
	hits, misses int64 // guarded by mu
	// stale, set only by a test, fills without the seq checks, to show
	// that the test catches a stale fill.
	stale bool
}

// rowEntry is a cached row (cells, nil for a row with none) or, with
// mark set, a write's mark.
type rowEntry struct {
	key   string
	seq   uint64
	mark  bool
	cells []CellVersion
	size  int64
}

// DefaultRowCacheSize is a store's row cache when Options leave it 0.
const DefaultRowCacheSize = 32 << 20

// rowEntryOverhead approximates an entry's bookkeeping: the map slot, the
// list element and the entry.
const rowEntryOverhead = 160

func newRowCache(max int64) *rowCache {
	return &rowCache{max: max, entries: make(map[string]*list.Element)}
}

func rowCacheKey(table uint32, row []byte) string {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(row)), table)
	return string(append(b, row...))
}

// get returns the cached cells of key, if a row (not a mark) is cached.
func (c *rowCache) get(key string) ([]CellVersion, bool) {
	if c.max <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok || el.Value.(*rowEntry).mark {
		c.misses++
		return nil, false
	}
	c.hits++
	c.lru.MoveToFront(el)
	return el.Value.(*rowEntry).cells, true
}

// fill caches cells as key's row read by a view opened at seq, unless a
// commit after seq wrote the row.
func (c *rowCache) fill(key string, seq uint64, cells []CellVersion) {
	if c.max <= 0 {
		return
	}
	size := rowSize(key, cells)
	if size > c.max/8 {
		return // one row may not push out most of the others
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stale {
		if seq < c.floor {
			return
		}
		if el, ok := c.entries[key]; ok && el.Value.(*rowEntry).seq > seq {
			return
		}
	}
	c.put(&rowEntry{key: key, seq: seq, cells: cells, size: size})
}

// rowWrite is a row mutation of an Apply batch and its result.
type rowWrite struct {
	key string
	t   *table
	m   *Mutation
	res Result
}

// write brings the cache to the commit seq of the row mutations ws, in
// their order. The caller holds Store.mu exclusively, before the commit
// is visible. A cached row that a put or a column or family delete
// changes gets its new cells (write-through: a read-modify-write or a
// read after a write still hits); any other written row gets a mark; a
// failed condition or an error result wrote nothing and changes nothing.
func (c *rowCache) write(seq uint64, ws []rowWrite) {
	if c.max <= 0 || len(ws) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range ws {
		w := &ws[i]
		if w.res.Err != nil || !w.res.Succeeded {
			continue
		}
		var cells []CellVersion
		if el, ok := c.entries[w.key]; ok && !el.Value.(*rowEntry).mark {
			cells = written(w, el.Value.(*rowEntry).cells)
		}
		if len(cells) == 0 {
			c.put(&rowEntry{key: w.key, seq: seq, mark: true, size: int64(rowEntryOverhead + len(w.key))})
			continue
		}
		if size := rowSize(w.key, cells); size <= c.max/8 {
			c.put(&rowEntry{key: w.key, seq: seq, cells: cells, size: size})
		} else {
			c.put(&rowEntry{key: w.key, seq: seq, mark: true, size: int64(rowEntryOverhead + len(w.key))})
		}
	}
}

// written returns the cells a plain read returns of a row that held old
// once w applied, or nil when they are not derived here (a row delete).
// old is not modified. The new cells share the mutation's qualifier and
// value bytes: Apply's mutations come from DecodeMutation, whose bytes
// are its own copy of the entry, which nothing writes.
func written(w *rowWrite, old []CellVersion) []CellVersion {
	m := w.m
	var cells []CellVersion
	switch m.Op {
	case OpPut, OpCheckAndPut:
		cells = slices.Clone(old)
		added := false // a column the row did not hold: order to restore
		for _, nc := range m.Cells {
			cv := CellVersion{Family: nc.Family, Qualifier: nc.Qualifier, Version: w.res.Version, Value: nc.Value}
			if cv.Qualifier == nil {
				cv.Qualifier = []byte{}
			}
			if cv.Value == nil {
				cv.Value = []byte{}
			}
			j := slices.IndexFunc(cells, func(x CellVersion) bool {
				return x.Family == nc.Family && bytes.Equal(x.Qualifier, nc.Qualifier)
			})
			if j >= 0 {
				cells[j] = cv
			} else {
				cells = append(cells, cv)
				added = true
			}
		}
		if added {
			fids := make(map[string]uint32, len(w.t.families))
			for _, f := range w.t.families {
				fids[f.name] = f.id
			}
			slices.SortStableFunc(cells, func(x, y CellVersion) int {
				if a, b := fids[x.Family], fids[y.Family]; a != b {
					return cmp.Compare(a, b)
				}
				return bytes.Compare(x.Qualifier, y.Qualifier)
			})
		}
	case OpDelete, OpCheckAndDelete:
		d := m.Delete
		switch d.Scope {
		case ScopeFamily:
			cells = slices.DeleteFunc(slices.Clone(old), func(x CellVersion) bool { return x.Family == d.Family })
		case ScopeColumn:
			cells = slices.DeleteFunc(slices.Clone(old), func(x CellVersion) bool {
				return x.Family == d.Family && bytes.Equal(x.Qualifier, d.Qualifier)
			})
		}
	}
	return cells
}

// rowSize is the bytes a cached row of cells under key counts for.
func rowSize(key string, cells []CellVersion) int64 {
	size := int64(rowEntryOverhead + len(key))
	for _, cv := range cells {
		size += int64(48 + len(cv.Qualifier) + len(cv.Value))
	}
	return size
}

// clear drops every entry; fills from views older than seq are refused.
func (c *rowCache) clear(seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = make(map[string]*list.Element)
	c.lru.Init()
	c.bytes = 0
	c.floor = max(c.floor, seq)
}

// put replaces e.key's entry with e and evicts from the back to the
// budget. The caller holds mu.
func (c *rowCache) put(e *rowEntry) {
	if el, ok := c.entries[e.key]; ok {
		c.bytes -= el.Value.(*rowEntry).size
		c.lru.Remove(el)
	}
	c.entries[e.key] = c.lru.PushFront(e)
	c.bytes += e.size
	for c.bytes > c.max {
		back := c.lru.Back()
		old := back.Value.(*rowEntry)
		c.lru.Remove(back)
		delete(c.entries, old.key)
		c.bytes -= old.size
		if old.mark {
			// Forgetting a mark forgets that the row changed at old.seq:
			// older views may no longer fill anything.
			c.floor = max(c.floor, old.seq)
		}
	}
}

// stats returns the hits and misses so far and the bytes held.
func (c *rowCache) stats() (hits, misses, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses, c.bytes
}
