package datatree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"

	"github.com/corral-db/corral/wire"
)

// Snapshot format (all integers varints, zig-zag for signed values):
//
//	magic "CTRE", version byte 1
//	lastZxid
//	size hint: the node count when writing started (uvarint)
//	records, each starting with a tag byte:
//	  1 session: id, timeout
//	  2 acl:     ref (uvarint), count (uvarint), count × (perms, scheme, id)
//	  3 node:    path, data (uvarint len+1, 0 = nil; bytes), acl ref,
//	             czxid mzxid ctime mtime version cversion aversion
//	             ephemeralOwner pzxid
//	  0 end:     node count (uvarint), then CRC-32C (4 bytes, big endian)
//	             of every byte before it
//
// An ACL record precedes the first node that uses it, so the snapshot does
// not depend on the ACL cache staying unchanged while it is written.

const (
	snapMagic   = "CTRE"
	snapVersion = 1

	tagEnd     = 0
	tagSession = 1
	tagACL     = 2
	tagNode    = 3

	snapChunkBytes = 64 << 10
	// maxSnapField bounds a single string or data field (1 GiB); reads grow
	// their buffers as bytes arrive, so a corrupt length costs at most the
	// input's size in memory.
	maxSnapField = 1 << 30
	maxSizeHint  = 1 << 20
)

// snapYieldEvery is the most records WriteSnapshot encodes between calls
// to yield, snapChunkBytes the most bytes: with 1 KiB values a thousand
// records held the lock for about a millisecond, which every write waited
// out (sequential creates' p99 rose from 0.2 to 1.5 ms while a large tree
// was snapshotted). A variable so that tests can make chunks smaller.
var snapYieldEvery = 1000

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrCorruptSnapshot is wrapped by every error ReadSnapshot returns for bad
// input.
var ErrCorruptSnapshot = errors.New("datatree: corrupt snapshot")

