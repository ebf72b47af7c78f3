package datatree

import (
	"cmp"
	"encoding/binary"
	"slices"
	"unsafe"
)

// A node's name and data are one record (the name's length as a uvarint,
// the name, the data's length + 1 and the data version as uvarints, mzxid
// and mtime as varints relative to czxid and ctime, the data; see
// Node.rec), kept in an arena of chunks (RAMCloud's
// log-structured memory, without the log): a record is appended to the
// head chunk and never written again, a freed record is only marked, and
// a chunk that freeing has left less than half live is evacuated: its live
// records are copied to the head and the chunk is dropped, for the
// collector to reclaim once nothing refers to it.
//
// Against one heap allocation for the data and one for the name (what the
// tree did before), a record costs its exact size plus a 4-byte header,
// where the allocator rounds each allocation up to its size class: a
// million znodes of 100 bytes with 17-byte names took 112 + 24 bytes each
// and now take 124, and the node holds one pointer instead of a pointer
// for each, the name's length, the data's and the version. A record larger than largeRecord gets an
// allocation of its own (without a header); the size classes above it
// waste less than an arena would at its chunks' ends.
//
// Nothing is modified in place, so Node.Data and the names Children
// returns stay valid after the tree's lock is released even if their
// record is freed or moved meanwhile: an evacuated chunk stays allocated
// while such a slice refers to it. Only a freed record's header changes.
//
// The header of a live record is the handle of the node that owns it
// (nodeAlloc.handle), which is how evacuation finds the node to update.
// A freed record's header is deadBit | its length, which is how
// evacuation steps over it.
//
// Costs: a create or setData copies the name and data once into the head
// chunk (setData kept the txn's buffer as it was, allocation-free; the
// copy also lets that buffer, on the leader a slice of the proposal's
// encoded record, be reclaimed). Evacuation copies at most one byte for
// every byte freed, as a chunk is evacuated when at least half of it is
// free; memory held is then at most about twice the live records in the
// worst case of scattered frees, once live in a tree that only grows.
const (
	chunkSize   = 64 << 10
	largeRecord = 4 << 10
	recHeader   = 4
	deadBit     = 1 << 31
)

// chunk is one arena chunk. Its buf's length is the bytes used.
type chunk struct {
	buf  []byte
	live int // bytes of live records, headers included
}

func (c *chunk) base() uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(c.buf))) }

// arena holds the records of one tree's nodes; it belongs to the tree and
// is used under its lock.
type arena struct {
	nodes *nodeAlloc
	// chunks holds every chunk, the head included, in order of address,
	// so that the chunk of a record is found by binary search.
	chunks []*chunk
	head   *chunk
	// bytes is the arena's chunk memory, used and unused (metrics).
	bytes int64
}

// emptyData is what Data returns for empty, non-null data: a non-nil empty
// slice, which clients tell apart from null data.
var emptyData = []byte{}

// put makes name, data (nil: null data), the data version, mzxid and
// mtime n's record, freeing the one it had. Name and data may share the
// old record's memory. n's czxid and ctime must be set: mzxid and mtime
// are stored relative to them.
//
// Making room may evacuate a chunk, n's old record included, and freeing
// the old record may evacuate one holding the new: the node must name its
// current record, with its sizes, whenever the arena can move records.
func (a *arena) put(n *Node, name string, data []byte, version int32, mzxid, mtime int64) {
	f := recStat{v: uint64(uint32(version)), dz: zigzag(mzxid - n.czxid), dt: zigzag(mtime - n.ctime)}
	if data != nil {
		f.dl = uint64(len(data)) + 1
	}
	size := uvarintLen(uint64(len(name))) + len(name) + uvarintLen(f.dl) + uvarintLen(f.v) +
		uvarintLen(f.dz) + uvarintLen(f.dt) + len(data)
	var rec *byte
	if size > largeRecord {
		b := appendRecord(make([]byte, 0, size), name, f, data)
		rec = &b[0]
	} else {
		c := a.room(recHeader + size)
		start := len(c.buf)
		c.buf = binary.LittleEndian.AppendUint32(c.buf, a.nodes.handle(n))
		c.buf = appendRecord(c.buf, name, f, data)
		c.live += recHeader + size
		rec = &c.buf[start+recHeader]
	}
	old, oldSize := n.rec, 0
	if old != nil {
		oldSize = n.recSize()
	}
	n.rec = rec
	if old != nil {
		a.release(old, oldSize)
	}
}

