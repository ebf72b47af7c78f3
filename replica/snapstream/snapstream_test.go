package snapstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// link records what a Sender sends.
type link struct {
	mu   sync.Mutex
	sent []zab.Message
}

func (l *link) send(ms []zab.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, ms...)
}

// take returns what was sent but the progress reports.
func (l *link) take() []zab.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []zab.Message
	for _, m := range l.sent {
		if m.Type != zab.MsgSyncProgress {
			out = append(out, m)
		}
	}
	l.sent = nil
	return out
}

const pieceType = zab.MsgDriver

func pieceMsg(to, id, seq uint64, b []byte) zab.Message {
	return zab.Message{Type: pieceType, To: to, Zxid: zab.Zxid(id), Commit: zab.Zxid(seq), Entries: []zab.Entry{{Data: bytes.Clone(b)}}}
}

// image is what produce streams: n pieces of 3 bytes.
func produce(n int, fail error) Produce {
	return func(ctx context.Context, to uint64, sn *zab.Snapshot, emit func([]byte) bool) error {
		for i := range n {
			if !emit([]byte{byte(i), byte(i), byte(i)}) {
				return errors.New("stopped")
			}
		}
		return fail
	}
}

func snapTo(to uint64, session uint64) zab.Message {
	return zab.Message{Type: zab.MsgSync, To: to, Session: session, Sync: zab.SyncSnap, Zxid: 9,
		Snapshot: &zab.Snapshot{Zxid: 9, Data: Header([]byte("body"))}}
}

// deliver plays the sent messages into a Receiver, as a learner's owner
// does, and returns the SNAP (nil Snapshot when stripped) and the bytes
// stored.
func deliver(r *Receiver, ms []zab.Message) (*zab.Message, []byte) {
	var snap *zab.Message
	var stored []byte
	for i := range ms {
		m := ms[i]
		switch m.Type {
		case pieceType:
			b := m.Entries[0].Data
			r.Piece(uint64(m.Zxid), uint64(m.Commit), func(first bool) error {
				if first {
					stored = nil
				}
				stored = append(stored, b...)
				return nil
			})
		case zab.MsgSync:
			if !r.Complete(m.Snapshot.Data, false) {
				m.Snapshot = nil
			}
			snap = &m
		}
	}
	return snap, stored
}

// TestSenderOrder: the SNAP and the later messages to its learner leave
// after every piece, in order, with the header filled in; messages to
// others are not held; the learner stores the pieces and accepts.
func TestSenderOrder(t *testing.T) {
	l := &link{}
	s := NewSender(context.Background(), SenderConfig{ID: 1, Send: l.send, Piece: pieceMsg, Produce: produce(5, nil)})
	orig := snapTo(2, 1)
	now := s.Route([]zab.Message{orig, {Type: zab.MsgPing, To: 3}, {Type: zab.MsgProposal, To: 2}})
	if len(now) != 1 || now[0].To != 3 {
		t.Fatalf("sent at once: %v", now)
	}
	if now := s.Route([]zab.Message{{Type: zab.MsgNewLeader, To: 2}}); len(now) != 0 {
		t.Fatalf("a message behind the stream went at once: %v", now)
	}
	s.Wait()
	l.mu.Lock()
	progress := 0
	for _, m := range l.sent {
		if m.Type == zab.MsgSyncProgress && m.To == 2 && m.From == 1 {
			progress++
		}
	}
	l.mu.Unlock()
	if progress == 0 {
		t.Error("the stream told the learner nothing of its progress")
	}
	sent := l.take()
	var pieces int
	for pieces < len(sent) && sent[pieces].Type == pieceType {
		pieces++
	}
	rest := sent[pieces:]
	if pieces != 5 || len(rest) != 3 || rest[0].Type != zab.MsgSync || rest[1].Type != zab.MsgProposal || rest[2].Type != zab.MsgNewLeader {
		t.Fatalf("%d pieces, then %v", pieces, rest)
	}
	if id, n, body, err := Parse(orig.Snapshot.Data); err != nil || id != 0 || n != 0 || string(body) != "body" {
		t.Fatalf("the driver's header changed: %d %d %q %v", id, n, body, err)
	}
	var r Receiver
	snap, stored := deliver(&r, sent)
	if snap.Snapshot == nil || len(stored) != 15 {
		t.Fatalf("learner: snapshot kept %v, %d bytes stored", snap.Snapshot != nil, len(stored))
	}
	if _, n, body, _ := Parse(snap.Snapshot.Data); n != 5 || string(body) != "body" {
		t.Fatalf("filled header: %d pieces, body %q", n, body)
	}
}

