package txn

import (
	"encoding/binary"
	"fmt"

	"github.com/corral-db/corral/wire"
)

// CodecVersion is the first byte of every encoded transaction. A reader that
// meets another value refuses the record rather than guessing its layout.
const CodecVersion byte = 1

// The encoding is compact rather than jute-compatible: the log and the
// replication stream are ours, and varints roughly halve the size of a
// typical small create (zxids, times and versions are mostly small or
// share high bits poorly with fixed widths anyway).
//
//	version  byte (CodecVersion)
//	header   SessionID Cxid Zxid Time Type       zig-zag varints
//	txn      Type, then the fields Txn's doc lists for that type:
//	  string        uvarint length + bytes
//	  Data          uvarint (length+1), 0 = nil; then bytes
//	  ACL           uvarint (count+1), 0 = nil; then per entry Perms
//	                (varint), Scheme, ID
//	  Ephemeral     one byte, 0 or 1
//	  integers      zig-zag varints
//	  Ops           uvarint count, then each op as a txn (no nesting)
//	  Paths         uvarint (count+1), 0 = nil; then each a string
//
// OpReconfig is encoded like OpSetData (ZooKeeper applies it as a setData
// of /zookeeper/config). Fields a type does not use are not encoded, so
// they do not survive a round trip.

// Append appends the encoding of (h, t) to dst and returns the extended
// slice. A t whose Type (or, inside a multi, an op whose Type) is not one
// Txn documents encodes to a record Decode rejects.
func Append(dst []byte, h *Header, t *Txn) []byte {
	return appendRecord(dst, h, t, false)
}

// AppendShared is Append, and then t's Data (and its ops' Data) are the
// copies inside the returned record instead of the slices they were. For
// a record that is kept and never modified (a proposal): whoever keeps t
// (the tree, once it is applied) then holds no other copy of the data,
// and the slices t had, perhaps into a larger buffer such as a network
// frame, are not kept alive by it.
func AppendShared(dst []byte, h *Header, t *Txn) []byte {
	return appendRecord(dst, h, t, true)
}

func appendRecord(dst []byte, h *Header, t *Txn, share bool) []byte {
	dst = append(dst, CodecVersion)
	dst = binary.AppendVarint(dst, h.SessionID)
	dst = binary.AppendVarint(dst, int64(h.Cxid))
	dst = binary.AppendVarint(dst, h.Zxid)
	dst = binary.AppendVarint(dst, h.Time)
	dst = binary.AppendVarint(dst, int64(h.Type))
	return appendTxn(dst, t, false, share)
}

// SizeHint is a capacity for Append's output that fits t without the
// slice growing: the header's varints and the fixed fields at their
// widest, the variable ones by their lengths. Appending a 1 KiB setData
// into nil grew the slice four times, and those allocations and copies
// were a tenth of a 3-server leader's CPU under setData.
func SizeHint(t *Txn) int {
	n := 1 + 16*binary.MaxVarintLen64 + len(t.Path) + len(t.Data)
	for _, a := range t.ACL {
		n += 3*binary.MaxVarintLen64 + len(a.ID.Scheme) + len(a.ID.ID)
	}
	for _, p := range t.Paths {
		n += binary.MaxVarintLen64 + len(p)
	}
	for i := range t.Ops {
		n += SizeHint(&t.Ops[i])
	}
	return n
}

