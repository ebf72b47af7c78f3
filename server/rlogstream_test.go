package server

import (
	"bytes"
	"context"
	"hash/crc32"
	"log/slog"
	"testing"
	"time"

	"github.com/corral-db/corral/replica/snapstream"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/zab"
)

// TestLogPayloadStream: the leader's pieces carry the payloads after the
// learner's last zxid, about streamPieceBytes each; a learner holding
// those up to it stores the pieces and then reads every payload; a
// damaged piece is refused; a payload released while listed stops the
// stream with an error.
func TestLogPayloadStream(t *testing.T) {
	src := openTestLogData(t, t.TempDir())
	defer src.close()
	const n = 12
	for i := range n {
		if _, err := src.store(int64(100+i), payload(1<<20, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	const learnerHas = 103
	var pieces [][]byte
	err := src.produceLogPayloads(context.Background(), 2, &zab.Snapshot{Zxid: 200, Learner: learnerHas},
		func(b []byte) bool { pieces = append(pieces, bytes.Clone(b)); return true })
	if err != nil || len(pieces) < 2 || len(pieces) > 3 {
		t.Fatalf("%d pieces for %d MiB: %v", len(pieces), n-4, err)
	}
	dst := openTestLogData(t, t.TempDir())
	defer dst.close()
	for z := int64(100); z <= learnerHas; z++ {
		if _, err := dst.store(z, payload(1<<20, byte(z-100))); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pieces {
		if err := dst.storePiece(p); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		ref := entryRef{zxid: int64(100 + i), length: 1 << 20, crc: crc32.Checksum(payload(1<<20, byte(i)), castagnoli)}
		if b, err := dst.read(ref); err != nil || !bytes.Equal(b, payload(1<<20, byte(i))) {
			t.Fatalf("payload %d after the stream: %v", 100+i, err)
		}
	}
	for _, bad := range [][]byte{pieces[0][:7], pieces[0][:20], append(bytes.Clone(pieces[0][:12]), 1)} {
		if err := dst.storePiece(bad); err == nil {
			t.Errorf("a damaged piece of %d bytes was stored", len(bad))
		}
	}
	// Released after the stream listed it (its first piece is out).
	release := func([]byte) bool {
		src.mu.Lock()
		src.releaseLocked(110)
		src.mu.Unlock()
		return true
	}
	if err := src.produceLogPayloads(context.Background(), 2, &zab.Snapshot{Zxid: 200, Learner: 0}, release); err == nil {
		t.Fatal("a stream missing a released payload completed")
	}
}

// TestInterceptStream: a member with logs stores a stream's pieces as
// they come and keeps the SNAP that ends it whole; a SNAP after a lost
// piece loses its snapshot; an empty stream (the learner held every
// payload) is whole.
func TestInterceptStream(t *testing.T) {
	src := openTestLogData(t, t.TempDir())
	defer src.close()
	for i := range 6 {
		if _, err := src.store(int64(100+i), payload(1<<20, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	l := &recordingTransport{}
	s := snapstream.NewSender(context.Background(), snapstream.SenderConfig{ID: 1, Send: l.Send, Produce: src.produceLogPayloads,
		Piece: func(to, id, seq uint64, b []byte) zab.Message { return snapstream.PieceMessage(1, to, id, seq, b) }})
	snap := zab.Message{Type: zab.MsgSync, From: 1, To: 2, Sync: zab.SyncSnap, Zxid: 200,
		Snapshot: &zab.Snapshot{Zxid: 200, Data: snapstream.Header([]byte("tree"))}}
	s.Route([]zab.Message{snap}, func(zab.Message) int { return 1 })
	s.Wait()
	var sent []zab.Message
	for _, m := range l.take() {
		if m.Type != zab.MsgSyncProgress {
			sent = append(sent, m)
		}
	}
	learner := func() *replica {
		st := &storage{rl: openTestLogData(t, t.TempDir())}
		t.Cleanup(func() { st.rl.close() })
		return &replica{s: &Server{opts: Options{TickTime: time.Hour}, store: st}, log: slog.New(slog.DiscardHandler), id: 2, tr: &recordingTransport{}}
	}
	play := func(rp *replica, ms []zab.Message) *zab.Message {
		var last *zab.Message
		for i := range ms {
			m := ms[i]
			if rp.interceptStream(&m) {
				last = &m
			}
		}
		return last
	}
	rp := learner()
	if m := play(rp, sent); m == nil || m.Snapshot == nil {
		t.Fatal("a whole stream's SNAP lost its snapshot")
	}
	tree, err := rp.s.store.rl.installStreamed(sent[len(sent)-1].Snapshot.Data)
	if err != nil || string(tree) != "tree" || rp.s.store.rl.idx.live != 6 {
		t.Fatalf("installStreamed: %q, %v, %d payloads", tree, err, rp.s.store.rl.idx.live)
	}
	if m := play(learner(), append([]zab.Message{}, sent[1:]...)); m.Snapshot != nil {
		t.Error("a SNAP after a lost first piece kept its snapshot")
	}
	empty := snap
	empty.Snapshot = &zab.Snapshot{Zxid: 200, Data: sent[len(sent)-1].Snapshot.Data}
	binary := bytes.Clone(empty.Snapshot.Data)
	binary[31] = 0 // zero pieces
	empty.Snapshot.Data = binary
	if m := play(learner(), []zab.Message{empty}); m.Snapshot == nil {
		t.Error("an empty stream's SNAP lost its snapshot")
	}
}

// recordingTransport keeps what is sent.
type recordingTransport struct {
	sent []zab.Message
}

func (r *recordingTransport) Send(msgs []zab.Message)  { r.sent = append(r.sent, msgs...) }
func (r *recordingTransport) Recv() <-chan zab.Message { return nil }
func (r *recordingTransport) Stats() transport.Stats   { return transport.Stats{} }
func (r *recordingTransport) Close() error             { return nil }
func (r *recordingTransport) take() []zab.Message {
	out := r.sent
	r.sent = nil
	return out
}