// TestReceiverRefuses: a piece lost in the middle or at the end, an
// unfilled header, or a stream whose producer failed are each refused;
// a new stream starts afresh.
func TestReceiverRefuses(t *testing.T) {
	stream := func(fail error) []zab.Message {
		l := &link{}
		s := NewSender(context.Background(), SenderConfig{ID: 1, Send: l.send, Piece: pieceMsg, Produce: produce(4, fail)})
		s.Route([]zab.Message{snapTo(2, 1)})
		s.Wait()
		return l.take()
	}
	ok := stream(nil)
	for name, ms := range map[string][]zab.Message{
		"middle piece lost": append(append([]zab.Message{}, ok[:1]...), ok[2:]...),
		"last piece lost":   append(append([]zab.Message{}, ok[:3]...), ok[4:]...),
		"header unfilled":   append(append([]zab.Message{}, ok[:4]...), snapTo(2, 1)),
		"producer failed":   stream(errors.New("disk")),
	} {
		var r Receiver
		if snap, _ := deliver(&r, ms); snap.Snapshot != nil {
			t.Errorf("%s: accepted", name)
		}
	}
	var r Receiver
	deliver(&r, ok[:2]) // a stream cut short, then a whole one
	if snap, stored := deliver(&r, stream(nil)); snap.Snapshot == nil || len(stored) != 12 {
		t.Errorf("a whole stream after a broken one: kept %v, %d bytes", snap.Snapshot != nil, len(stored))
	}
	if r.Complete(filled(Header(nil), 7, 0), false) || !r.Complete(filled(Header(nil), 7, 0), true) {
		t.Error("an empty stream: complete only when the owner allows it")
	}
}

// TestSenderInline: an inline Sender sends what came before the SNAP,
// then the pieces and the filled SNAP, within Route, with the ids it is
// given; what follows the SNAP comes back from Route; no goroutine runs.
func TestSenderInline(t *testing.T) {
	l := &link{}
	s := NewSender(context.Background(), SenderConfig{ID: 1, Send: l.send, Piece: pieceMsg, Produce: produce(3, nil),
		Inline: true, NewID: func() uint64 { return 40 }})
	now := s.Route([]zab.Message{{Type: zab.MsgPing, To: 3}, {Type: zab.MsgCommit, To: 2}, snapTo(2, 1), {Type: zab.MsgProposal, To: 2}})
	if len(now) != 1 || now[0].Type != zab.MsgProposal {
		t.Fatalf("returned: %v", now)
	}
	sent := l.take()
	want := []zab.MsgType{zab.MsgPing, zab.MsgCommit, pieceType, pieceType, pieceType, zab.MsgSync}
	if len(sent) != len(want) {
		t.Fatalf("sent %v", sent)
	}
	for i, m := range sent {
		if m.Type != want[i] {
			t.Fatalf("sent[%d] is %v, want %v: %v", i, m.Type, want[i], sent)
		}
	}
	if id, n, _, err := Parse(sent[5].Snapshot.Data); err != nil || id != 40>>1|1 || n != 3 {
		t.Fatalf("header: id %d, %d pieces, %v", id, n, err)
	}
	var r Receiver
	if snap, stored := deliver(&r, sent); snap.Snapshot == nil || len(stored) != 9 {
		t.Fatalf("learner: snapshot kept %v, %d bytes stored", snap.Snapshot != nil, len(stored))
	}
	if now := s.Route([]zab.Message{{Type: zab.MsgNewLeader, To: 2}}); len(now) != 1 {
		t.Fatalf("after the stream: %v", now)
	}
}

// TestReceiverIgnoreGaps: the broken receiver takes a stream with a gap
// as whole (the simulator's self-test relies on it doing so).
func TestReceiverIgnoreGaps(t *testing.T) {
	store := func(bool) error { return nil }
	for _, brk := range []bool{false, true} {
		r := Receiver{Breaks: Breaks{IgnoreGaps: brk}}
		r.Piece(7, 1, store)
		r.Piece(7, 3, store)
		if got := r.Complete(filled(Header(nil), 7, 3), false); got != brk {
			t.Fatalf("IgnoreGaps=%v: a stream missing piece 2 complete=%v", brk, got)
		}
	}
}

