package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/zab"
)

// Streamed SNAP images (issue 24 §4, the thesis's SNAPSHOT then RESTORE):
// with logs, the payloads a learner lacks can be far more than memory
// holds and than one transport frame carries, so the image a leader's
// driver attaches to a SNAP is the tree's snapshot alone, and the payloads
// travel ahead of it, read from the data log as the link drains:
//
//  1. The driver builds the SNAP (Env.SnapshotImage: logData.streamImage,
//     a header and the tree) and hands it to replica.send, which takes
//     the SNAP and every later message to that learner aside and starts
//     a stream (runStream).
//  2. runStream lists the payloads of entries after the learner's last
//     zxid (zab.Snapshot.Learner: what its log holds up to there, its data
//     log holds too; zxidsAfter says why), reads them from the data
//     log and sends them in driverPayloads messages of about
//     streamPieceBytes, numbered from 1, keeping at most streamBacklog
//     bytes queued on the link (transport Backlog). It sends
//     MsgSyncProgress to the learner as it goes, since zab sees none of
//     these messages.
//  3. At the end it writes the stream's id and piece count into the
//     SNAP's header and sends the messages it took aside, in order. The
//     learner's link is FIFO, so every piece arrives before the SNAP.
//  4. The learner stores each piece's payloads in its data log as it
//     arrives (receivePayloads, on the node loop; it answers with
//     MsgSyncProgress). When the SNAP arrives, replica.receive checks
//     that it received every piece of that stream; if not (a piece
//     dropped, a connection broken, the stream aborted), it strips the
//     snapshot and zab opens a new session, whose sync streams again.
//     InstallSnapshot syncs the data log, and storage.installSnapshot
//     refuses a tree naming a payload still missing.
//
// A stream that would take aside more than streamHoldMax bytes of later
// messages is abandoned with them: the learner then hears nothing, times
// out and opens a new session. Memory stays bounded on both sides: a
// piece in flight and the messages taken aside on the leader, a piece on
// the learner.

// imageStreamMagic starts a streamed image:
//
//	imageStreamMagic | u64 stream id | u64 pieces | u64 tree length | tree
//
// A stream id of 0 is a header not yet filled in: the stream did not
// complete.
var imageStreamMagic = [16]byte{'c', 'o', 'r', 'r', 'a', 'l', '-', 'r', 'l', 'o', 'g', '-', 's', 't', 'r', 'm'}

const streamHeaderSize = 16 + 24

const (
	// streamPieceBytes is about the payload bytes of one piece.
	streamPieceBytes = 4 << 20
	// streamBacklog bounds the bytes queued on the link while a stream
	// runs (the transport's own queue holds 64 MiB).
	streamBacklog = 16 << 20
	// streamHoldMax bounds the later messages to the learner taken aside
	// while its stream runs.
	streamHoldMax = 256 << 20
)

func isStreamImage(b []byte) bool { return bytes.HasPrefix(b, imageStreamMagic[:]) }

// streamImage is the image a SNAP carries with logs: the header, to be
// filled in when the stream ends, and the tree.
func (d *logData) streamImage(tree []byte) []byte {
	out := make([]byte, streamHeaderSize, streamHeaderSize+len(tree))
	copy(out, imageStreamMagic[:])
	binary.BigEndian.PutUint64(out[32:], uint64(len(tree)))
	return append(out, tree...)
}

// parseStreamImage returns a streamed image's stream id, piece count and
// tree.
func parseStreamImage(b []byte) (id, pieces uint64, tree []byte, err error) {
	if len(b) < streamHeaderSize || !isStreamImage(b) {
		return 0, 0, nil, errors.New("rlog snapshot image from the leader: truncated header")
	}
	id = binary.BigEndian.Uint64(b[16:])
	pieces = binary.BigEndian.Uint64(b[24:])
	n := binary.BigEndian.Uint64(b[32:])
	if n != uint64(len(b)-streamHeaderSize) {
		return 0, 0, nil, fmt.Errorf("rlog snapshot image from the leader: tree of %d bytes in %d", n, len(b)-streamHeaderSize)
	}
	return id, pieces, b[streamHeaderSize:], nil
}