func appendTxn(dst []byte, t *Txn, nested, share bool) []byte {
	dst = binary.AppendVarint(dst, int64(t.Type))
	switch t.Type {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		dst = appendString(dst, t.Path)
		dst = appendData(dst, &t.Data, share)
		dst = appendACL(dst, t.ACL)
		if t.Ephemeral {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
		dst = binary.AppendVarint(dst, int64(t.ParentCVersion))
		if t.Type == wire.OpCreateTTL {
			dst = binary.AppendVarint(dst, t.TTL)
		}
	case wire.OpDelete, wire.OpDeleteContainer:
		dst = appendString(dst, t.Path)
	case wire.OpSetData, wire.OpReconfig:
		dst = appendString(dst, t.Path)
		dst = appendData(dst, &t.Data, share)
		dst = binary.AppendVarint(dst, int64(t.Version))
	case wire.OpSetACL:
		dst = appendString(dst, t.Path)
		dst = appendACL(dst, t.ACL)
		dst = binary.AppendVarint(dst, int64(t.Version))
	case wire.OpCheck:
		dst = appendString(dst, t.Path)
		dst = binary.AppendVarint(dst, int64(t.Version))
	case wire.OpMulti:
		if nested {
			// Not decodable; see Append's doc. Encode nothing more so the
			// reader fails on the type instead of misreading the body.
			return dst
		}
		dst = binary.AppendUvarint(dst, uint64(len(t.Ops)))
		for i := range t.Ops {
			dst = appendTxn(dst, &t.Ops[i], true, share)
		}
	case wire.OpCreateSession:
		dst = binary.AppendVarint(dst, int64(t.Timeout))
	case wire.OpCloseSession:
		dst = appendStrings(dst, t.Paths)
	case wire.OpError:
		dst = binary.AppendVarint(dst, int64(t.Err))
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendStrings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(ss))+1)
	for _, s := range ss {
		dst = appendString(dst, s)
	}
	return dst
}

// appendData appends *b; with share, *b becomes the copy in dst. (If dst
// grows later in the record, that copy is left in the old array: still
// the same bytes, only not shared. SizeHint makes that not happen.)
func appendData(dst []byte, b *[]byte, share bool) []byte {
	if *b == nil {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(*b))+1)
	start := len(dst)
	dst = append(dst, *b...)
	if share {
		*b = dst[start:len(dst):len(dst)]
	}
	return dst
}

func appendACL(dst []byte, acl []wire.ACL) []byte {
	if acl == nil {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(acl))+1)
	for i := range acl {
		dst = binary.AppendVarint(dst, int64(acl[i].Perms))
		dst = appendString(dst, acl[i].ID.Scheme)
		dst = appendString(dst, acl[i].ID.ID)
	}
	return dst
}

// Decode parses one record written by Append into h and t, overwriting
// them (t.Ops' backing array is reused). Nothing in t aliases b. Every
// error wraps wire.ErrMarshalling; trailing bytes are an error.
func Decode(b []byte, h *Header, t *Txn) error {
	return decode(b, h, t, false)
}

// DecodeShared is Decode, except that t's Data (and its ops' Data) are
// slices of b instead of copies: for a caller that only reads them, or
// replaces them, while b is unchanged (a proposal is never modified). A
// 64 KiB log append decoded so costs no 64 KiB allocation.
func DecodeShared(b []byte, h *Header, t *Txn) error {
	return decode(b, h, t, true)
}

func decode(b []byte, h *Header, t *Txn, share bool) error {
	d := decoder{b: b, share: share}
	if len(b) == 0 {
		return fmt.Errorf("%w: txn: empty record", wire.ErrMarshalling)
	}
	if v := b[0]; v != CodecVersion {
		return fmt.Errorf("%w: txn: unknown codec version %d", wire.ErrMarshalling, v)
	}
	d.off = 1
	h.SessionID = d.varint()
	h.Cxid = d.int32()
	h.Zxid = d.varint()
	h.Time = d.varint()
	h.Type = wire.Op(d.int32())
	d.txn(t, false)
	if d.err == nil && d.off != len(d.b) {
		d.fail("%d trailing bytes", len(d.b)-d.off)
	}
	return d.err
}

type decoder struct {
	b     []byte
	off   int
	err   error
	share bool // data() returns slices of b (DecodeShared)
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: txn: "+format, append([]any{wire.ErrMarshalling}, args...)...)
	}
}