// WriteSnapshot writes a fuzzy snapshot of the tree to w. The caller holds
// the tree's read lock. WriteSnapshot encodes into memory and, every
// snapChunkBytes or snapYieldEvery records, calls yield (if not nil) with a
// function that writes the encoded chunk to w: yield should release the
// lock, call it, and take the lock again, so that writes to the tree
// proceed and no disk I/O happens under the lock. With a nil yield the
// chunks are written with the lock held. The snapshot starts with LastZxid
// as of the call; each node is as it was when encoded, which may be later.
// Replaying the log from LastZxid+1 over the loaded snapshot converges to
// the live tree (see doc.go).
func (t *Tree) WriteSnapshot(w io.Writer, yield func(write func())) error {
	sw := &snapWriter{w: w, buf: make([]byte, 0, snapChunkBytes+4<<10)}
	b := make([]byte, 0, 512)
	b = append(b, snapMagic...)
	b = append(b, snapVersion)
	b = binary.AppendVarint(b, t.lastZxid)
	b = binary.AppendUvarint(b, uint64(t.NodeCount()))
	sw.write(b)

	// prefix caches the path of the last node's parent (empty for the
	// root), which its siblings next to it in the slab share; it is
	// forgotten whenever the lock is released, since the parent may then
	// be deleted and its slot reused.
	var lastParent nodeRef
	var prefix, path []byte

	count := 0
	// due counts a record and reports whether a chunk is due; flush
	// writes it, releasing the lock for the while (yield).
	due := func() bool {
		count++
		return count%snapYieldEvery == 0 || len(sw.buf) >= snapChunkBytes
	}
	flush := func() error {
		lastParent = 0
		if yield == nil {
			sw.flush()
		} else {
			yield(sw.flush)
		}
		return sw.err
	}
	pause := func() error {
		if !due() {
			return nil
		}
		return flush()
	}

	// Ranging over a map while it changes between iterations is allowed:
	// entries removed before they are reached are skipped, entries added
	// may or may not be seen. The yield happens between iterations, with
	// the lock released, so no write overlaps the range.
	for id, to := range t.sessions {
		b = append(b[:0], tagSession)
		b = binary.AppendVarint(b, id)
		b = binary.AppendVarint(b, int64(to))
		sw.write(b)
		if err := pause(); err != nil {
			return err
		}
	}

	refs := make(map[aclID]uint64)
	nodes := 0
	// writeNode encodes one node record (and its ACL's definition, the
	// first time it is used).
	writeNode := func(path []byte, data []byte, acl aclID, st PStat) {
		ref, ok := refs[acl]
		if !ok {
			ref = uint64(len(refs) + 1)
			refs[acl] = ref
			b = append(b[:0], tagACL)
			b = binary.AppendUvarint(b, ref)
			list := t.acls.entry(acl).acl
			b = binary.AppendUvarint(b, uint64(len(list)))
			for _, a := range list {
				b = binary.AppendVarint(b, int64(a.Perms))
				b = appendSnapString(b, a.ID.Scheme)
				b = appendSnapString(b, a.ID.ID)
			}
			sw.write(b)
		}
		b = append(b[:0], tagNode)
		b = binary.AppendUvarint(b, uint64(len(path)))
		b = append(b, path...)
		if data == nil {
			b = append(b, 0)
		} else {
			b = binary.AppendUvarint(b, uint64(len(data))+1)
		}
		sw.write(b)
		sw.write(data)
		b = binary.AppendUvarint(b[:0], ref)
		b = binary.AppendVarint(b, st.Czxid)
		b = binary.AppendVarint(b, st.Mzxid)
		b = binary.AppendVarint(b, st.Ctime)
		b = binary.AppendVarint(b, st.Mtime)
		b = binary.AppendVarint(b, int64(st.Version))
		b = binary.AppendVarint(b, int64(st.CVersion))
		b = binary.AppendVarint(b, int64(st.Aversion))
		b = binary.AppendVarint(b, st.EphemeralOwner)
		b = binary.AppendVarint(b, st.Pzxid)
		sw.write(b)
		nodes++
	}

	// Packed entries (pack.go) go first, each run in number order from a
	// cursor that survives the lock's release: an entry that exists
	// throughout is written once. One unpacked meanwhile is a node by the
	// time the nodes are walked, and is written again as it then is (the
	// reader keeps the later record of a path).
	type runAt struct {
		parent *Node
		run    *entryRun
	}
	var runs []runAt
	if t.packRoot != "" {
		if root := t.lookup(t.packRoot); root != nil {
			root.eachChild(func(l *Node) {
				if r := l.run(); r != nil && r.live > 0 {
					runs = append(runs, runAt{l, r})
				}
			})
		}
	}
	for _, ra := range runs {
		from := uint64(0)
		for more := true; more; {
			// Released and retaken: the log may be gone (its node freed and
			// maybe reused: then it holds another run or none).
			if ra.parent.run() != ra.run {
				break
			}
			prefix = append(t.appendPath(prefix[:0], ra.parent), '/')
			more = false
			chunk := false
			ra.run.each(from, func(e runEntry) bool {
				path = ra.run.appendName(append(path[:0], prefix...), e.num)
				writeNode(path, t.decodeEntry(e.czxid, e.data), ra.run.acl,
					entryPStat(e.czxid, e.ctime))
				if e.num == 1<<64-1 {
					return false
				}
				from = e.num + 1
				if due() {
					chunk, more = true, true
					return false
				}
				return true
			})
			if chunk {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	lastParent = 0
	// The slabs may be added, released and reused between chunks, while
	// the lock is released, but a node never moves (slab.go): a node that
	// exists throughout is visited once; one inserted during the walk may
	// or may not be, one removed may or may not be.
	for si := int32(0); si < t.nodes.n; si++ {
		s := t.nodes.slabAt(si)
		if s == nil {
			continue
		}
		for j := range s {
			n := &s[j]
			if n.isFree() {
				continue
			}
			switch {
			case n.parent == 0:
				path = append(path[:0], '/')
			default:
				if n.parent != lastParent {
					lastParent = n.parent
					prefix = prefix[:0]
					if p := t.nodes.node(n.parent); p.parent != 0 {
						prefix = t.appendPath(prefix, p)
					}
				}
				path = append(append(append(path[:0], prefix...), '/'), n.baseName()...)
			}
			writeNode(path, n.Data(), n.acl, n.Persisted())
			if err := pause(); err != nil {
				return err
			}
		}
	}

	b = append(b[:0], tagEnd)
	b = binary.AppendUvarint(b, uint64(nodes))
	sw.write(b)
	b = binary.BigEndian.AppendUint32(b[:0], sw.sum())
	sw.write(b)
	sw.flush()
	return sw.err
}

func appendSnapString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// snapWriter gathers what the snapshot encodes in buf until flush
// checksums it and writes it out. The checksum is taken a chunk at a time,
// not on each write: a node is four or five writes of a few bytes, and
// crc32's fast path needs long inputs. Per write, the checksum was 6% of a
// standalone server's CPU under a create load with snapshots running
// (pprof), more than the snapshot's copying.
type snapWriter struct {
	w      io.Writer
	buf    []byte
	summed int // buf[:summed] is in crc
	crc    uint32
	err    error
}

func (s *snapWriter) write(p []byte) {
	if s.err != nil || len(p) == 0 {
		return
	}
	s.buf = append(s.buf, p...)
}

// sum returns the checksum of everything written so far.
func (s *snapWriter) sum() uint32 {
	s.crc = crc32.Update(s.crc, crcTable, s.buf[s.summed:])
	s.summed = len(s.buf)
	return s.crc
}

// flush writes the gathered bytes to w. A chunk grown past snapChunkBytes
// by one large node is not kept at that size.
func (s *snapWriter) flush() {
	s.sum()
	s.summed = 0
	if s.err == nil && len(s.buf) > 0 {
		_, s.err = s.w.Write(s.buf)
	}
	if cap(s.buf) > 4*snapChunkBytes {
		s.buf = make([]byte, 0, snapChunkBytes+4<<10)
	}
	s.buf = s.buf[:0]
}

// ReadSnapshot loads a tree written by WriteSnapshot. It never panics on
// bad input; every error wraps ErrCorruptSnapshot (or is the reader's
// error). It may read past the end of the snapshot, so give it a reader
// that ends where the snapshot does.
//
// Because the snapshot is fuzzy it may hold a node whose parent it does not
// hold (the parent was deleted, or created, while the snapshot was being
// written). Such nodes are dropped: the log from LastZxid+1 deletes or
// re-creates them (see doc.go).
func ReadSnapshot(r io.Reader) (*Tree, error) {
	sr := &snapReader{r: r, buf: make([]byte, 64<<10)}
	t, err := readSnapshot(sr)
	if err != nil {
		if sr.ioErr != nil && !errors.Is(sr.ioErr, io.EOF) && !errors.Is(sr.ioErr, io.ErrUnexpectedEOF) {
			return nil, sr.ioErr
		}
		return nil, err
	}
	return t, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorruptSnapshot}, args...)...)
}

