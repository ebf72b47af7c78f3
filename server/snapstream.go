package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/corral-db/corral/replica/snapstream"
	"github.com/corral-db/corral/zab"
)

// Streamed SNAP images (replica/snapstream; for the logs, issue 24 §4,
// the thesis's SNAPSHOT then RESTORE). The image the leader's driver
// attaches to a SNAP is a header; the image goes ahead of it in pieces
// (snapstream.Sender, in replica.send), produced by produceSnapshot: the
// tree's snapshot file, read as the link drains, in pieces of kind
// pieceTree, then with logs in a data log the payloads of the entries
// after the learner's last zxid (zxidsAfter says why those are the ones
// it lacks) in pieces of kind piecePayloads. Neither side holds the
// image whole, and no transport frame carries it.
//
// The learner (interceptStream, the driver's Intercept) spools the tree
// to version-2/snap.spool and stores the payloads in its data log as the
// pieces arrive, and a SNAP whose stream did not arrive whole loses its
// snapshot, so zab opens a new session and the sync streams again.
// InstallSnapshot reads the tree from the spool and syncs the data log;
// storage.installSnapshot refuses a tree naming a payload still missing.
//
// A piece is its kind's byte, then for pieceTree the snapshot file's
// bytes, for piecePayloads payloads one after another:
//
//	{ zxid (8 B BE) | length (4 B BE) | payload }*
const (
	pieceTree     = 'T'
	piecePayloads = 'P'
)

const streamPieceBytes = 4 << 20

// zxidsAfter returns, sorted, the zxids after z that have a record: the
// payloads a learner whose log ends at z lacks. Its log holds every entry
// of this history up to z (zab.Snapshot.Learner), and so its data log
// their payloads, each written before its entry's WAL record; any it has
// released belong to entries deleted by then, which the tree no longer
// names. The learner checks that it holds every payload the tree names
// before it installs the tree (storage.installSnapshot).
func (d *logData) zxidsAfter(z int64) []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []int64
	d.idx.all(func(r rec) {
		if r.zxid > z {
			out = append(out, r.zxid)
		}
	})
	slices.Sort(out)
	return out
}

// produceLogPayloads writes the payloads after the learner's last zxid
// as pieces of kind piecePayloads.
func (d *logData) produceLogPayloads(ctx context.Context, _ uint64, sn *zab.Snapshot, emit func([]byte) bool) error {
	piece := []byte{piecePayloads}
	for _, z := range d.zxidsAfter(int64(sn.Learner)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, b, _, err := d.readRecord(z)
		if err != nil {
			// Released since it was listed (its entry deleted, and
			// snapshots since): the learner takes a newer image.
			return fmt.Errorf("the payload of %s: %w", hex(z), err)
		}
		piece = binary.BigEndian.AppendUint64(piece, uint64(z))
		piece = binary.BigEndian.AppendUint32(piece, uint32(len(b)))
		piece = append(piece, b...)
		if len(piece) >= streamPieceBytes {
			if !emit(piece) {
				return snapstream.ErrStopped
			}
			piece = piece[:1]
		}
	}
	if len(piece) > 1 && !emit(piece) {
		return snapstream.ErrStopped
	}
	return nil
}