func (d *decoder) remaining() int { return len(d.b) - d.off }

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint at offset %d", d.off)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad uvarint at offset %d", d.off)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) int32() int32 {
	v := d.varint()
	if v < -1<<31 || v > 1<<31-1 {
		d.fail("value %d overflows int32", v)
		return 0
	}
	return int32(v)
}

// length reads a length that must fit in what remains of the record, which
// bounds every allocation by the input size.
func (d *decoder) length(v uint64, what string) int {
	if d.err != nil {
		return 0
	}
	if v > uint64(d.remaining()) {
		d.fail("%s length %d exceeds remaining %d bytes", what, v, d.remaining())
		return 0
	}
	return int(v)
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.remaining() < 1 {
		d.fail("short record")
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *decoder) string() string {
	n := d.length(d.uvarint(), "string")
	if d.err != nil {
		return ""
	}
	s := string(d.b[d.off : d.off+n])
	d.off += n
	return s
}

func (d *decoder) data() []byte {
	v := d.uvarint()
	if d.err != nil || v == 0 {
		return nil
	}
	n := d.length(v-1, "data")
	if d.err != nil {
		return nil
	}
	if d.share {
		out := d.b[d.off : d.off+n : d.off+n]
		d.off += n
		return out
	}
	out := make([]byte, n)
	copy(out, d.b[d.off:])
	d.off += n
	return out
}

func (d *decoder) strings() []string {
	v := d.uvarint()
	if d.err != nil || v == 0 {
		return nil
	}
	// Each string takes at least its length byte.
	n := d.length(v-1, "string list")
	if d.err != nil {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.string()
	}
	return out
}

func (d *decoder) acl() []wire.ACL {
	v := d.uvarint()
	if d.err != nil || v == 0 {
		return nil
	}
	// Each entry takes at least three bytes (perms, two lengths).
	n := d.length(v-1, "acl")
	if d.err != nil {
		return nil
	}
	if n > d.remaining()/3 {
		d.fail("acl of %d entries exceeds remaining %d bytes", n, d.remaining())
		return nil
	}
	out := make([]wire.ACL, n)
	for i := range out {
		out[i].Perms = d.int32()
		out[i].ID.Scheme = d.string()
		out[i].ID.ID = d.string()
	}
	return out
}

func (d *decoder) txn(t *Txn, nested bool) {
	ops := t.Ops[:0]
	*t = Txn{}
	t.Type = wire.Op(d.int32())
	if d.err != nil {
		return
	}
	switch t.Type {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		t.Path = d.string()
		t.Data = d.data()
		t.ACL = d.acl()
		switch e := d.byte(); e {
		case 0:
		case 1:
			t.Ephemeral = true
		default:
			d.fail("bad ephemeral flag %d", e)
		}
		t.ParentCVersion = d.int32()
		if t.Type == wire.OpCreateTTL {
			t.TTL = d.varint()
		}
	case wire.OpDelete, wire.OpDeleteContainer:
		t.Path = d.string()
	case wire.OpSetData, wire.OpReconfig:
		t.Path = d.string()
		t.Data = d.data()
		t.Version = d.int32()
	case wire.OpSetACL:
		t.Path = d.string()
		t.ACL = d.acl()
		t.Version = d.int32()
	case wire.OpCheck:
		t.Path = d.string()
		t.Version = d.int32()
	case wire.OpMulti:
		if nested {
			d.fail("nested multi")
			return
		}
		n := d.length(d.uvarint(), "multi")
		if d.err != nil {
			return
		}
		if n == 0 {
			return // an empty multi decodes with nil Ops
		}
		for i := 0; i < n && d.err == nil; i++ {
			if i < cap(ops) {
				ops = ops[:i+1]
			} else {
				ops = append(ops, Txn{})
			}
			d.txn(&ops[i], true)
		}
		t.Ops = ops
	case wire.OpCreateSession:
		t.Timeout = d.int32()
	case wire.OpCloseSession:
		t.Paths = d.strings()
	case wire.OpError:
		t.Err = wire.Code(d.int32())
	default:
		d.fail("unknown txn type %d", t.Type)
	}
}