// TestSenderNewSession: a second SNAP to the same learner abandons the
// first stream; the last SNAP sent is the second, filled in.
func TestSenderNewSession(t *testing.T) {
	l := &link{}
	block := make(chan struct{})
	first := true
	var mu sync.Mutex
	s := NewSender(context.Background(), SenderConfig{ID: 1, Send: l.send, Piece: pieceMsg,
		Produce: func(ctx context.Context, to uint64, sn *zab.Snapshot, emit func([]byte) bool) error {
			mu.Lock()
			wasFirst := first
			first = false
			mu.Unlock()
			if wasFirst {
				<-block // held until the second session's SNAP came
			}
			for range 3 {
				if !emit([]byte("x")) {
					return errors.New("stopped")
				}
			}
			return nil
		}})
	s.Route([]zab.Message{snapTo(2, 1)})
	s.Route([]zab.Message{snapTo(2, 2)})
	close(block)
	s.Wait()
	sent := l.take()
	var syncs []zab.Message
	for _, m := range sent {
		if m.Type == zab.MsgSync {
			syncs = append(syncs, m)
		}
	}
	if len(syncs) != 1 || syncs[0].Session != 2 {
		t.Fatalf("SNAPs sent: %v", syncs)
	}
	var r Receiver
	if snap, _ := deliver(&r, sent); snap.Snapshot == nil {
		t.Fatal("the second session's stream was refused")
	}
}

// TestSenderHoldBound: a stream whose held messages pass MaxHold is
// abandoned with them: nothing more goes to that learner.
func TestSenderHoldBound(t *testing.T) {
	l := &link{}
	block := make(chan struct{})
	s := NewSender(context.Background(), SenderConfig{ID: 1, Send: l.send, Piece: pieceMsg, MaxHold: 3,
		Produce: func(ctx context.Context, to uint64, sn *zab.Snapshot, emit func([]byte) bool) error {
			<-block
			if emit([]byte("x")) {
				return nil
			}
			return errors.New("stopped")
		}})
	s.Route([]zab.Message{snapTo(2, 1)})
	for range 5 {
		s.Route([]zab.Message{{Type: zab.MsgProposal, To: 2}})
	}
	close(block)
	s.Wait()
	if sent := l.take(); len(sent) != 0 {
		t.Fatalf("an abandoned stream sent %v", sent)
	}
}

