package server

import (
	"encoding/binary"
	"strings"

	"github.com/corral-db/corral/datatree"
)

// Logs' entries are packed in the tree (datatree/pack.go): an entry that
// nobody changed after its append costs about a dozen bytes of its log's
// run instead of a node, and its 24-byte data reference shrinks to its
// length and CRC, since the reference's zxid is the entry's czxid
// (docs/design/rlog.md, "Memory per append"). Clients see nothing of it.

// refCodec is the tree's EntryCodec for entries whose data is a reference
// to this member's data log (entryRef).
type refCodec struct{}

// Pack keeps a reference's length and CRC; a reference naming another
// zxid than the entry's own (none is made so) stays whole.
func (refCodec) Pack(dst []byte, czxid int64, data []byte) ([]byte, bool) {
	r, ok := parseRef(data)
	if !ok || r.zxid != czxid {
		return dst, false
	}
	dst = binary.AppendUvarint(dst, uint64(r.length))
	return binary.BigEndian.AppendUint32(dst, r.crc), true
}

// Unpack rebuilds the reference. packed is what Pack wrote: the tree
// never hands it anything else.
func (refCodec) Unpack(czxid int64, packed []byte) []byte {
	n, k := binary.Uvarint(packed)
	r := entryRef{zxid: czxid, length: uint32(n)}
	if k > 0 && len(packed) >= k+4 {
		r.crc = binary.BigEndian.Uint32(packed[k:])
	}
	return r.encode()
}

// packLogs makes t pack the entries of the logs under the configured log
// root, those it holds included.
func packLogs(o *Options, t *datatree.Tree) {
	if o.RlogRoot != "" {
		t.SetPackRoot(strings.TrimSuffix(o.RlogRoot, "/"), refCodec{})
	}
}
