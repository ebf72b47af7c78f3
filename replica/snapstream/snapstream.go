package snapstream

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/zab"
)

// magic starts a streamed image's header:
//
//	magic | u64 stream id | u64 pieces | u64 body length | body
//
// A stream id of 0 is a header not filled in: its stream did not
// complete.
var magic = [16]byte{'c', 'o', 'r', 'r', 'a', 'l', '-', 's', 'n', 'a', 'p', 's', 't', 'r', 'm', '1'}

const headerSize = 16 + 24

// Header returns an unfilled header carrying body (what the SNAP itself
// still carries, if anything).
func Header(body []byte) []byte {
	out := make([]byte, headerSize, headerSize+len(body))
	copy(out, magic[:])
	binary.BigEndian.PutUint64(out[32:], uint64(len(body)))
	return append(out, body...)
}

// IsHeader says whether b is a streamed image's header.
func IsHeader(b []byte) bool { return bytes.HasPrefix(b, magic[:]) }

// Parse returns a header's stream id, piece count and body.
func Parse(b []byte) (id, pieces uint64, body []byte, err error) {
	if len(b) < headerSize || !IsHeader(b) {
		return 0, 0, nil, errors.New("snapstream: truncated header")
	}
	id = binary.BigEndian.Uint64(b[16:])
	pieces = binary.BigEndian.Uint64(b[24:])
	if n := binary.BigEndian.Uint64(b[32:]); n != uint64(len(b)-headerSize) {
		return 0, 0, nil, fmt.Errorf("snapstream: body of %d bytes in %d", n, len(b)-headerSize)
	}
	return id, pieces, b[headerSize:], nil
}

// filled returns a copy of header h with the stream's id and piece count.
func filled(h []byte, id, pieces uint64) []byte {
	out := bytes.Clone(h)
	binary.BigEndian.PutUint64(out[16:], id)
	binary.BigEndian.PutUint64(out[24:], pieces)
	return out
}

// Produce writes a stream's pieces for the SNAP sn to learner to: each
// call of emit sends one piece (the bytes are not kept) and returns false
// once the stream is to stop. An error stops the stream unfinished.
type Produce func(ctx context.Context, to uint64, sn *zab.Snapshot, emit func(piece []byte) bool) error

// SenderConfig is what a Sender needs.
type SenderConfig struct {
	// ID is this member's id (the From of what it sends).
	ID uint64
	// Send hands messages to the transport.
	Send func([]zab.Message)
	// Backlog, if set, reports the bytes queued for a peer on the link;
	// the stream waits while more than MaxBacklog are.
	Backlog func(to uint64) int64
	// Piece builds the message carrying piece seq (from 1) of stream id.
	Piece   func(to, id, seq uint64, piece []byte) zab.Message
	Produce Produce
	// ProgressEvery is how often the stream tells the learner it moves
	// (zab.MsgSyncProgress); zab sees none of the pieces.
	ProgressEvery time.Duration
	// MaxBacklog bounds the link's queue while a stream runs (16 MiB if
	// 0); MaxHold bounds the messages held behind a stream beyond those
	// of the Route call that started it (256 MiB if 0), past which the
	// stream is abandoned with them.
	MaxBacklog int64
	MaxHold    int
	Logger     *slog.Logger
	// Inline runs each stream to its end inside the Route that starts
	// it, sending through Send what Route would have returned before it,
	// then the pieces and the SNAP: no goroutine and no pacing, for a
	// caller that steps its members one message at a time (the
	// simulator). Messages after the SNAP come back from Route as usual.
	Inline bool
	// Now and NewID, if set, replace the clock (progress reports) and
	// the random stream ids, for a deterministic caller.
	Now   func() time.Time
	NewID func() uint64
}

// Sender runs the streams of a leader (doc.go). It is safe for
// concurrent use; mu guards streams.
type Sender struct {
	cfg SenderConfig
	ctx context.Context

	mu      sync.Mutex
	streams map[uint64]*stream
	wg      sync.WaitGroup
}

type stream struct {
	to uint64
	// produce: a streamed SNAP, whose pieces go first (id, sn); else a
	// sync too large to queue on the link at once, sent paced.
	produce bool
	id      uint64
	sn      zab.Snapshot
	// hold: the sync's first message (hold[0], the SNAP of a stream) and
	// the later messages to the learner, not yet sent. holdBytes counts
	// them; initial is the part of them that came in the Route call
	// that started the stream (zab's sync: the log after a SNAP's
	// snapshot, already in memory), which MaxHold does not bound.
	hold      []zab.Message
	holdBytes int
	initial   int
	// abandoned: replaced by a new session's sync, or hold grew past
	// MaxHold; the stream stops and its messages are dropped.
	abandoned bool
}