// recStat is a record's fields between the name and the data, as
// uvarints: dl is the data's length + 1 (0 for null data), v the version's
// 32 bits, dz and dt mzxid - czxid and mtime - ctime zigzag-encoded.
type recStat struct{ dl, v, dz, dt uint64 }

// zigzag is x as binary.AppendVarint encodes it.
func zigzag(x int64) uint64 { return uint64(x<<1) ^ uint64(x>>63) }

// appendRecord appends a record (Node.rec) to b: name, f and data.
func appendRecord(b []byte, name string, f recStat, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = binary.AppendUvarint(b, f.dl)
	b = binary.AppendUvarint(b, f.v)
	b = binary.AppendUvarint(b, f.dz)
	b = binary.AppendUvarint(b, f.dt)
	return append(b, data...)
}

// free releases n's record (the node is being released).
func (a *arena) free(n *Node) {
	if n.rec != nil {
		a.release(n.rec, n.recSize())
		n.rec = nil
	}
}

// room returns a chunk with size bytes of room: the head, or a new head.
// The caller appends to it at once (a chunk's buf must never grow past
// its capacity, which would move its records).
func (a *arena) room(size int) *chunk {
	for {
		if h := a.head; h != nil && cap(h.buf)-len(h.buf) >= size {
			return h
		}
		c := &chunk{buf: make([]byte, 0, chunkSize)}
		a.bytes += chunkSize
		i, _ := slices.BinarySearchFunc(a.chunks, c.base(), func(x *chunk, b uintptr) int {
			return cmp.Compare(x.base(), b)
		})
		a.chunks = slices.Insert(a.chunks, i, c)
		prev := a.head
		a.head = c
		// The old head may already be mostly free; it was not evacuated
		// while it was the head. Its records go to the new head, so the
		// loop checks the room again.
		if prev != nil && prev.live*2 < len(prev.buf) {
			a.evacuate(prev)
		}
	}
}

// release marks the record at rec (size bytes of name and data) freed,
// evacuating its chunk if that leaves it less than half live.
func (a *arena) release(rec *byte, size int) {
	c, i := a.chunkOf(rec)
	if c == nil {
		return // an allocation of its own; the collector frees it
	}
	off := int(uintptr(unsafe.Pointer(rec))-c.base()) - recHeader
	binary.LittleEndian.PutUint32(c.buf[off:], deadBit|uint32(size))
	c.live -= recHeader + size
	if c != a.head && c.live*2 < len(c.buf) {
		a.evacuateAt(c, i)
	}
}

// chunkOf returns the chunk holding rec and its index, or nil.
func (a *arena) chunkOf(rec *byte) (*chunk, int) {
	p := uintptr(unsafe.Pointer(rec))
	i, found := slices.BinarySearchFunc(a.chunks, p, func(x *chunk, b uintptr) int {
		return cmp.Compare(x.base(), b)
	})
	if !found {
		i--
	}
	if i < 0 {
		return nil, -1
	}
	c := a.chunks[i]
	if p >= c.base()+uintptr(cap(c.buf)) {
		return nil, -1
	}
	return c, i
}

func (a *arena) evacuate(c *chunk) {
	_, i := a.chunkOf(unsafe.SliceData(c.buf))
	a.evacuateAt(c, i)
}

// evacuateAt copies c's live records to the head and drops c, which is
// a.chunks[i] and not the head.
func (a *arena) evacuateAt(c *chunk, i int) {
	a.chunks = slices.Delete(a.chunks, i, i+1)
	a.bytes -= int64(cap(c.buf))
	for off := 0; off < len(c.buf); {
		h := binary.LittleEndian.Uint32(c.buf[off:])
		if h&deadBit != 0 {
			off += recHeader + int(h&^deadBit)
			continue
		}
		n := a.nodes.at(h)
		size := n.recSize()
		rec := c.buf[off+recHeader : off+recHeader+size]
		// room may evacuate the old head; c is out of the list already.
		d := a.room(recHeader + size)
		start := len(d.buf)
		d.buf = binary.LittleEndian.AppendUint32(d.buf, h)
		d.buf = append(d.buf, rec...)
		d.live += recHeader + size
		n.rec = &d.buf[start+recHeader]
		off += recHeader + size
	}
	// c is garbage now; slices of its records handed out earlier keep it
	// alive until they are dropped.
}

// uvarintLen is the length of n's uvarint encoding.
func uvarintLen(n uint64) int {
	k := 1
	for ; n >= 0x80; n >>= 7 {
		k++
	}
	return k
}
