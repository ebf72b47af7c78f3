package server

import (
	"bytes"
	"context"
	"hash/crc32"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/zab"
)

// recordingTransport keeps what is sent; its backlog is always empty.
type recordingTransport struct {
	mu   sync.Mutex
	sent []zab.Message
}

func (r *recordingTransport) Send(msgs []zab.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, msgs...)
}
func (r *recordingTransport) Recv() <-chan zab.Message { return nil }
func (r *recordingTransport) Stats() transport.Stats   { return transport.Stats{} }
func (r *recordingTransport) Close() error             { return nil }
func (r *recordingTransport) take() []zab.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// streamReplica is a replica with what streams use: a data log, a
// transport and options.
func streamReplica(t *testing.T, id uint64) (*replica, *recordingTransport) {
	t.Helper()
	tr := &recordingTransport{}
	o := Options{TickTime: time.Hour}
	st := &storage{rl: openTestLogData(t, t.TempDir())}
	t.Cleanup(func() { st.rl.close() })
	rp := &replica{s: &Server{opts: o, store: st}, log: slog.New(slog.DiscardHandler), id: id, tr: tr, streamCtx: context.Background()}
	return rp, tr
}

// TestStreamedSnap: a leader's SNAP with a streamed image is held while
// the payloads after the learner's last zxid go ahead of it in pieces;
// then the SNAP (its header filled in) and the messages held after it
// leave in order, and other learners' messages are not held. The
// learner stores the pieces and accepts the SNAP; a missing piece, a
// stream cut short, or pieces of another stream make it strip the SNAP.
func TestStreamedSnap(t *testing.T) {
	leader, ltr := streamReplica(t, 1)
	const n = 12
	for i := range n {
		// 1 MiB payloads: a piece holds about four.
		if _, err := leader.s.store.rl.store(int64(100+i), payload(1<<20, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	const learnerHas = 103 // the learner's log ends at 103: 104.. are sent
	img := leader.s.store.rl.streamImage([]byte("the tree"))
	snapMsg := zab.Message{Type: zab.MsgSync, From: 1, To: 2, Sync: zab.SyncSnap, Zxid: 200,
		Snapshot: &zab.Snapshot{Zxid: 200, Data: img, Learner: learnerHas}}
	leader.send([]zab.Message{
		snapMsg,
		{Type: zab.MsgProposal, From: 1, To: 2, Prev: 200},
		{Type: zab.MsgPing, From: 1, To: 3},
	})
	leader.send([]zab.Message{{Type: zab.MsgNewLeader, From: 1, To: 2}})
	leader.streamWG.Wait()
	out := ltr.take()

	// Order: the ping to 3 at once; to 2 the pieces, then SNAP, PROPOSAL,
	// NEWLEADER.
	var to2 []zab.Message
	for _, m := range out {
		if m.To == 2 {
			to2 = append(to2, m)
		}
	}
	if len(out) == 0 || out[0].To != 3 {
		t.Fatalf("the other learner's message was held: first sent %v", out[0].String())
	}
	var pieces []zab.Message
	for len(to2) > 0 && to2[0].Type == zab.MsgDriver {
		pieces, to2 = append(pieces, to2[0]), to2[1:]
	}
	if len(to2) != 3 || to2[0].Type != zab.MsgSync || to2[1].Type != zab.MsgProposal || to2[2].Type != zab.MsgNewLeader {
		t.Fatalf("after the pieces: %v", to2)
	}
	if len(pieces) < 2 {
		t.Fatalf("%d pieces for %d MiB", len(pieces), n-4)
	}
	if isStreamImage(snapMsg.Snapshot.Data) && !bytes.Equal(snapMsg.Snapshot.Data, img) {
		t.Fatal("the driver's SNAP bytes were modified")
	}

	learner, _ := streamReplica(t, 2)
	for z := int64(100); z <= learnerHas; z++ {
		if _, err := learner.s.store.rl.store(z, payload(1<<20, byte(z-100))); err != nil {
			t.Fatal(err)
		}
	}
	deliver := func(ms []zab.Message) *zab.Message {
		var snap *zab.Message
		for i := range ms {
			m := ms[i]
			switch m.Type {
			case zab.MsgDriver:
				dm, err := decodeDriverMsg(m.Entries[0].Data, 2<<20)
				if err != nil {
					t.Fatal(err)
				}
				learner.receivePayloads(m.From, &dm)
			case zab.MsgSync:
				learner.checkStreamedSnap(&m)
				snap = &m
			}
		}
		return snap
	}
	snap := deliver(append(pieces, to2[0]))
	if snap.Snapshot == nil {
		t.Fatal("the learner refused a complete stream")
	}
	tree, err := learner.s.store.rl.installStreamed(snap.Snapshot.Data)
	if err != nil || string(tree) != "the tree" {
		t.Fatalf("installStreamed: %q, %v", tree, err)
	}
	for i := range n {
		ref := entryRef{zxid: int64(100 + i), length: 1 << 20, crc: crc32.Checksum(payload(1<<20, byte(i)), castagnoli)}
		if b, err := learner.s.store.rl.read(ref); err != nil || !bytes.Equal(b, payload(1<<20, byte(i))) {
			t.Fatalf("payload %d on the learner: %v", 100+i, err)
		}
	}

	// A piece lost: the SNAP is stripped.
	learner.streamIn = streamIn{}
	if s := deliver(append(append([]zab.Message{}, pieces[0]), pieces[2:]...)); len(pieces) > 2 && s.Snapshot != nil {
		t.Error("a stream missing a piece was accepted")
	}
	// The last piece lost: the count says so.
	learner.streamIn = streamIn{}
	if s := deliver(append(append([]zab.Message{}, pieces[:len(pieces)-1]...), to2[0])); s.Snapshot != nil {
		t.Error("a stream missing its last piece was accepted")
	}
	// A header never filled in (the stream did not complete).
	learner.streamIn = streamIn{}
	if s := deliver(append(append([]zab.Message{}, pieces...), snapMsg)); s.Snapshot != nil {
		t.Error("a SNAP whose stream did not complete was accepted")
	}
	// Nothing to stream: a filled header with no pieces is complete.
	empty := leader.s.store.rl.streamImage([]byte("t"))
	copy(empty[16:], []byte{0, 0, 0, 0, 0, 0, 0, 9})
	learner.streamIn = streamIn{}
	if s := deliver([]zab.Message{{Type: zab.MsgSync, From: 1, To: 2, Sync: zab.SyncSnap, Zxid: 200,
		Snapshot: &zab.Snapshot{Zxid: 200, Data: empty}}}); s.Snapshot == nil {
		t.Error("a stream with no pieces was refused")
	}
}

// TestStreamNewSessionReplacesOld: a second SNAP to the same learner (a
// new session) replaces the first stream: the last SNAP sent is the new
// session's, complete, after every piece of its stream.
func TestStreamNewSessionReplacesOld(t *testing.T) {
	leader, ltr := streamReplica(t, 1)
	for i := range 4 {
		if _, err := leader.s.store.rl.store(int64(100+i), payload(1<<20, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	img := leader.s.store.rl.streamImage([]byte("tree"))
	for session := range uint64(2) {
		leader.send([]zab.Message{{Type: zab.MsgSync, From: 1, To: 2, Sync: zab.SyncSnap, Zxid: 200, Session: session + 1,
			Snapshot: &zab.Snapshot{Zxid: 200, Data: img}}})
	}
	leader.streamWG.Wait()
	out := ltr.take()
	last := out[len(out)-1]
	if last.Type != zab.MsgSync || last.Session != 2 {
		t.Fatalf("last message sent: %v", last.String())
	}
	id, pieces, _, err := parseStreamImage(last.Snapshot.Data)
	if err != nil || id == 0 {
		t.Fatalf("the new session's SNAP: stream %d, %v", id, err)
	}
	got := uint64(0)
	for _, m := range out {
		if m.Type != zab.MsgDriver {
			continue
		}
		dm, err := decodeDriverMsg(m.Entries[0].Data, 2<<20)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(dm.id) == id {
			got++
		}
	}
	if got != pieces || pieces == 0 {
		t.Fatalf("%d pieces of the new stream sent, its SNAP says %d", got, pieces)
	}
}