func readSnapshot(sr *snapReader) (*Tree, error) {
	magic := sr.bytes(len(snapMagic))
	if sr.err != nil || string(magic) != snapMagic {
		return nil, corrupt("bad magic")
	}
	if v := sr.byte(); sr.err == nil && v != snapVersion {
		return nil, corrupt("unknown version %d", v)
	}
	t := newEmptyTree()
	t.lastZxid = sr.varint()
	// The hint is capped so a corrupt one cannot reserve much memory.
	hint := int(min(sr.uvarint(), maxSizeHint))
	type aclDef struct {
		list  []wire.ACL
		entry *aclEntry // interned on first use
	}
	defs := make(map[uint64]*aclDef)
	recs := make([]nodeRec, 0, hint)
	nodes := uint64(0)
	scratch := make([]byte, 0, 1024)
	for sr.err == nil {
		tag := sr.byte()
		if sr.err != nil {
			break
		}
		switch tag {
		case tagSession:
			id := sr.varint()
			to := sr.int32()
			if sr.err == nil {
				t.setSession(id, to)
			}
		case tagACL:
			ref := sr.uvarint()
			n := sr.uvarint()
			if sr.err != nil {
				break
			}
			if _, dup := defs[ref]; dup || ref == 0 {
				return nil, corrupt("acl ref %d redefined or zero", ref)
			}
			if n > maxSnapField {
				return nil, corrupt("acl of %d entries", n)
			}
			var list []wire.ACL
			for i := uint64(0); i < n && sr.err == nil; i++ {
				var a wire.ACL
				a.Perms = sr.int32()
				a.ID.Scheme = sr.string()
				a.ID.ID = sr.string()
				list = append(list, a)
			}
			if list == nil {
				list = []wire.ACL{}
			}
			defs[ref] = &aclDef{list: list}
		case tagNode:
			path := sr.string()
			var data []byte
			if dl := sr.uvarint(); dl > 0 {
				// The node copies its data (newNode), so one buffer serves
				// every node.
				scratch = sr.appendBytes(scratch[:0], int(min(dl-1, maxSnapField+1)))
				data = scratch
			}
			ref := sr.uvarint()
			var st PStat
			st.Czxid = sr.varint()
			st.Mzxid = sr.varint()
			st.Ctime = sr.varint()
			st.Mtime = sr.varint()
			st.Version = sr.int32()
			st.CVersion = sr.int32()
			st.Aversion = sr.int32()
			st.EphemeralOwner = sr.varint()
			st.Pzxid = sr.varint()
			if sr.err != nil {
				break
			}
			if !snapPathOK(path) {
				return nil, corrupt("bad node path %q", path)
			}
			def := defs[ref]
			if def == nil {
				return nil, corrupt("node %q uses undefined acl %d", path, ref)
			}
			if def.entry == nil {
				def.entry = t.acls.intern(def.list)
			} else {
				def.entry.refs++
			}
			// The node is allocated now, in the file's order, and linked
			// once every record is in (link).
			n := t.newNode(BaseName(path), def.entry, data, st)
			recs = append(recs, nodeRec{path: path, n: n})
			nodes++
		case tagEnd:
			want := sr.uvarint()
			sum := sr.sumCRC()
			tail := sr.bytes(4)
			if sr.err != nil {
				break
			}
			got := binary.BigEndian.Uint32(tail)
			if got != sum {
				return nil, corrupt("checksum mismatch")
			}
			if want != nodes {
				return nil, corrupt("%d node records, trailer says %d", nodes, want)
			}
			if err := t.link(recs); err != nil {
				return nil, err
			}
			return t, nil
		default:
			return nil, corrupt("unknown record tag %d", tag)
		}
	}
	return nil, corrupt("truncated: %v", sr.err)
}