// TestHeaderParse: a header round-trips; damaged ones do not parse.
func TestHeaderParse(t *testing.T) {
	h := filled(Header([]byte("tree")), 3, 4)
	if id, n, body, err := Parse(h); err != nil || id != 3 || n != 4 || string(body) != "tree" {
		t.Fatalf("parse: %d %d %q %v", id, n, body, err)
	}
	for _, bad := range [][]byte{h[:10], h[:len(h)-1], append(bytes.Clone(h), 0), []byte("not a header at all, not at all")} {
		if _, _, _, err := Parse(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

// TestLearnerSpool: an image written through a Writer in pieces, sent by
// a Sender and taken by a Learner's Intercept, reads back whole from
// Image; a SNAP without a header reads from itself; a broken stream's
// SNAP is stripped.
func TestLearnerSpool(t *testing.T) {
	image := bytes.Repeat([]byte("0123456789abcdef"), 1000) // 16,000 bytes: pieces of 4096
	l := &link{}
	s := NewSender(context.Background(), SenderConfig{ID: 1, Send: l.send,
		Piece: func(to, id, seq uint64, b []byte) zab.Message { return PieceMessage(1, to, id, seq, b) },
		Produce: func(ctx context.Context, to uint64, sn *zab.Snapshot, emit func([]byte) bool) error {
			w := NewWriter(emit, 4096)
			if _, err := w.Write(image[:5000]); err != nil {
				return err
			}
			if _, err := w.Write(image[5000:]); err != nil {
				return err
			}
			return w.Flush()
		}})
	s.Route([]zab.Message{snapTo(2, 1)})
	s.Wait()
	sent := l.take()
	fs := vfs.NewMem()
	ln := &Learner{ID: 2, Send: func([]zab.Message) {}, FS: fs, Path: "spool", Logger: slog.New(slog.DiscardHandler)}
	var snap *zab.Message
	pieces := 0
	for i := range sent {
		m := sent[i]
		if ln.Intercept(&m) {
			snap = &m
		} else {
			pieces++
		}
	}
	if pieces != 4 || snap == nil || snap.Snapshot == nil {
		t.Fatalf("%d pieces taken, SNAP %v", pieces, snap)
	}
	img, done, err := ln.Image(bytes.NewReader(snap.Snapshot.Data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(img)
	done()
	if err != nil || !bytes.Equal(got, image) {
		t.Fatalf("image from the spool: %d bytes, %v", len(got), err)
	}
	if _, err := fs.Stat("spool"); err == nil {
		t.Error("the spool outlived the install")
	}
	// Not streamed: the image is the SNAP's own bytes.
	img, done, err = ln.Image(bytes.NewReader([]byte("plain image")))
	if got, _ := io.ReadAll(img); err != nil || string(got) != "plain image" {
		t.Fatalf("plain image: %q, %v", got, err)
	}
	done()
	// A piece lost: the SNAP is stripped.
	ln2 := &Learner{ID: 2, Send: func([]zab.Message) {}, FS: vfs.NewMem(), Path: "spool", Logger: slog.New(slog.DiscardHandler)}
	for i := range sent {
		if i == 1 {
			continue
		}
		m := sent[i]
		if ln2.Intercept(&m) && m.Snapshot != nil {
			t.Fatal("a SNAP whose stream lost a piece was kept")
		}
	}
}

// slowLink is a link whose queue a reader drains slowly: Backlog is the
// bytes sent and not yet read, and the most it ever held is recorded.
type slowLink struct {
	mu      sync.Mutex
	queued  []zab.Message
	bytes   int64
	maxSeen int64
	read    []zab.Message
}

func (l *slowLink) send(ms []zab.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range ms {
		l.queued = append(l.queued, m)
		l.bytes += int64(transport.EncodedSize(m))
	}
	l.maxSeen = max(l.maxSeen, l.bytes)
}

func (l *slowLink) backlog(uint64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes
}

// readOne reads the oldest queued message, if any.
func (l *slowLink) readOne() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queued) == 0 {
		return false
	}
	m := l.queued[0]
	l.queued = l.queued[1:]
	l.bytes -= int64(transport.EncodedSize(m))
	if m.Type != zab.MsgSyncProgress {
		l.read = append(l.read, m)
	}
	return true
}

// drainUntil reads the link, what is queued at each poll, until want
// messages (progress reports aside) were read.
func (l *slowLink) drainUntil(t *testing.T, want int) []zab.Message {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "the held messages read", func() bool {
		for l.readOne() {
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.read) >= want
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.read
}

// proposal is a proposal of n bytes to peer to, its Prev naming its place.
func proposal(to uint64, i, n int) zab.Message {
	return zab.Message{Type: zab.MsgProposal, To: to, Prev: zab.Zxid(i), Entries: []zab.Entry{{Data: make([]byte, n)}}}
}

// TestSenderHoldBoundSpares: the messages of the Route call that starts a
// stream (zab's sync: a SNAP and the log after its snapshot) are not
// bounded by MaxHold, so a long tail does not abandon the stream and
// make the learner sync again; what comes in later calls is.
func TestSenderHoldBoundSpares(t *testing.T) {
	l := &link{}
	block := make(chan struct{})
	s := NewSender(context.Background(), SenderConfig{ID: 1, Send: l.send, Piece: pieceMsg, MaxHold: 1 << 10,
		Produce: func(ctx context.Context, to uint64, sn *zab.Snapshot, emit func([]byte) bool) error {
			<-block
			if emit([]byte("x")) {
				return nil
			}
			return errors.New("stopped")
		}})
	msgs := []zab.Message{snapTo(2, 1)}
	for i := range 8 {
		msgs = append(msgs, proposal(2, i, 1<<10))
	}
	s.Route(msgs)
	s.Route([]zab.Message{proposal(2, 8, 100)})
	close(block)
	s.Wait()
	sent := l.take()
	if len(sent) != 1+1+9 || sent[1].Type != zab.MsgSync || sent[10].Prev != 8 {
		t.Fatalf("the stream with its 8 KiB tail sent %d messages, want the piece, the SNAP and 9 proposals", len(sent))
	}

	block = make(chan struct{})
	s.Route(append([]zab.Message{}, msgs...))
	s.Route([]zab.Message{proposal(2, 8, 2<<10)}) // later, past MaxHold
	close(block)
	s.Wait()
	if sent := l.take(); len(sent) != 0 {
		t.Fatalf("a stream held past MaxHold after its first call sent %d messages", len(sent))
	}
}

// TestSenderPacesHeld: what a stream held (here 40 MiB of proposals, a
// SNAP's tail) leaves in order, a chunk at a time as the link drains, so
// the link never queues much more than MaxBacklog (a transport's queue
// drops what it has no room for: a tail sent at once lost the learner
// its session).
func TestSenderPacesHeld(t *testing.T) {
	l := &slowLink{}
	const maxBacklog = 8 << 20
	s := NewSender(context.Background(), SenderConfig{ID: 1, Send: l.send, Backlog: l.backlog, Piece: pieceMsg,
		Produce: produce(3, nil), MaxBacklog: maxBacklog})
	msgs := []zab.Message{snapTo(2, 1)}
	for i := range 40 {
		msgs = append(msgs, proposal(2, i, 1<<20))
	}
	if now := s.Route(msgs); len(now) != 0 {
		t.Fatalf("sent at once: %d messages", len(now))
	}
	got := l.drainUntil(t, 3+1+40)
	s.Wait()
	for i, m := range got[4:] {
		if m.Type != zab.MsgProposal || m.Prev != zab.Zxid(i) {
			t.Fatalf("held message %d out of order: %v", i, m)
		}
	}
	if got[3].Type != zab.MsgSync {
		t.Fatalf("after the pieces: %v", got[3])
	}
	if lim := int64(maxBacklog + drainChunk + 2<<20); l.maxSeen > lim {
		t.Fatalf("the link queued %d bytes at once, over %d", l.maxSeen, lim)
	}
	if now := s.Route([]zab.Message{{Type: zab.MsgPing, To: 2}}); len(now) != 1 {
		t.Fatalf("after the stream: %v", now)
	}
}

// TestSenderPacesBigSync: a sync (DIFF) whose messages to the learner
// pass MaxBacklog is sent paced and in order, with what follows it to
// that learner; a small sync and other peers' messages go at once.
func TestSenderPacesBigSync(t *testing.T) {
	l := &slowLink{}
	const maxBacklog = 4 << 20
	s := NewSender(context.Background(), SenderConfig{ID: 1, Send: l.send, Backlog: l.backlog, MaxBacklog: maxBacklog})
	diff := func(to uint64, n, size int) []zab.Message {
		ms := []zab.Message{{Type: zab.MsgSync, To: to, Sync: zab.SyncDiff}}
		for i := range n {
			ms = append(ms, proposal(to, i, size))
		}
		return append(ms, zab.Message{Type: zab.MsgNewLeader, To: to})
	}
	small := diff(3, 2, 1<<10)
	msgs := append(diff(2, 24, 1<<20), small...)
	now := s.Route(msgs)
	if len(now) != len(small) || now[0].To != 3 {
		t.Fatalf("sent at once: %d messages (want the small sync's %d)", len(now), len(small))
	}
	if now := s.Route([]zab.Message{{Type: zab.MsgCommit, To: 2}}); len(now) != 0 {
		t.Fatalf("a message behind the paced sync went at once: %v", now)
	}
	got := l.drainUntil(t, 1+24+1+1)
	s.Wait()
	if got[0].Type != zab.MsgSync || got[25].Type != zab.MsgNewLeader || got[26].Type != zab.MsgCommit {
		t.Fatalf("paced sync out of order: first %v, then %v, %v", got[0].Type, got[25].Type, got[26].Type)
	}
	for i, m := range got[1:25] {
		if m.Prev != zab.Zxid(i) {
			t.Fatalf("proposal %d out of order: %v", i, m)
		}
	}
	if lim := int64(maxBacklog + drainChunk + 2<<20); l.maxSeen > lim {
		t.Fatalf("the link queued %d bytes at once, over %d", l.maxSeen, lim)
	}
}
