package sim

import (
	"context"
	"io"
	"slices"
	"time"

	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/replica/snapstream"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// Streamed SNAPs (replica/snapstream), as every deployed member sends
// them: with Options.StreamPiece set, a server's SNAP image is a header,
// its state machine's image goes ahead of it in pieces of StreamPiece
// bytes, one message each, and the learner spools the pieces on an
// in-memory file system of its incarnation and installs from the spool,
// or refuses a SNAP whose stream did not arrive whole.
//
// The simulator steps its servers one message at a time, so the Sender
// runs inline: a stream is produced within the Env.Send that starts it,
// with the simulator's clock and its seeded ids. Its pacing is the
// outbox's: a server's pieces to a peer, and everything it sends that
// peer after them, wait in the outbox, which puts StreamRate pieces on
// the link every StreamEvery time units (with a MsgSyncProgress every
// tick, as the Sender sends them), so a stream spans time: a link break
// in the middle of one drops what was in flight, the rest follows on the
// reconnected link, and the learner sees the gap.

// streamed is one incarnation's ends of the streams.
type streamed struct {
	sender  *snapstream.Sender
	learner *snapstream.Learner
	stats   *Stats
}

// newStreamed makes the ends of server s's streams (wire sets them into
// its driver's configuration), sets the install's image hook on s.sm and
// gives s its outbox.
func (c *Cluster) newStreamed(s *server) *streamed {
	now := func() time.Time { return simClock{c}.Now() }
	send := func(msgs []zab.Message) { c.send(s, msgs) }
	ids := c.srng.Uint64
	sm := s.sm
	piece := c.opts.StreamPiece
	if c.opts.Machines != nil {
		// A kv image (a pebble checkpoint) is tens of KiB: pieces under
		// 256 B would make one SNAP take thousands of time units.
		piece = max(piece, 256)
	}
	st := &streamed{
		stats: &c.Stats,
		sender: snapstream.NewSender(context.Background(), snapstream.SenderConfig{
			ID:   s.id,
			Send: send,
			Piece: func(to, id, seq uint64, b []byte) zab.Message {
				return snapstream.PieceMessage(s.id, to, id, seq, b)
			},
			Produce:       snapstream.FromWriteSnapshot(sm.WriteSnapshot, piece),
			ProgressEvery: time.Duration(c.opts.TickEvery) * time.Millisecond,
			Inline:        true,
			Now:           now,
			NewID:         ids,
		}),
		learner: &snapstream.Learner{
			ID: s.id, Send: send, FS: vfs.NewMem(), Path: "snap.spool",
			ProgressEvery: time.Duration(c.opts.TickEvery) * time.Millisecond,
			Now:           now,
			Breaks:        c.opts.StreamBreaks,
		},
	}
	sm.image = st.learner.Image
	s.outbox = newOutbox(s.id, c.opts.StreamRate, c.opts.StreamEvery, c.opts.TickEvery)
	return st
}

// wire sets the streams into a server's environment and configuration.
func (st *streamed) wire(env *replica.Env, cfg *replica.Config) {
	send := env.Send
	env.Send = func(msgs []zab.Message) { send(st.sender.Route(msgs)) }
	env.SnapshotImage = func(zab.Zxid) ([]byte, error) { return snapstream.Header(nil), nil }
	cfg.Intercept = func(m *zab.Message) bool {
		_, _, _, piece := snapstream.DecodePiece(m)
		snap := m.Type == zab.MsgSync && m.Snapshot != nil && snapstream.IsHeader(m.Snapshot.Data)
		ok := st.learner.Intercept(m)
		switch {
		case piece:
			st.stats.StreamPieces++
		case snap && m.Snapshot != nil:
			st.stats.StreamedSnaps++
		case snap:
			st.stats.RefusedStreams++
		}
		return ok
	}
}

// imageHook is simSM's view of the learner's spool: the reader an
// install reads, and what to do after it.
type imageHook func(r io.Reader) (io.Reader, func(), error)

// outbox holds one server's messages behind a stream's pieces, per peer
// (to), in the order sent.
type outbox struct {
	from     uint64
	rate     int
	every    int64
	tick     int64
	q        map[uint64][]zab.Message
	progress map[uint64]int64 // when each peer last got a progress report
}

func newOutbox(from uint64, rate int, every, tick int64) *outbox {
	return &outbox{from: from, rate: max(rate, 1), every: max(every, 1), tick: tick,
		q: map[uint64][]zab.Message{}, progress: map[uint64]int64{}}
}

// hold queues m if it is a piece or something already waits for its peer.
func (o *outbox) hold(m zab.Message) bool {
	if _, _, _, piece := snapstream.DecodePiece(&m); !piece && len(o.q[m.To]) == 0 {
		return false
	}
	o.q[m.To] = append(o.q[m.To], m)
	return true
}

// release puts each queue's share on the network every `every` time
// units: up to rate pieces, and every other message up to the next piece
// past them.
func (o *outbox) release(c *Cluster) {
	if len(o.q) == 0 || c.now%o.every != 0 {
		return
	}
	tos := make([]uint64, 0, len(o.q))
	for to := range o.q {
		tos = append(tos, to)
	}
	slices.Sort(tos)
	for _, to := range tos {
		q := o.q[to]
		pieces := 0
		for len(q) > 0 {
			_, _, _, piece := snapstream.DecodePiece(&q[0])
			if piece && pieces == o.rate {
				break
			}
			c.emit(q[0])
			q[0] = zab.Message{}
			q = q[1:]
			if piece {
				pieces++
			}
		}
		if pieces > 0 && c.now-o.progress[to] >= o.tick {
			o.progress[to] = c.now
			c.emit(zab.Message{Type: zab.MsgSyncProgress, From: o.from, To: to})
		}
		if len(q) == 0 {
			delete(o.q, to)
		} else {
			o.q[to] = q
		}
	}
}