// snapPathOK accepts the paths a tree can hold: "/" or absolute without a
// trailing '/' or an empty segment.
func snapPathOK(p string) bool {
	return p == RootPath || plausiblePath(p)
}

// nodeRec is a node read or built but not yet linked into the tree.
type nodeRec struct {
	path  string
	n     *Node
	depth int
}

// link names the nodes of recs and links them under their parents, then
// builds the indexes. A node whose parent is missing is dropped (and so are
// its descendants); of two records of one path, the later is kept (a path
// can appear twice if it was deleted and re-created while a snapshot was
// being written).
func (t *Tree) link(recs []nodeRec) error {
	// In order of depth, stable: every parent is settled before its
	// children are looked at, and of two records of one path the later
	// comes last.
	maxDepth := 0
	for i := range recs {
		d := 0
		if recs[i].path != RootPath {
			d = strings.Count(recs[i].path, "/")
		}
		recs[i].depth = d
		maxDepth = max(maxDepth, d)
	}
	starts := make([]int, maxDepth+2)
	for i := range recs {
		starts[recs[i].depth+1]++
	}
	for d := 1; d < len(starts); d++ {
		starts[d] += starts[d-1]
	}
	if starts[1] == 0 {
		return corrupt("no root node")
	}
	sorted := make([]*nodeRec, len(recs))
	for i := range recs {
		d := recs[i].depth
		sorted[starts[d]] = &recs[i]
		starts[d]++
	}

	var lastPP string
	var lastParent *Node
	for _, r := range sorted {
		n := r.n
		if r.depth == 0 {
			if t.root != nil {
				t.remove(RootPath, t.root)
			}
			t.root = n
			t.index(RootPath, n)
			continue
		}
		// The records at one depth are linked after those above, so the
		// cached parent is never one replaced since.
		if pp := ParentPath(r.path); lastParent == nil || pp != lastPP {
			lastPP, lastParent = pp, t.lookup(pp)
		}
		if lastParent == nil {
			t.acls.release(t.acls.entry(n.acl))
			t.recs.free(n)
			t.nodes.release(n)
			continue
		}
		name := BaseName(r.path)
		if old := lastParent.child(name); old != nil {
			lastParent.removeChild(old)
			t.remove(r.path, old)
		}
		lastParent.addChild(&t.nodes, n)
		t.index(r.path, n)
	}
	t.setupQuota()
	return nil
}

