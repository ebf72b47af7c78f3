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

// Streamed SNAP payloads (issue 24 §4, the thesis's SNAPSHOT then
// RESTORE): with logs, the payloads a learner lacks can be far more than
// memory holds and than one transport frame carries. The image the
// leader's driver attaches to a SNAP is a replica/snapstream header with
// the tree's snapshot as its body, and the payloads travel ahead of it in
// pieces (snapstream.Sender, in replica.send): produceLogPayloads reads
// the payloads of the entries after the learner's last zxid from the data
// log (zxidsAfter says why those are the ones it lacks). The learner
// stores each piece's payloads in its data log as it arrives
// (interceptStream, the driver's Intercept), and a SNAP whose stream did
// not arrive whole loses its snapshot, so zab opens a new session and
// the sync streams again. InstallSnapshot syncs the data log, and
// storage.installSnapshot refuses a tree naming a payload still missing.
//
// A piece's bytes are payloads one after another:
//
//	{ zxid (8 B BE) | length (4 B BE) | payload }*
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

// produceLogPayloads is the leader's snapstream.Produce: the payloads
// after the learner's last zxid, in pieces.
func (d *logData) produceLogPayloads(ctx context.Context, _ uint64, sn *zab.Snapshot, emit func([]byte) bool) error {
	var piece []byte
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
			piece = piece[:0]
		}
	}
	if len(piece) > 0 && !emit(piece) {
		return snapstream.ErrStopped
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

// interceptStream is the driver's Intercept on a member with logs: it
// stores a streamed SNAP's pieces and vets the SNAP they end in.
func (rp *replica) interceptStream(m *zab.Message) bool {
	rl := rp.s.store.rl
	if rl == nil || rl.dl == nil {
		return true // a SNAP's streamed image is refused at install, with a message
	}
	if id, seq, b, ok := snapstream.DecodePiece(m); ok {
		if !rp.streamIn.Piece(id, seq, func(bool) error { return rl.storePiece(b) }) {
			rp.log.Warn("a piece of a streamed snapshot is missing or was not stored", "from", m.From, "piece", seq)
		}
		rp.streamProgress(m.From)
		return false
	}
	if m.Type == zab.MsgSync && m.Snapshot != nil && snapstream.IsHeader(m.Snapshot.Data) {
		if rp.streamIn.Complete(m.Snapshot.Data, true) {
			rp.log.Info("a streamed snapshot arrived whole", "from", m.From, "zxid", hex(int64(m.Zxid)), "pieces", rp.streamIn.Pieces())
		} else {
			rp.log.Warn("a streamed snapshot arrived incomplete; syncing again", "from", m.From, "zxid", hex(int64(m.Zxid)))
			m.Snapshot = nil // zab opens a new session
		}
	}
	return true
}

// installStreamed syncs the payloads a stream stored and returns the
// image's tree.
func (d *logData) installStreamed(b []byte) ([]byte, error) {
	if d.dl == nil {
		return nil, errors.New("rlog snapshot image from the leader: it streams payloads of a data log, and this member is " +
			"diskless (every entry inline): every member needs the same durability")
	}
	_, _, tree, err := snapstream.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("rlog snapshot image from the leader: %w", err)
	}
	if err := d.syncWritten(); err != nil {
		return nil, err
	}
	return tree, nil
}