// produceSnapshot is the leader's snapstream.Produce: the tree's snapshot
// at the SNAP's zxid, then the logs' payloads the learner lacks.
func (rp *replica) produceSnapshot(ctx context.Context, to uint64, sn *zab.Snapshot, emit func([]byte) bool) error {
	var buf []byte
	w := snapstream.NewWriter(func(b []byte) bool {
		buf = append(append(buf[:0], pieceTree), b...)
		return emit(buf)
	}, streamPieceBytes)
	if err := rp.s.store.writeSnapshotFile(int64(sn.Zxid), w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if rl := rp.s.store.rl; rl != nil && rl.dl != nil {
		return rl.produceLogPayloads(ctx, to, sn, emit)
	}
	return nil
}

var errBadPiece = errors.New("rlog: malformed piece of a streamed snapshot")

// storePiece stores the payloads of a piece.
func (d *logData) storePiece(b []byte) error {
	for len(b) > 0 {
		if len(b) < 12 {
			return errBadPiece
		}
		z := int64(binary.BigEndian.Uint64(b))
		n := binary.BigEndian.Uint32(b[8:])
		if uint64(n) > uint64(len(b)-12) {
			return errBadPiece
		}
		if _, err := d.store(z, b[12:12+n]); err != nil {
			return err
		}
		b = b[12+n:]
	}
	return nil
}

// interceptStream is the driver's Intercept: it takes a streamed SNAP's
// pieces and vets the SNAP they end in.
func (rp *replica) interceptStream(m *zab.Message) bool {
	if id, seq, b, ok := snapstream.DecodePiece(m); ok {
		if !rp.streamIn.Piece(id, seq, func(first bool) error { return rp.storeSnapPiece(first, b) }) {
			rp.log.Warn("a piece of a streamed snapshot is missing or was not stored", "from", m.From, "piece", seq)
		}
		rp.streamProgress(m.From)
		return false
	}
	if m.Type == zab.MsgSync && m.Snapshot != nil && snapstream.IsHeader(m.Snapshot.Data) {
		if rp.streamIn.Complete(m.Snapshot.Data, false) {
			rp.log.Info("a streamed snapshot arrived whole", "from", m.From, "zxid", hex(int64(m.Zxid)), "pieces", rp.streamIn.Pieces())
		} else {
			rp.log.Warn("a streamed snapshot arrived incomplete; syncing again", "from", m.From, "zxid", hex(int64(m.Zxid)))
			m.Snapshot = nil // zab opens a new session
		}
	}
	return true
}

// storeSnapPiece spools a tree piece or stores a payloads piece; first
// starts a new spool. Payloads for a member without a data log are a
// configuration the install refuses with a message (streamConfigErr),
// not a broken stream that would sync again forever.
func (rp *replica) storeSnapPiece(first bool, b []byte) error {
	rp.spoolMu.Lock()
	defer rp.spoolMu.Unlock()
	st := rp.s.store
	if first {
		if rp.spool != nil {
			rp.spool.Close()
			rp.spool = nil
		}
		rp.streamConfigErr = nil
		f, err := st.fs.Create(st.spoolPath())
		if err != nil {
			return fmt.Errorf("snapshot spool: %w", err)
		}
		rp.spool = f
	}
	if len(b) == 0 || rp.spool == nil {
		return errBadPiece
	}
	switch b[0] {
	case pieceTree:
		_, err := rp.spool.Write(b[1:])
		return err
	case piecePayloads:
		if rl := st.rl; rl != nil && rl.dl != nil {
			return rl.storePiece(b[1:])
		}
		if rp.streamConfigErr == nil {
			rp.streamConfigErr = errors.New("the leader's snapshot carries log payloads of a data log (rlog.root), and this member " +
				"has no rlog.root or is diskless: every member needs the same rlog.root and durability")
		}
		return nil
	}
	return errBadPiece
}

// spooledTree returns the tree a streamed SNAP spooled, removes the
// spool, and syncs the payloads the stream stored.
func (rp *replica) spooledTree() ([]byte, error) {
	rp.spoolMu.Lock()
	defer rp.spoolMu.Unlock()
	if rp.streamConfigErr != nil {
		return nil, rp.streamConfigErr
	}
	if rp.spool != nil {
		rp.spool.Close()
		rp.spool = nil
	}
	st := rp.s.store
	f, err := st.fs.Open(st.spoolPath())
	if err != nil {
		return nil, fmt.Errorf("snapshot spool: %w", err)
	}
	tree, err := io.ReadAll(f)
	f.Close()
	if rerr := st.fs.Remove(st.spoolPath()); rerr != nil && err == nil {
		rp.log.Warn("removing the snapshot spool", "err", rerr)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot spool: %w", err)
	}
	if rl := st.rl; rl != nil && rl.dl != nil {
		if err := rl.syncWritten(); err != nil {
			return nil, err
		}
	}
	return tree, nil
}
