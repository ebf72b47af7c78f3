package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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
// The learner (replica.learner, a snapstream.Learner whose Take is
// takePiece) spools the tree to version-2/snap.spool and stores the
// payloads in its data log as the pieces arrive, and a SNAP whose stream did not arrive whole loses its
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

// takePiece is the learner's snapstream.Learner.Take: a tree piece's
// bytes go to the spool, a payloads piece's payloads to the data log.
// Payloads for a member without a data log are a configuration the
// install refuses with a message (streamConfigErr), not a broken stream
// that would sync again forever.
func (rp *replica) takePiece(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, errBadPiece
	}
	switch b[0] {
	case pieceTree:
		return b[1:], nil
	case piecePayloads:
		if rl := rp.s.store.rl; rl != nil && rl.dl != nil {
			return nil, rl.storePiece(b[1:])
		}
		err := errors.New("the leader's snapshot carries log payloads of a data log (rlog.root), and this member " +
			"has no rlog.root or is diskless: every member needs the same rlog.root and durability")
		rp.streamConfigErr.Store(&err)
		return nil, nil
	}
	return nil, errBadPiece
}

// streamedTree returns the tree image a streamed SNAP (header h) spooled
// and syncs the payloads the stream stored; done removes the spool.
func (rp *replica) streamedTree(h []byte) (img treeImage, done func(), err error) {
	if err := rp.streamConfigErr.Swap(nil); err != nil {
		return nil, nil, *err
	}
	if _, _, _, err := snapstream.Parse(h); err != nil {
		return nil, nil, err
	}
	if rl := rp.s.store.rl; rl != nil && rl.dl != nil {
		if err := rl.syncWritten(); err != nil {
			return nil, nil, err
		}
	}
	return rp.learner.OpenSpool, rp.learner.RemoveSpool, nil
}