// snapReader is a buffered reader that keeps a CRC-32C of the bytes
// consumed so far (bufio would hide which bytes were consumed). Errors
// stick: after the first, reads return zero values.
type snapReader struct {
	r        io.Reader
	buf      []byte
	pos, end int
	crcPos   int // buf[crcPos:pos] is consumed but not yet in crc
	crc      uint32
	err      error
	ioErr    error
}

func (s *snapReader) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// sumCRC folds the consumed bytes into the CRC and returns it.
func (s *snapReader) sumCRC() uint32 {
	s.crc = crc32.Update(s.crc, crcTable, s.buf[s.crcPos:s.pos])
	s.crcPos = s.pos
	return s.crc
}

// fill makes at least one more byte available, or fails.
func (s *snapReader) fill() bool {
	if s.err != nil {
		return false
	}
	s.sumCRC()
	if s.pos > 0 {
		copy(s.buf, s.buf[s.pos:s.end])
		s.end -= s.pos
		s.pos, s.crcPos = 0, 0
	}
	for s.end == s.pos {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if n > 0 {
			return true
		}
		if err != nil {
			s.ioErr = err
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			s.fail(err)
			return false
		}
	}
	return true
}

func (s *snapReader) byte() byte {
	if s.pos == s.end && !s.fill() {
		return 0
	}
	c := s.buf[s.pos]
	s.pos++
	return c
}

func (s *snapReader) uvarint() uint64 {
	var x uint64
	var shift uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		c := s.byte()
		if s.err != nil {
			return 0
		}
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	s.fail(corrupt("varint overflows"))
	return 0
}

func (s *snapReader) varint() int64 {
	u := s.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (s *snapReader) int32() int32 {
	v := s.varint()
	if v < -1<<31 || v > 1<<31-1 {
		s.fail(corrupt("value %d overflows int32", v))
		return 0
	}
	return int32(v)
}

// bytes reads exactly n bytes into a new slice.
func (s *snapReader) bytes(n int) []byte { return s.appendBytes([]byte{}, n) }

// appendBytes reads exactly n bytes, appending them to dst (which must not
// be nil, so that zero bytes read are not null data). The slice grows as
// data arrives, so that a corrupt length cannot force a huge allocation.
func (s *snapReader) appendBytes(dst []byte, n int) []byte {
	if s.err != nil {
		return nil
	}
	if n > maxSnapField {
		s.fail(corrupt("field of %d bytes", n))
		return nil
	}
	if n <= s.end-s.pos {
		dst = append(dst, s.buf[s.pos:s.pos+n]...)
		s.pos += n
		return dst
	}
	const chunk = 1 << 20
	dst = slices.Grow(dst, min(n, chunk))
	for want := len(dst) + n; len(dst) < want; {
		if s.pos == s.end && !s.fill() {
			return nil
		}
		k := min(want-len(dst), s.end-s.pos)
		dst = append(dst, s.buf[s.pos:s.pos+k]...)
		s.pos += k
	}
	return dst
}

func (s *snapReader) string() string {
	n := s.uvarint()
	if s.err != nil {
		return ""
	}
	if n > maxSnapField {
		s.fail(corrupt("string of %d bytes", n))
		return ""
	}
	if int(n) <= s.end-s.pos {
		str := string(s.buf[s.pos : s.pos+int(n)])
		s.pos += int(n)
		return str
	}
	return string(s.bytes(int(n)))
}
