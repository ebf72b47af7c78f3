package zkfmt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/adler32"
	"io"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

// recordEnd is the byte after every log record (Util.readTxnBytes's 'B').
const recordEnd = 'B'

// TxnDigest is the tree digest after a transaction, as 3.6+ logs it.
type TxnDigest struct {
	Version    int32
	TreeDigest int64
}

// LogReader reads the records of one transaction log file.
type LogReader struct {
	d    decoder
	DBID int64
}

// NewLogReader reads the file header. It fails if r is not a ZooKeeper
// transaction log.
func NewLogReader(r io.Reader) (*LogReader, error) {
	l := &LogReader{d: decoder{r: bufio.NewReaderSize(r, 256<<10)}}
	magic, version := l.d.int32(), l.d.int32()
	l.DBID = l.d.int64()
	if l.d.err != nil {
		return nil, fmt.Errorf("log header: %w", l.d.err)
	}
	if magic != LogMagic {
		return nil, corruptf("not a ZooKeeper transaction log (magic %#x, want %#x \"ZKLG\")", uint32(magic), uint32(LogMagic))
	}
	if version != FileVersion {
		return nil, corruptf("log format version %d, want %d", version, FileVersion)
	}
	return l, nil
}

// Next returns the bytes of the next record (TxnHeader, txn, digest; see
// DecodeTxn). It returns io.EOF where ZooKeeper stops reading the file: at
// its end, at a zero-length record (the preallocated tail), or at a record
// cut short by a crash. A record whose checksum does not match is an error
// wrapping ErrCorrupt, as it is to ZooKeeper.
func (l *LogReader) Next() ([]byte, error) {
	d := &l.d
	if d.err != nil {
		return nil, d.err
	}
	crc := d.int64()
	n := d.int32()
	if d.err != nil {
		return nil, io.EOF
	}
	if n <= 0 {
		// 0: the zero fill after the last record. -1 (null) reads as a
		// partial record to ZooKeeper too.
		d.err = io.EOF
		return nil, io.EOF
	}
	if n > MaxField {
		d.fail(corruptf("log record of %d bytes", n))
		return nil, d.err
	}
	b := d.bytesN(int(n))
	end := d.byte()
	if d.err != nil {
		if d.eof {
			d.err = io.EOF
		}
		return nil, d.err
	}
	if end != recordEnd {
		// "Last transaction was partial": ZooKeeper ends the file here.
		d.err = io.EOF
		return nil, io.EOF
	}
	if sum := adler32.Checksum(b); uint64(crc) != uint64(sum) {
		d.fail(corruptf("log record checksum mismatch (file says %#x, bytes give %#x)", uint64(crc), sum))
		return nil, d.err
	}
	return b, nil
}

// AppendLogHeader appends a transaction log's file header.
func AppendLogHeader(dst []byte, dbid int64) []byte {
	e := encoder{buf: dst}
	e.int32(LogMagic)
	e.int32(FileVersion)
	e.int64(dbid)
	return e.buf
}

// AppendLogRecord appends one record framing rec (FileTxnLog.append).
func AppendLogRecord(dst []byte, rec []byte) []byte {
	e := encoder{buf: dst}
	e.int64(int64(adler32.Checksum(rec)))
	e.buffer(rec)
	e.byte(recordEnd)
	return e.buf
}

// DecodeTxn decodes a log record's bytes into corral's header and
// transaction, which carry ZooKeeper's fields. The digest is nil if the
// record has none. A ZooKeeper closeSession without its CloseSessionTxn
// (zookeeper.closeSessionTxn.enabled=false) decodes with nil Paths; the
// paths are in ZooKeeper's order, not sorted.
func DecodeTxn(b []byte, h *txn.Header, t *txn.Txn) (*TxnDigest, error) {
	d := &decoder{r: bytes.NewReader(b)}
	h.SessionID = d.int64()
	h.Cxid = d.int32()
	h.Zxid = d.int64()
	h.Time = d.int64()
	h.Type = wire.Op(d.int32())
	if d.err != nil {
		return nil, fmt.Errorf("txn header: %w", d.err)
	}
	*t = txn.Txn{Type: h.Type}
	if h.Type == wire.OpCloseSession {
		// The body is optional (older servers, or the txn disabled).
		if !optional(d, func() { t.Paths = d.strs() }) && d.err != nil {
			return nil, d.err
		}
	} else if err := decodeBody(d, h.Type, t, false); err != nil {
		return nil, fmt.Errorf("txn %#x (%s): %w", h.Zxid, opName(h.Type), err)
	}
	var dg TxnDigest
	if optional(d, func() {
		dg.Version = d.int32()
		dg.TreeDigest = d.int64()
	}) {
		return &dg, nil
	}
	return nil, d.err
}

func opName(op wire.Op) string { return fmt.Sprintf("type %d", int32(op)) }

var errUnsupported = errors.New("unsupported transaction type")