// NewSender returns a Sender whose streams stop with ctx.
func NewSender(ctx context.Context, cfg SenderConfig) *Sender {
	if cfg.MaxBacklog <= 0 {
		cfg.MaxBacklog = 16 << 20
	}
	if cfg.MaxHold <= 0 {
		cfg.MaxHold = 256 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = rand.Uint64
	}
	return &Sender{cfg: cfg, ctx: ctx}
}

// Route returns the messages of msgs to send now: a SNAP whose image is a
// header starts a stream to its learner, a sync whose messages to its
// learner are more than MaxBacklog bytes is sent paced, and messages to a
// learner with a stream running are held behind it.
func (s *Sender) Route(msgs []zab.Message) []zab.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.streams) == 0 && !anySync(msgs) {
		return msgs
	}
	out := make([]zab.Message, 0, len(msgs))
	var started []*stream // in this call
	for i, m := range msgs {
		sync := m.Type == zab.MsgSync
		if st := s.streams[m.To]; st != nil && sync {
			// A new session's sync: the old stream and what it held are
			// for a session the learner has left.
			st.abandoned, st.hold = true, nil
			delete(s.streams, m.To)
		}
		if st := s.streams[m.To]; st != nil {
			if st.abandoned {
				continue
			}
			size := transport.EncodedSize(m)
			st.hold = append(st.hold, m)
			st.holdBytes += size
			if slices.Contains(started, st) {
				st.initial += size
			}
			if st.holdBytes-st.initial > s.cfg.MaxHold {
				s.cfg.Logger.Warn("a learner's sync is abandoned: too much to send after it",
					"learner", m.To, "bytes", st.holdBytes)
				st.abandoned, st.hold = true, nil
			}
			continue
		}
		header := m.Snapshot != nil && IsHeader(m.Snapshot.Data)
		if !header && (!sync || bytesTo(msgs[i:], m.To) <= int64(s.cfg.MaxBacklog)) {
			out = append(out, m)
			continue
		}
		size := transport.EncodedSize(m)
		st := &stream{to: m.To, produce: header, hold: []zab.Message{m}, holdBytes: size, initial: size}
		started = append(started, st)
		if header {
			st.id, st.sn = s.cfg.NewID()>>1|1, *m.Snapshot
		}
		if s.streams == nil {
			s.streams = map[uint64]*stream{}
		}
		s.streams[m.To] = st
		if s.cfg.Inline {
			// What came before the sync leaves first, then the
			// stream; run takes mu itself.
			s.mu.Unlock()
			s.cfg.Send(out)
			out = nil
			s.run(st)
			s.mu.Lock()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.run(st)
		}()
	}
	return out
}

func anySync(msgs []zab.Message) bool {
	for i := range msgs {
		if msgs[i].Type == zab.MsgSync {
			return true
		}
	}
	return false
}

// bytesTo is the size of the messages of msgs to peer to.
func bytesTo(msgs []zab.Message, to uint64) int64 {
	var n int64
	for i := range msgs {
		if msgs[i].To == to {
			n += int64(transport.EncodedSize(msgs[i]))
		}
	}
	return n
}

// Wait waits for the streams' goroutines, which stop with the Sender's
// context.
func (s *Sender) Wait() { s.wg.Wait() }

// run produces st's pieces, if it streams a SNAP, then sends the
// messages held for it (the SNAP with its header filled in first).
func (s *Sender) run(st *stream) {
	if st.produce && !s.produce(st) {
		s.drop(st)
		return
	}
	start := s.cfg.Now()
	n := s.drain(st)
	if !st.produce {
		s.cfg.Logger.Info("sent a learner's sync paced", "learner", st.to, "bytes", n,
			"took", s.cfg.Now().Sub(start).Round(time.Millisecond))
	}
}

// produce sends st's pieces and fills in its SNAP's header: false if the
// stream was abandoned or the Sender stopped first.
func (s *Sender) produce(st *stream) bool {
	start := s.cfg.Now()
	var pieces, nbytes int64
	lastProgress := start
	emit := func(piece []byte) bool {
		if !s.waitBacklog(st) {
			return false
		}
		pieces++
		nbytes += int64(len(piece))
		s.cfg.Send([]zab.Message{s.cfg.Piece(st.to, st.id, uint64(pieces), piece)})
		if now := s.cfg.Now(); now.Sub(lastProgress) >= s.cfg.ProgressEvery {
			lastProgress = now
			s.cfg.Send([]zab.Message{{Type: zab.MsgSyncProgress, From: s.cfg.ID, To: st.to}})
		}
		return true
	}
	err := s.cfg.Produce(s.ctx, st.to, &st.sn, emit)
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.abandoned || s.ctx.Err() != nil {
		return false
	}
	if err != nil {
		// Sent unfilled, the SNAP makes the learner sync again.
		s.cfg.Logger.Warn("a learner's streamed snapshot did not complete; it will sync again", "learner", st.to, "err", err)
	} else {
		// The held SNAP is not sent yet: its bytes are still ours to
		// fill in (a copy, as the driver may keep the original).
		sn := *st.hold[0].Snapshot
		sn.Data = filled(sn.Data, st.id, uint64(pieces))
		st.hold[0].Snapshot = &sn
	}
	s.cfg.Logger.Info("streamed a snapshot to a learner", "learner", st.to, "zxid", st.sn.Zxid,
		"learnerZxid", st.sn.Learner, "bytes", nbytes, "pieces", pieces, "complete", err == nil, "held", st.holdBytes,
		"took", s.cfg.Now().Sub(start).Round(time.Millisecond))
	return true
}

