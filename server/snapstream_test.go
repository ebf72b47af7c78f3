package server

import (
	"bytes"
	"context"
	"hash/crc32"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/datatree"
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
		if p[0] != piecePayloads {
			t.Fatalf("a payloads piece of kind %q", p[0])
		}
		if err := dst.storePiece(p[1:]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		ref := entryRef{zxid: int64(100 + i), length: 1 << 20, crc: crc32.Checksum(payload(1<<20, byte(i)), castagnoli)}
		if b, err := dst.read(ref); err != nil || !bytes.Equal(b, payload(1<<20, byte(i))) {
			t.Fatalf("payload %d after the stream: %v", 100+i, err)
		}
	}
	body := pieces[0][1:]
	for _, bad := range [][]byte{body[:7], body[:20], append(bytes.Clone(body[:12]), 1)} {
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

// streamStorage is a storage with a data log and a snapshot directory.
func streamStorage(t *testing.T) *storage {
	t.Helper()
	dir := t.TempDir()
	o := Options{DataDir: dir, DataLogDir: dir, RlogRoot: "/logs", TickTime: time.Hour}
	o.setDefaults()
	st := &storage{opts: &o, log: o.Logger, fs: o.FS, snapDir: filepath.Join(dir, "version-2")}
	if err := o.FS.MkdirAll(st.snapDir, 0o755); err != nil {
		t.Fatal(err)
	}
	rl := openTestLogData(t, dir)
	t.Cleanup(func() { rl.close() })
	st.rl = rl
	return st
}

// TestInterceptStream: the leader streams its tree's snapshot, then the
// payloads; a learner spools the tree, stores the payloads, keeps the
// SNAP that ends the stream whole and gives the install the tree; a SNAP
// after a lost piece loses its snapshot; payloads for a member without a
// data log fail the install with a message instead.
func TestInterceptStream(t *testing.T) {
	leaderSt := streamStorage(t)
	for i := range 6 {
		if _, err := leaderSt.rl.store(int64(100+i), payload(1<<20, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	leader := &replica{s: &Server{opts: *leaderSt.opts, store: leaderSt}, log: slog.New(slog.DiscardHandler), id: 1}
	l := &recordingTransport{}
	s := snapstream.NewSender(context.Background(), snapstream.SenderConfig{ID: 1, Send: l.Send, Produce: leader.produceSnapshot,
		Piece: func(to, id, seq uint64, b []byte) zab.Message { return snapstream.PieceMessage(1, to, id, seq, b) }})
	snap := zab.Message{Type: zab.MsgSync, From: 1, To: 2, Sync: zab.SyncSnap, Zxid: 0,
		Snapshot: &zab.Snapshot{Zxid: 0, Data: snapstream.Header(nil)}}
	s.Route([]zab.Message{snap})
	s.Wait()
	var sent []zab.Message
	for _, m := range l.take() {
		if m.Type != zab.MsgSyncProgress {
			sent = append(sent, m)
		}
	}
	learner := func(st *storage) *replica {
		rp := &replica{s: &Server{opts: *st.opts, store: st}, log: slog.New(slog.DiscardHandler), id: 2, tr: &recordingTransport{}}
		rp.learner = &snapstream.Learner{ID: 2, Send: rp.tr.Send, FS: st.fs, Path: filepath.Join(st.snapDir, "snap.spool"),
			Logger: rp.log, Take: rp.takePiece}
		return rp
	}
	play := func(rp *replica, ms []zab.Message) *zab.Message {
		var last *zab.Message
		for i := range ms {
			m := ms[i]
			if rp.learner.Intercept(&m) {
				last = &m
			}
		}
		return last
	}
	rp := learner(streamStorage(t))
	m := play(rp, sent)
	if m == nil || m.Snapshot == nil {
		t.Fatal("a whole stream's SNAP lost its snapshot")
	}
	img, done, err := rp.streamedTree(m.Snapshot.Data)
	if err != nil {
		t.Fatal(err)
	}
	var empty bytesBuffer
	if werr := datatree.New().WriteSnapshot(&empty, nil); werr != nil {
		t.Fatal(werr)
	}
	for pass := range 2 { // an install reads the image twice
		r, err := img()
		if err != nil {
			t.Fatal(err)
		}
		tree, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(tree, empty.b) || rp.s.store.rl.idx.live != 6 {
			t.Fatalf("streamedTree, pass %d: %d bytes (want %d), %v, %d payloads", pass, len(tree), len(empty.b), err, rp.s.store.rl.idx.live)
		}
	}
	done()
	if _, err := rp.s.store.fs.Stat(rp.learner.Path); err == nil {
		t.Error("the spool outlived the install")
	}
	if m := play(learner(streamStorage(t)), append([]zab.Message{}, sent[1:]...)); m.Snapshot != nil {
		t.Error("a SNAP after a lost first piece kept its snapshot")
	}
	noLogs := streamStorage(t)
	noLogs.rl = nil
	rp = learner(noLogs)
	m = play(rp, sent)
	if m.Snapshot == nil {
		t.Fatal("the stream to a member without logs was refused before the install")
	}
	if _, _, err := rp.streamedTree(m.Snapshot.Data); err == nil || !strings.Contains(err.Error(), "rlog.root") {
		t.Fatalf("install on a member without logs: %v, want the configuration named", err)
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
