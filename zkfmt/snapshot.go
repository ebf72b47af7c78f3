package zkfmt

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"hash"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-db/corral/wire"
)

// File magics (the four ASCII bytes read as a big-endian int32) and the
// format version ZooKeeper 3.9 writes.
const (
	SnapMagic   int32 = 'Z'<<24 | 'K'<<16 | 'S'<<8 | 'N'
	LogMagic    int32 = 'Z'<<24 | 'K'<<16 | 'L'<<8 | 'G'
	FileVersion int32 = 2
)

// DigestVersion is the version of ZooKeeper 3.9's DigestCalculator.
const DigestVersion = 2

// OpenUnsafeACLRef is the ACL reference of OPEN_ACL_UNSAFE that is not in
// the ACL cache (ReferenceCountedACLCache.OPEN_UNSAFE_ACL_ID).
const OpenUnsafeACLRef int64 = -1

// StatPersisted is a node's stored stat (zookeeper.jute's StatPersisted).
// Cversion is the stored child-create counter, not what clients see.
type StatPersisted struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	Pzxid          int64
}

// Node is one znode as a snapshot stores it. The root's path is "".
type Node struct {
	Path string
	Data []byte // nil for a node created with null data
	ACL  int64  // a reference into Snapshot.ACLs, or OpenUnsafeACLRef
	Stat StatPersisted
}

// Session is one open session and its negotiated timeout in ms.
type Session struct {
	ID      int64
	Timeout int32
}

// Digest is the tree digest a snapshot records for a zxid (DataTree's
// ZxidDigest). Zxid 0 means "no digest" to ZooKeeper.
type Digest struct {
	Zxid    int64
	Version int32
	Value   int64
}

// Snapshot is the content of one ZooKeeper snapshot file.
type Snapshot struct {
	DBID     int64
	Sessions []Session
	ACLs     map[int64][]wire.ACL
	// Nodes in file order: every node after its parent, the root first.
	Nodes []Node
	// Digest is nil if the file ends before the digest section.
	Digest *Digest
	// LastZxid is set (HasLastZxid) if the file records the last processed
	// zxid; otherwise the file name's zxid is the snapshot's.
	LastZxid    int64
	HasLastZxid bool
}

// Compression is how a snapshot file is compressed, from its name.
type Compression int

const (
	CompressionNone Compression = iota
	CompressionGzip
	CompressionSnappy
)

// ParseSnapshotName parses snapshot.<hex zxid>[.gz|.snappy] the way
// ZooKeeper's Util.getZxidFromName and SnapStream.getStreamMode do.
func ParseSnapshotName(name string) (zxid int64, c Compression, ok bool) {
	zxid, ext, ok := parseName(name, "snapshot")
	if !ok {
		return 0, 0, false
	}
	switch ext {
	case "":
		return zxid, CompressionNone, true
	case "gz":
		return zxid, CompressionGzip, true
	case "snappy":
		return zxid, CompressionSnappy, true
	}
	// ZooKeeper reads an unknown extension as uncompressed.
	return zxid, CompressionNone, true
}

// ParseLogName parses log.<hex zxid>.
func ParseLogName(name string) (zxid int64, ok bool) {
	zxid, ext, ok := parseName(name, "log")
	return zxid, ok && ext == ""
}

func parseName(name, prefix string) (int64, string, bool) {
	parts := strings.Split(name, ".")
	if len(parts) < 2 || len(parts) > 3 || parts[0] != prefix {
		return 0, "", false
	}
	v, err := strconv.ParseUint(parts[1], 16, 64)
	if err != nil || int64(v) < 0 {
		return 0, "", false
	}
	ext := ""
	if len(parts) == 3 {
		ext = parts[2]
	}
	return int64(v), ext, true
}

// SnapshotName is the name ZooKeeper gives the uncompressed snapshot of
// zxid.
func SnapshotName(zxid int64) string { return "snapshot." + strconv.FormatInt(zxid, 16) }