// drainChunk is the most drain hands the transport at once (beyond one
// message).
const drainChunk = 4 << 20

// drain sends what st holds in order, a chunk at a time as the link's
// backlog allows, and what Route holds behind it meanwhile; the stream
// ends (Route sends directly again) once nothing is held. The last chunk
// is sent before the stream ends, so nothing Route sends later passes
// it. It returns the bytes sent.
func (s *Sender) drain(st *stream) int64 {
	var sent int64
	for {
		s.mu.Lock()
		if st.abandoned || s.ctx.Err() != nil || len(st.hold) == 0 {
			if s.streams[st.to] == st {
				delete(s.streams, st.to)
			}
			s.mu.Unlock()
			return sent
		}
		n, b := 0, 0
		for n < len(st.hold) {
			size := transport.EncodedSize(st.hold[n])
			if n > 0 && b+size > drainChunk {
				break
			}
			n, b = n+1, b+size
		}
		chunk := st.hold[:n:n]
		st.hold = st.hold[n:]
		st.holdBytes -= b
		s.mu.Unlock()
		s.cfg.Send(chunk)
		clear(chunk) // sent: the held array no longer keeps them
		sent += int64(b)
		s.waitBacklog(st)
	}
}

// drop ends st without sending what it holds.
func (s *Sender) drop(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams[st.to] == st {
		delete(s.streams, st.to)
	}
}

// waitBacklog waits until the link to st's learner has room for a piece:
// false if the Sender stops or st was abandoned first.
func (s *Sender) waitBacklog(st *stream) bool {
	for {
		s.mu.Lock()
		abandoned := st.abandoned
		s.mu.Unlock()
		if abandoned || s.ctx.Err() != nil {
			return false
		}
		if s.cfg.Backlog == nil || s.cfg.Backlog(st.to) <= s.cfg.MaxBacklog {
			return true
		}
		select {
		case <-s.ctx.Done():
			return false
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// Receiver is a learner's side of the stream it receives: which stream,
// how many pieces arrived in order and were stored. It is not safe for
// concurrent use: the goroutine that steps the driver owns it.
type Receiver struct {
	id     uint64
	pieces uint64
	// broken: a piece missing or not stored; the SNAP ending the stream
	// is refused.
	broken bool
	// Breaks breaks the receiver's rules (the simulator's self-test).
	Breaks Breaks
}

// Breaks name the rules of a stream's learner that the simulator must
// catch when broken (sim/bite_test.go). Never set outside tests.
type Breaks struct {
	// IgnoreGaps stores every piece of the current stream, in whatever
	// order and with whatever missing, and takes the SNAP ending it as
	// whole.
	IgnoreGaps bool
}

// Piece takes piece seq of stream id: store keeps it (first is true for
// the stream's first piece, which starts a new spool). It returns false
// when the piece is out of order or not stored; the stream is then
// broken until the next one starts.
func (r *Receiver) Piece(id, seq uint64, store func(first bool) error) bool {
	if id != r.id {
		*r = Receiver{id: id, Breaks: r.Breaks}
	}
	if r.Breaks.IgnoreGaps {
		r.pieces = seq - 1
	}
	if r.broken || seq != r.pieces+1 {
		r.broken = true
		return false
	}
	if err := store(seq == 1); err != nil {
		r.broken = true
		return false
	}
	r.pieces++
	return true
}

// Pieces returns how many pieces of the current stream were stored.
func (r *Receiver) Pieces() uint64 { return r.pieces }

// Complete says whether the SNAP with header h ends a stream this
// receiver holds whole: filled in, and every piece of it stored in order.
// With emptyOK, a filled header with no pieces is complete whatever came
// before (an owner whose stream may have nothing to send).
func (r *Receiver) Complete(h []byte, emptyOK bool) bool {
	id, pieces, _, err := Parse(h)
	switch {
	case err != nil || id == 0:
		return false
	case pieces == 0:
		return emptyOK
	}
	if r.Breaks.IgnoreGaps {
		return id == r.id
	}
	return id == r.id && pieces == r.pieces && !r.broken
}
