package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// Logs in the znode tree (docs/design/rlog.md, "Logs in the ensemble").
//
// With Options.RlogRoot set, every znode directly under the root is a
// log, and a persistent create of a child of a log (an entry: a
// sequential create names it by the log's next sequence number) whose
// data is larger than rlogInlineMax is an append: its payload goes to
// this member's data log, and the tree and the WAL keep a 24-byte
// reference (entryRef) instead of the bytes. The zab proposal carries the
// payload, so every member writes it to its own data log before it logs
// and acknowledges the entry; the WAL record holds the reference only.
// getData of an entry reads the payload back from the local data log.

// rlogInlineMax is the largest entry payload kept in the tree itself.
const rlogInlineMax = 1024

// refMagic starts an entry's reference. Under a log, prep refuses client
// data that starts with it, so a reference in the tree is never a
// client's bytes.
var refMagic = [8]byte{0, 'z', 'k', 'r', 'l', 'o', 'g', 1}

const refSize = 24

// entryRef names an entry's payload by its logical identity: the zxid of
// the create that appended it, its length and CRC32C. Where the record
// sits in a data log is each member's own (logData.pos).
type entryRef struct {
	zxid   int64
	length uint32
	crc    uint32
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (r entryRef) encode() []byte {
	b := make([]byte, refSize)
	copy(b, refMagic[:])
	binary.BigEndian.PutUint64(b[8:], uint64(r.zxid))
	binary.BigEndian.PutUint32(b[16:], r.length)
	binary.BigEndian.PutUint32(b[20:], r.crc)
	return b
}

func parseRef(b []byte) (entryRef, bool) {
	if len(b) != refSize || !bytes.HasPrefix(b, refMagic[:]) {
		return entryRef{}, false
	}
	return entryRef{
		zxid:   int64(binary.BigEndian.Uint64(b[8:])),
		length: binary.BigEndian.Uint32(b[16:]),
		crc:    binary.BigEndian.Uint32(b[20:]),
	}, true
}

// logData is a member's data log and the index from an entry's zxid to
// its record. Records are keyed by zxid because zab never gives two
// different proposals one zxid: a record left by a crash (written, its
// WAL record lost) either comes back with the same bytes or is never
// referenced.
type logData struct {
	root string
	// dl is the data log; nil with durability=diskless, where every
	// entry stays inline in the tree (newInlineLogs).
	dl  *datalog.Log
	log *slog.Logger
	// coupled: dl has no flusher; syncWritten syncs it itself
	// (rlog.groupCommit=coupled).
	coupled bool

	// mu guards idx and dead and serializes store, so an entry gets one
	// record whether the log goroutine or apply writes it first.
	mu sync.Mutex
	// idx maps each entry's zxid to its record, in a few bytes per
	// record (recIndex).
	idx recIndex
	// dead are the records of deleted (or overwritten) entries, by the
	// zxid of the transaction that removed them; they are released once
	// the oldest snapshot kept (autopurge) is at or after that zxid
	// (releaseUpTo): then no restart from a kept snapshot replays their
	// create, and no DIFF sends it (the driver's log starts later).
	dead deadQueue

	// onCompactStep, if set (tests), runs between a compaction's steps
	// (rlogcompact.go); an error stops the compaction there.
	onCompactStep func(step string) error
}

// rlogMaxInflight bounds a member's payload bytes written but not yet
// synced (datalog.Options.MaxInflight).
const rlogMaxInflight = 64 << 20

// openLogData opens the data log under dataLogDir and indexes its records.
func openLogData(o *Options) (*logData, error) {
	dir := filepath.Join(o.DataLogDir, "version-2", "rlog")
	dopts := datalog.Options{
		Logger:        o.Logger,
		SegmentSize:   o.RlogSegmentSize,
		MaxRecordSize: max(o.MaxBuffer, 1<<20),
		NoFlusher:     o.RlogCoupled,
		MaxInflight:   rlogMaxInflight,
	}
	if o.rlogLazySync {
		dopts.SyncBytes, dopts.SyncDelay = rlogMaxInflight, time.Hour
	}
	dl, err := datalog.Open(o.FS, dir, dopts)
	if err != nil {
		return nil, fmt.Errorf("open the rlog data log: %w", err)
	}
	d := &logData{root: strings.TrimSuffix(o.RlogRoot, "/"), dl: dl, log: o.Logger, coupled: o.RlogCoupled}
	if err := dl.Scan(func(m datalog.Meta, n int, p datalog.Pos) error {
		if old, ok := d.idx.release(m.Zxid); ok {
			// The same proposal written twice (a crash between its
			// payload and its WAL record, then the leader sent it again):
			// the later copy serves.
			if err := dl.Release(old.pos.Seg, datalog.RecordSize(old.n)); err != nil {
				return err
			}
		}
		d.idx.add(m.Zxid, p, n)
		return nil
	}); err != nil {
		dl.Close()
		return nil, fmt.Errorf("index the rlog data log: %w", err)
	}
	d.log.Info("opened the rlog data log", "root", d.root, "records", d.idx.live)
	d.idx.compact()
	return d, nil
}

// newInlineLogs is the logs of a diskless member: no data log, every
// entry's payload inline in the tree, so the tree's snapshots and
// checkpoints carry the logs as they carry any znode, and diskless's
// promise for the tree holds for them (docs/design/rlog.md, "Durability
// modes"). The log paths and the control records' rules are the same.
func newInlineLogs(o *Options) *logData {
	return &logData{root: strings.TrimSuffix(o.RlogRoot, "/"), log: o.Logger}
}

// entryPath says whether path names an entry: root/<log>/<entry>.
func (d *logData) entryPath(path string) bool {
	rest, ok := strings.CutPrefix(path, d.root+"/")
	if !ok {
		return false
	}
	log, entry, ok := strings.Cut(rest, "/")
	return ok && log != "" && entry != "" && !strings.Contains(entry, "/")
}

// isAppend says whether a transaction is an append whose payload goes to
// the data log. Every member decides the same from the transaction alone.
func (d *logData) isAppend(tx *txn.Txn) bool {
	return d.dl != nil && (tx.Type == wire.OpCreate || tx.Type == wire.OpCreate2) && !tx.Ephemeral &&
		len(tx.Data) > rlogInlineMax && d.entryPath(tx.Path)
}

// checkClientData refuses client data under a log that could be taken
// for a reference.
func (d *logData) checkClientData(path string, data []byte) error {
	if d != nil && bytes.HasPrefix(data, refMagic[:]) && d.entryPath(path) {
		return wire.CodeBadArguments
	}
	return nil
}

// store writes an append's payload unless this member has it already,
// and returns its reference. It does not wait for the record to be
// synced (syncWritten).
func (d *logData) store(zxid int64, payload []byte) (entryRef, error) {
	ref := entryRef{zxid: zxid, length: uint32(len(payload)), crc: crc32.Checksum(payload, castagnoli)}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.idx.find(zxid); ok {
		return ref, nil
	}
	if d.coupled && d.dl.Inflight()+datalog.RecordSize(len(payload)) > rlogMaxInflight {
		// No flusher frees room: a group larger than the bound syncs
		// its payloads so far here rather than wait forever in Append.
		if _, err := d.dl.Flush(); err != nil {
			return ref, fmt.Errorf("rlog data log: %w", err)
		}
	}
	// The reference's checksum is the payload's CRC-32C: the data log
	// derives its record's from it rather than read the payload again.
	p, _, err := d.dl.AppendSummed(context.Background(), datalog.Meta{Zxid: zxid}, payload, ref.crc)
	if err != nil {
		return ref, fmt.Errorf("rlog data log: append of %s: %w", hex(zxid), err)
	}
	d.idx.add(zxid, p, len(payload))
	return ref, nil
}

// errNoPayload: this member's data log lacks an entry's payload.
var errNoPayload = errors.New("rlog: payload not in this member's data log")

// read returns the payload a reference names, checked against it.
func (d *logData) read(ref entryRef) ([]byte, error) {
	m, b, p, err := d.readRecord(ref.zxid)
	if err != nil {
		return nil, err
	}
	if m.Zxid != ref.zxid || uint32(len(b)) != ref.length || crc32.Checksum(b, castagnoli) != ref.crc {
		return nil, fmt.Errorf("rlog: the record at %s is not the payload of %s", p, hex(ref.zxid))
	}
	return b, nil
}

// syncWritten returns once every record written so far is synced.
// Decoupled, the flusher syncs them and this waits for it; coupled,
// this syncs them, so a group's data sync and its commit-record sync
// (walStore.Sync) are one step.
func (d *logData) syncWritten() error {
	if d.dl == nil {
		return nil
	}
	if d.coupled {
		_, err := d.dl.Flush()
		return err
	}
	return d.dl.WaitSynced(context.Background(), d.dl.Written())
}

// appendOp returns the transaction's append whose payload goes to the
// data log: a create itself, or in a multi its first create that
// qualifies. A multi's ops share one zxid and a record is keyed by zxid,
// so a multi appends at most one payload to the data log; any further
// large creates in it stay inline. Nil if there is none.
func (d *logData) appendOp(tx *txn.Txn) *txn.Txn {
	switch tx.Type {
	case wire.OpCreate, wire.OpCreate2:
		if d.isAppend(tx) {
			return tx
		}
	case wire.OpMulti:
		for i := range tx.Ops {
			if d.isAppend(&tx.Ops[i]) {
				return &tx.Ops[i]
			}
		}
	}
	return nil
}

// refOp is appendOp's counterpart in the WAL form: the create, alone or
// first in a multi, whose data is a reference. Client data under a log
// never looks like one (checkClientData), and the creates of a multi
// before its append are inline, so this is the op appendOp chose.
func (d *logData) refOp(tx *txn.Txn) (*txn.Txn, entryRef) {
	isRef := func(t *txn.Txn) (entryRef, bool) {
		if (t.Type != wire.OpCreate && t.Type != wire.OpCreate2) || !d.entryPath(t.Path) {
			return entryRef{}, false
		}
		return parseRef(t.Data)
	}
	switch tx.Type {
	case wire.OpCreate, wire.OpCreate2:
		if ref, ok := isRef(tx); ok {
			return tx, ref
		}
	case wire.OpMulti:
		for i := range tx.Ops {
			if ref, ok := isRef(&tx.Ops[i]); ok {
				return &tx.Ops[i], ref
			}
		}
	}
	return nil, entryRef{}
}

// toWAL turns a proposal (payload inside) into its WAL record (reference
// inside), writing the payload to the data log; other entries pass.
func (d *logData) toWAL(e zab.Entry) ([]byte, error) {
	b, ok, err := d.withRef(e, d.store)
	if !ok {
		return e.Data, err
	}
	return b, err
}

// walWeight is the size of e's WAL record (toWAL): the proposal's, less
// its append's payload, plus the reference in its place (within the few
// bytes of the length's varint).
func (d *logData) walWeight(e zab.Entry) int64 {
	n := int64(len(e.Data))
	if len(e.Data) <= rlogInlineMax {
		return n
	}
	var h txn.Header
	var tx txn.Txn
	if err := txn.DecodeShared(e.Data, &h, &tx); err != nil {
		return n
	}
	if op := d.appendOp(&tx); op != nil {
		return n - int64(len(op.Data)) + refSize
	}
	return n
}

// slim returns the WAL form of a proposal whose payload this member's
// data log holds (the driver's in-memory log keeps it, replica.Slimmer),
// without writing anything; ok false for other entries. walStore.Slim
// uses it only for entries whose WAL position it does not know (those
// recovered from the WAL at start-up), so it checksums the payload again
// rather than keep every reference store computed.
func (d *logData) slim(e zab.Entry) ([]byte, bool) {
	b, ok, err := d.withRef(e, func(zxid int64, payload []byte) (entryRef, error) {
		d.mu.Lock()
		_, held := d.idx.find(zxid)
		d.mu.Unlock()
		if !held {
			return entryRef{}, errNoPayload
		}
		return entryRef{zxid: zxid, length: uint32(len(payload)), crc: crc32.Checksum(payload, castagnoli)}, nil
	})
	return b, ok && err == nil
}

// withRef re-encodes a proposal with ref's answer in place of its
// append's payload; ok false (and e's data) for an entry without one.
func (d *logData) withRef(e zab.Entry, ref func(zxid int64, payload []byte) (entryRef, error)) ([]byte, bool, error) {
	if len(e.Data) <= rlogInlineMax {
		return nil, false, nil
	}
	var h txn.Header
	var tx txn.Txn
	// The payload is only read (ref) and then replaced: no copy.
	if err := txn.DecodeShared(e.Data, &h, &tx); err != nil {
		return nil, false, nil // the tree's apply reports what does not decode
	}
	op := d.appendOp(&tx)
	if op == nil {
		return nil, false, nil
	}
	r, err := ref(int64(e.Zxid), op.Data)
	if err != nil {
		return nil, true, err
	}
	op.Data = r.encode()
	return txn.Append(nil, &h, &tx), true, nil
}

// toProposal turns a WAL record back into the proposal (payload inside)
// that the driver's log holds and sends to learners (DIFF).
func (d *logData) toProposal(data []byte) ([]byte, error) {
	var h txn.Header
	var tx txn.Txn
	if err := txn.DecodeShared(data, &h, &tx); err != nil { // re-encoded below
		return data, nil
	}
	op, ref := d.refOp(&tx)
	if op == nil {
		return data, nil
	}
	b, err := d.read(ref)
	if err != nil {
		return nil, err
	}
	op.Data = b
	return txn.Append(nil, &h, &tx), nil
}

// forApply replaces an append's payload with its reference before the
// tree applies it, writing the payload first if this member's log
// goroutine has not yet (a leader may apply before its own log has the
// entry).
func (d *logData) forApply(r *request) error {
	op := d.appendOp(&r.tx)
	if op == nil {
		return nil
	}
	ref, err := d.store(r.hdr.Zxid, op.Data)
	if err != nil {
		return err
	}
	op.Data = ref.encode()
	return nil
}

func (d *logData) close() error {
	if d.dl == nil {
		return nil
	}
	return d.dl.Close()
}

// checkRlogRoot refuses a log root the server cannot honour.
func checkRlogRoot(o *Options) error {
	root := o.RlogRoot
	if root == "" {
		return nil
	}
	if err := datatree.ValidatePath(root); err != nil || root == "/" || root == "/zookeeper" || strings.HasPrefix(root, "/zookeeper/") {
		return fmt.Errorf("rlog.root %q: want a znode path other than / and /zookeeper", root)
	}
	if o.Ensemble == nil {
		return errors.New("rlog.root needs an ensemble (server.N lines): logs run on the replication driver")
	}
	return nil
}

// openLogs opens the data log and puts the payloads back into the log
// entries recovered from the WAL, which the driver serves to learners. A
// recovered entry whose payload this member lacks was never acknowledged
// (the payload is synced before the WAL record): it and the entries after
// it are dropped from the WAL.
func openLogs(st *storage, tree *datatree.Tree, snapZxid int64) error {
	if st.opts.Durability == DurabilityDiskless {
		st.rl = newInlineLogs(st.opts)
		if refs := st.rl.referenced(tree); len(refs) > 0 {
			return fmt.Errorf("rlog: the snapshot at %s names %d log entries in a data log, and a diskless member "+
				"has none (every entry inline): it was written in another durability mode; start this member empty",
				hex(snapZxid), len(refs))
		}
		return nil
	}
	rl, err := openLogData(st.opts)
	if err != nil {
		return err
	}
	refs := rl.referenced(tree)
	if missing := rl.missing(refs); len(missing) > 0 {
		rl.close()
		return fmt.Errorf("rlog: the snapshot at %s names %d log entries whose payloads are not in the data log "+
			"(first: the entry created at %s); the data log was lost or damaged. Move this member's data directory "+
			"aside and restart it empty: it catches up from the leader", hex(snapZxid), len(missing), hex(missing[0]))
	}
	// Records of entries created at or before the oldest snapshot kept
	// and not in the tree loaded were removed before that snapshot (a
	// fuzzy snapshot misses no change made before it started): no replay
	// from any kept snapshot creates them again.
	if infos, err := snap.Newest(st.fs, st.snapDir); err == nil && len(infos) > 0 {
		oldest := min(infos[len(infos)-1].Zxid, snapZxid)
		if n := rl.sweep(oldest, refs); n > 0 {
			st.log.Info("released the data-log records of entries removed before the oldest snapshot", "records", n)
		}
	}
	for i, e := range st.recovered {
		data, err := rl.toProposal(e.Data)
		if err != nil {
			prev := snapZxid
			if i > 0 {
				prev = int64(st.recovered[i-1].Zxid)
			}
			st.log.Warn("a logged append's payload is missing from the data log; cutting the transaction log after the entry before it",
				"zxid", hex(int64(e.Zxid)), "cutAfter", hex(prev), "err", err)
			if err := st.wal.TruncateAfter(prev); err != nil {
				rl.close()
				return fmt.Errorf("cut the transaction log: %w", err)
			}
			st.recovered = st.recovered[:i]
			break
		}
		st.recovered[i].Data = data
	}
	if _, err := rl.dl.Flush(); err != nil {
		rl.close()
		return fmt.Errorf("sync the rlog data log: %w", err)
	}
	st.rl = rl
	return nil
}