// decodeBody decodes the record of type op into t. nested: inside a
// MultiTxn, where ZooKeeper allows only the single-node operations.
func decodeBody(d *decoder, op wire.Op, t *txn.Txn, nested bool) error {
	t.Type = op
	switch op {
	case wire.OpCreate, wire.OpCreate2:
		t.Path = d.str()
		t.Data = d.buffer()
		t.ACL = d.acls()
		t.Ephemeral = d.bool()
		t.ParentCVersion = d.int32()
	case wire.OpCreateTTL:
		t.Path = d.str()
		t.Data = d.buffer()
		t.ACL = d.acls()
		t.ParentCVersion = d.int32()
		t.TTL = d.int64()
	case wire.OpCreateContainer:
		t.Path = d.str()
		t.Data = d.buffer()
		t.ACL = d.acls()
		t.ParentCVersion = d.int32()
	case wire.OpDelete, wire.OpDeleteContainer:
		t.Path = d.str()
	case wire.OpSetData, wire.OpReconfig:
		t.Path = d.str()
		t.Data = d.buffer()
		t.Version = d.int32()
	case wire.OpCheck:
		t.Path = d.str()
		t.Version = d.int32()
	case wire.OpError:
		t.Err = wire.Code(d.int32())
	case wire.OpSetACL, wire.OpCreateSession, wire.OpMulti:
		if nested {
			return fmt.Errorf("%w %d inside a multi", errUnsupported, int32(op))
		}
		switch op {
		case wire.OpSetACL:
			t.Path = d.str()
			t.ACL = d.acls()
			t.Version = d.int32()
		case wire.OpCreateSession:
			t.Timeout = d.int32()
		case wire.OpMulti:
			n := d.length("multi")
			if n < 0 {
				return corruptf("null multi")
			}
			for i := 0; i < n && d.err == nil; i++ {
				subOp := wire.Op(d.int32())
				body := d.buffer()
				if d.err != nil {
					break
				}
				var sub txn.Txn
				sd := &decoder{r: bytes.NewReader(body)}
				if err := decodeBody(sd, subOp, &sub, true); err != nil {
					return fmt.Errorf("multi op %d: %w", i, err)
				}
				t.Ops = append(t.Ops, sub)
			}
		}
	default:
		return fmt.Errorf("%w %d", errUnsupported, int32(op))
	}
	return d.err
}

func (d *decoder) strs() []string {
	n := d.length("string vector")
	if d.err != nil || n <= 0 {
		// Empty and null both read as nil: to a closeSession they mean
		// the same (no paths named).
		return nil
	}
	out := make([]string, 0, min(n, 64))
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.str())
	}
	return out
}

// AppendTxn encodes h and t as ZooKeeper logs them (Util.marshallTxnEntry),
// with dg after them if not nil.
func AppendTxn(dst []byte, h *txn.Header, t *txn.Txn, dg *TxnDigest) ([]byte, error) {
	e := &encoder{buf: dst}
	e.int64(h.SessionID)
	e.int32(h.Cxid)
	e.int64(h.Zxid)
	e.int64(h.Time)
	e.int32(int32(h.Type))
	if h.Type == wire.OpCloseSession {
		e.int32(int32(len(t.Paths)))
		for _, p := range t.Paths {
			e.string(p)
		}
	} else if err := encodeBody(e, h.Type, t, false); err != nil {
		return dst, err
	}
	if dg != nil {
		e.int32(dg.Version)
		e.int64(dg.TreeDigest)
	}
	return e.buf, nil
}

func encodeBody(e *encoder, op wire.Op, t *txn.Txn, nested bool) error {
	switch op {
	case wire.OpCreate, wire.OpCreate2:
		e.string(t.Path)
		e.buffer(t.Data)
		e.acls(t.ACL)
		e.bool(t.Ephemeral)
		e.int32(t.ParentCVersion)
	case wire.OpCreateTTL:
		e.string(t.Path)
		e.buffer(t.Data)
		e.acls(t.ACL)
		e.int32(t.ParentCVersion)
		e.int64(t.TTL)
	case wire.OpCreateContainer:
		e.string(t.Path)
		e.buffer(t.Data)
		e.acls(t.ACL)
		e.int32(t.ParentCVersion)
	case wire.OpDelete, wire.OpDeleteContainer:
		e.string(t.Path)
	case wire.OpSetData, wire.OpReconfig:
		e.string(t.Path)
		e.buffer(t.Data)
		e.int32(t.Version)
	case wire.OpCheck:
		e.string(t.Path)
		e.int32(t.Version)
	case wire.OpError:
		e.int32(int32(t.Err))
	case wire.OpSetACL:
		if nested {
			return fmt.Errorf("%w %d inside a multi", errUnsupported, int32(op))
		}
		e.string(t.Path)
		e.acls(t.ACL)
		e.int32(t.Version)
	case wire.OpCreateSession:
		if nested {
			return fmt.Errorf("%w %d inside a multi", errUnsupported, int32(op))
		}
		e.int32(t.Timeout)
	case wire.OpMulti:
		if nested {
			return fmt.Errorf("%w %d inside a multi", errUnsupported, int32(op))
		}
		e.int32(int32(len(t.Ops)))
		for i := range t.Ops {
			sub := &t.Ops[i]
			var se encoder
			if err := encodeBody(&se, sub.Type, sub, true); err != nil {
				return err
			}
			e.int32(int32(sub.Type))
			if se.buf == nil {
				se.buf = []byte{}
			}
			e.buffer(se.buf)
		}
	default:
		return fmt.Errorf("%w %d", errUnsupported, int32(op))
	}
	return nil
}