// installStreamed syncs the payloads a stream stored and returns the
// image's tree.
func (d *logData) installStreamed(b []byte) ([]byte, error) {
	if d.dl == nil {
		return nil, errors.New("rlog snapshot image from the leader: it streams payloads of a data log, and this member is " +
			"diskless (every entry inline): every member needs the same durability")
	}
	_, _, tree, err := parseStreamImage(b)
	if err != nil {
		return nil, err
	}
	if err := d.syncWritten(); err != nil {
		return nil, err
	}
	return tree, nil
}

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

// snapStream is a stream to one learner. Its fields but the constant
// ones are guarded by replica.streamMu.
type snapStream struct {
	to      uint64
	id      uint64
	learner int64
	// hold: the SNAP (hold[0]) and the later messages to the learner,
	// sent when the stream ends.
	hold      []zab.Message
	holdBytes int
	// abandoned: hold grew past streamHoldMax; the stream stops and its
	// messages are dropped.
	abandoned bool
}

// takeAside routes msgs while streams run: a SNAP carrying a streamed
// image starts a stream to its learner, and messages to a learner with a
// stream are held for it. It returns the messages to send now.
func (rp *replica) takeAside(msgs []zab.Message) []zab.Message {
	rp.streamMu.Lock()
	defer rp.streamMu.Unlock()
	if len(rp.streams) == 0 && !anyStreamImage(msgs) {
		return msgs
	}
	out := make([]zab.Message, 0, len(msgs))
	for _, m := range msgs {
		newStream := m.Snapshot != nil && isStreamImage(m.Snapshot.Data) && rp.s.store.rl != nil
		if s := rp.streams[m.To]; s != nil && newStream {
			// A new session's SNAP: the old stream and what it held are
			// for a session the learner has left.
			s.abandoned, s.hold = true, nil
			delete(rp.streams, m.To)
		}
		if s := rp.streams[m.To]; s != nil {
			if s.abandoned {
				continue
			}
			s.hold = append(s.hold, m)
			s.holdBytes += transport.EncodedSize(m)
			if s.holdBytes > streamHoldMax {
				rp.log.Warn("a learner's streamed snapshot is abandoned: too much to send after it",
					"learner", m.To, "bytes", s.holdBytes)
				s.abandoned, s.hold = true, nil
			}
			continue
		}
		if newStream {
			s := &snapStream{to: m.To, id: rand.Uint64()>>1 | 1, learner: int64(m.Snapshot.Learner), hold: []zab.Message{m}}
			if rp.streams == nil {
				rp.streams = map[uint64]*snapStream{}
			}
			rp.streams[m.To] = s
			rp.streamWG.Add(1)
			go func() {
				defer rp.streamWG.Done()
				rp.runStream(s)
			}()
			continue
		}
		out = append(out, m)
	}
	return out
}

func anyStreamImage(msgs []zab.Message) bool {
	for i := range msgs {
		if sn := msgs[i].Snapshot; sn != nil && isStreamImage(sn.Data) {
			return true
		}
	}
	return false
}

// runStream sends s's payloads, then the messages held for it (step 2
// and 3 above).
func (rp *replica) runStream(s *snapStream) {
	ctx := rp.streamCtx
	rl := rp.s.store.rl
	zxids := rl.zxidsAfter(s.learner)
	start := time.Now()
	var pieces, sent, nbytes int64
	complete := true
	piece := &driverMsg{kind: driverPayloads, id: int64(s.id)}
	size := 0
	lastProgress := time.Now()
	send := func() bool {
		if !rp.waitBacklog(ctx, s) {
			return false
		}
		pieces++
		piece.zxid = pieces
		rp.tr.Send([]zab.Message{driverMessage(rp.id, s.to, piece)})
		sent += int64(len(piece.payloads))
		nbytes += int64(size)
		piece = &driverMsg{kind: driverPayloads, id: int64(s.id)}
		size = 0
		if time.Since(lastProgress) >= rp.s.opts.TickTime/2 {
			lastProgress = time.Now()
			rp.tr.Send([]zab.Message{{Type: zab.MsgSyncProgress, From: rp.id, To: s.to}})
		}
		return true
	}
	for _, z := range zxids {
		_, b, _, err := rl.readRecord(z)
		if err != nil {
			// Released since it was listed (its entry deleted, and
			// snapshots since): the learner takes a newer image.
			rp.log.Warn("a payload of a learner's streamed snapshot is gone; the learner will sync again",
				"learner", s.to, "zxid", hex(z), "err", err)
			complete = false
			break
		}
		piece.payloads = append(piece.payloads, streamPayload{zxid: z, data: b})
		size += len(b)
		if size >= streamPieceBytes && !send() {
			complete = false
			break
		}
	}
	if complete && len(piece.payloads) > 0 && !send() {
		complete = false
	}

	rp.streamMu.Lock()
	defer rp.streamMu.Unlock()
	if rp.streams[s.to] == s {
		delete(rp.streams, s.to)
	}
	if s.abandoned || ctx.Err() != nil {
		return
	}
	if complete {
		// The held SNAP is not sent yet: its bytes are still ours to
		// fill in (a copy, as the driver may keep the original).
		snap := *s.hold[0].Snapshot
		snap.Data = bytes.Clone(snap.Data)
		binary.BigEndian.PutUint64(snap.Data[16:], s.id)
		binary.BigEndian.PutUint64(snap.Data[24:], uint64(pieces))
		s.hold[0].Snapshot = &snap
	}
	rp.log.Info("streamed a snapshot's payloads to a learner", "learner", s.to, "learnerZxid", hex(s.learner),
		"payloads", sent, "bytes", nbytes, "pieces", pieces, "complete", complete, "took", time.Since(start).Round(time.Millisecond))
	rp.tr.Send(s.hold)
}