// Decompress wraps r, the bytes of a snapshot file, in the decompressor its
// Compression needs. Snappy is refused: its framing (snappy-java's stream
// format) is not implemented.
func Decompress(r io.Reader, c Compression) (io.Reader, error) {
	switch c {
	case CompressionNone:
		return r, nil
	case CompressionGzip:
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
		}
		return z, nil
	case CompressionSnappy:
		return nil, fmt.Errorf("zkfmt: snappy-compressed snapshots (zookeeper.snapshot.compression.method=snappy) are not supported; " +
			"restart ZooKeeper with the method unset or gz so that it writes a new snapshot, then import that")
	}
	return nil, fmt.Errorf("zkfmt: unknown compression %d", c)
}

// DecodeSnapshot reads an uncompressed snapshot. It checks the magic and
// every Adler-32 seal, and that each node's ACL reference is in the cache;
// the tree's shape (parents before children) is the caller's to check.
func DecodeSnapshot(r io.Reader) (*Snapshot, error) {
	d := &decoder{r: bufio.NewReaderSize(r, 256<<10), sum: newAdler()}
	s := &Snapshot{ACLs: make(map[int64][]wire.ACL)}
	magic, version := d.int32(), d.int32()
	s.DBID = d.int64()
	if d.err != nil {
		return nil, fmt.Errorf("snapshot header: %w", d.err)
	}
	if magic != SnapMagic {
		return nil, corruptf("not a ZooKeeper snapshot (magic %#x, want %#x \"ZKSN\")", uint32(magic), uint32(SnapMagic))
	}
	if version != FileVersion {
		return nil, corruptf("snapshot format version %d, want %d", version, FileVersion)
	}

	n := d.int32()
	if n < 0 {
		d.fail(corruptf("negative session count %d", n))
	}
	for i := int32(0); i < n && d.err == nil; i++ {
		id := d.int64()
		to := d.int32()
		if d.err == nil {
			s.Sessions = append(s.Sessions, Session{ID: id, Timeout: to})
		}
	}

	n = d.int32()
	if n < 0 {
		d.fail(corruptf("negative ACL cache size %d", n))
	}
	for i := int32(0); i < n && d.err == nil; i++ {
		ref := d.int64()
		k := d.length("acl vector")
		if k < 0 {
			// ReferenceCountedACLCache.deserialize refuses a null vector.
			d.fail(corruptf("ACL %d: null list", ref))
			break
		}
		list := make([]wire.ACL, 0, min(k, 64))
		for j := 0; j < k && d.err == nil; j++ {
			list = append(list, d.acl())
		}
		if d.err != nil {
			break
		}
		if _, dup := s.ACLs[ref]; dup {
			return nil, corruptf("ACL %d defined twice", ref)
		}
		s.ACLs[ref] = list
	}

	for d.err == nil {
		path, null := d.string()
		if d.err != nil {
			break
		}
		if null {
			return nil, corruptf("null node path")
		}
		if path == "/" {
			break
		}
		var nd Node
		nd.Path = path
		nd.Data = d.buffer()
		nd.ACL = d.int64()
		readStat(d, &nd.Stat)
		if d.err != nil {
			break
		}
		if _, ok := s.ACLs[nd.ACL]; !ok && nd.ACL != OpenUnsafeACLRef {
			return nil, corruptf("node %q uses ACL %d, which is not in the cache", path, nd.ACL)
		}
		s.Nodes = append(s.Nodes, nd)
	}
	if d.err != nil {
		return nil, fmt.Errorf("snapshot body: %w", d.err)
	}
	if err := checkSeal(d); err != nil {
		return nil, err
	}

	// Optional sections: a file that ends before one was written by an
	// older server (ZooKeeper reads it the same way).
	var dg Digest
	if optional(d, func() {
		dg.Zxid = d.int64()
		dg.Version = d.int32()
		if dg.Version < 2 {
			hex, _ := d.string()
			if d.err == nil {
				v, err := strconv.ParseUint(hex, 16, 64)
				if err != nil {
					d.fail(corruptf("digest %q is not hex", hex))
				}
				dg.Value = int64(v)
			}
		} else {
			dg.Value = d.int64()
		}
	}) {
		s.Digest = &dg
		if err := checkSeal(d); err != nil {
			return nil, err
		}
		if optional(d, func() { s.LastZxid = d.int64() }) {
			s.HasLastZxid = true
			if err := checkSeal(d); err != nil {
				return nil, err
			}
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return s, nil
}

// optional runs read; if the input ends during it, it clears the error and
// reports false.
func optional(d *decoder, read func()) bool {
	if d.err != nil {
		return false
	}
	read()
	if d.err != nil && d.eof {
		d.err = nil
		return false
	}
	return d.err == nil
}

// checkSeal reads a seal (SnapStream.sealStream) and compares it with the
// checksum of everything before it.
func checkSeal(d *decoder) error {
	want := d.sum.Sum32()
	got := d.int64()
	path := d.str()
	if d.err != nil {
		return fmt.Errorf("snapshot seal: %w", d.err)
	}
	if uint64(got) != uint64(want) {
		return corruptf("snapshot checksum mismatch (file says %#x, bytes give %#x)", uint64(got), want)
	}
	if path != "/" {
		return corruptf("snapshot seal ends with %q, want \"/\"", path)
	}
	return nil
}

func readStat(d *decoder, s *StatPersisted) {
	s.Czxid = d.int64()
	s.Mzxid = d.int64()
	s.Ctime = d.int64()
	s.Mtime = d.int64()
	s.Version = d.int32()
	s.Cversion = d.int32()
	s.Aversion = d.int32()
	s.EphemeralOwner = d.int64()
	s.Pzxid = d.int64()
}

func writeStat(e *encoder, s *StatPersisted) {
	e.int64(s.Czxid)
	e.int64(s.Mzxid)
	e.int64(s.Ctime)
	e.int64(s.Mtime)
	e.int32(s.Version)
	e.int32(s.Cversion)
	e.int32(s.Aversion)
	e.int64(s.EphemeralOwner)
	e.int64(s.Pzxid)
}

// snapWriter writes encoded chunks to w, keeping the Adler-32 of
// everything written for the seals.
type snapWriter struct {
	w   *bufio.Writer
	sum hash.Hash32
	e   encoder
	err error
}

func (sw *snapWriter) flush() {
	if sw.err == nil && len(sw.e.buf) > 0 {
		sw.sum.Write(sw.e.buf)
		_, sw.err = sw.w.Write(sw.e.buf)
	}
	sw.e.buf = sw.e.buf[:0]
}

func (sw *snapWriter) seal() {
	sw.flush()
	sw.e.int64(int64(sw.sum.Sum32()))
	sw.e.string("/")
	sw.flush()
}

// EncodeSnapshot writes s as ZooKeeper 3.9 writes a snapshot, uncompressed.
// The ACL cache is written in ascending reference order and the nodes in
// the order given; the digest and lastZxid sections are written when set
// (ZooKeeper writes both by default).
func EncodeSnapshot(w io.Writer, s *Snapshot) error {
	sw := &snapWriter{w: bufio.NewWriterSize(w, 256<<10), sum: newAdler()}
	e := &sw.e
	e.int32(SnapMagic)
	e.int32(FileVersion)
	e.int64(s.DBID)
	e.int32(int32(len(s.Sessions)))
	for _, ss := range s.Sessions {
		e.int64(ss.ID)
		e.int32(ss.Timeout)
	}
	refs := make([]int64, 0, len(s.ACLs))
	for ref := range s.ACLs {
		refs = append(refs, ref)
	}
	slices.Sort(refs)
	e.int32(int32(len(refs)))
	for _, ref := range refs {
		e.int64(ref)
		list := s.ACLs[ref]
		if list == nil {
			list = []wire.ACL{}
		}
		e.acls(list)
	}
	sw.flush()
	for i := range s.Nodes {
		nd := &s.Nodes[i]
		if nd.Path == "/" {
			return fmt.Errorf("zkfmt: node path \"/\" (the root's path is \"\")")
		}
		e.string(nd.Path)
		e.buffer(nd.Data)
		e.int64(nd.ACL)
		writeStat(e, &nd.Stat)
		if len(e.buf) >= 64<<10 {
			sw.flush()
		}
	}
	e.string("/")
	sw.seal()
	if s.Digest != nil {
		e.int64(s.Digest.Zxid)
		v := s.Digest.Version
		if v < 2 {
			return fmt.Errorf("zkfmt: digest version %d cannot be written", v)
		}
		e.int32(v)
		e.int64(s.Digest.Value)
		sw.seal()
		if s.HasLastZxid {
			e.int64(s.LastZxid)
			sw.seal()
		}
	}
	if sw.err != nil {
		return sw.err
	}
	return sw.w.Flush()
}