// waitBacklog waits until the link to s's learner has room for a piece:
// false if the server stops or the stream was abandoned first.
func (rp *replica) waitBacklog(ctx context.Context, s *snapStream) bool {
	bl, ok := rp.tr.(interface{ Backlog(uint64) int64 })
	for {
		rp.streamMu.Lock()
		abandoned := s.abandoned
		rp.streamMu.Unlock()
		if abandoned || ctx.Err() != nil {
			return false
		}
		if !ok || bl.Backlog(s.to) <= streamBacklog-streamPieceBytes {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// streamIn is the stream a learner receives; the node loop alone uses it.
type streamIn struct {
	id     int64
	pieces int64
	// broken: a piece missing or not stored; the SNAP that ends the
	// stream is refused.
	broken       bool
	lastProgress time.Time
}

// receivePayloads stores a piece of a stream (step 4 above).
func (rp *replica) receivePayloads(from uint64, dm *driverMsg) {
	in := &rp.streamIn
	if dm.id != in.id {
		*in = streamIn{id: dm.id}
	}
	if dm.zxid != in.pieces+1 {
		if !in.broken {
			rp.log.Warn("a piece of a streamed snapshot is missing", "from", from, "got", dm.zxid, "want", in.pieces+1)
		}
		in.broken = true
		return
	}
	in.pieces++
	rl := rp.s.store.rl
	if rl == nil || rl.dl == nil {
		in.broken = true
		return
	}
	for _, p := range dm.payloads {
		if _, err := rl.store(p.zxid, p.data); err != nil {
			rp.log.Warn("storing a streamed snapshot's payload failed", "zxid", hex(p.zxid), "err", err)
			in.broken = true
			return
		}
	}
	if time.Since(in.lastProgress) >= rp.s.opts.TickTime/2 {
		in.lastProgress = time.Now()
		rp.tr.Send([]zab.Message{{Type: zab.MsgSyncProgress, From: rp.id, To: from}})
	}
}

// checkStreamedSnap vets a SNAP whose image is streamed before zab takes
// it: every piece of its stream must have arrived and been stored, or
// the snapshot is stripped and zab opens a new session.
func (rp *replica) checkStreamedSnap(m *zab.Message) {
	sn := m.Snapshot
	if m.Type != zab.MsgSync || sn == nil || !isStreamImage(sn.Data) {
		return
	}
	if rp.s.store.rl == nil || rp.s.store.rl.dl == nil {
		return // InstallSnapshot refuses it and says why
	}
	id, pieces, _, err := parseStreamImage(sn.Data)
	in := rp.streamIn
	switch {
	case err != nil || id == 0:
		// Malformed, or the stream did not complete.
	case pieces == 0:
		return // nothing to stream: the learner held every payload
	case int64(id) == in.id && int64(pieces) == in.pieces && !in.broken:
		return
	}
	rp.log.Warn("a streamed snapshot arrived incomplete; syncing again", "from", m.From,
		"stream", id, "pieces", pieces, "received", in.pieces, "broken", in.broken, "err", err)
	m.Snapshot = nil
}
