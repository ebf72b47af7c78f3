package transport

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/corral-db/corral/zab"
)

// pipeLink gives l a live connection over net.Pipe whose writing state is
// set up but whose writer goroutine is not started: only helpSiblings
// can send its queue. Frames the far end reads arrive on the channel.
func pipeLink(t *testing.T, l *laneLink) <-chan zab.Message {
	t.Helper()
	local, remote := net.Pipe()
	t.Cleanup(func() { local.Close(); remote.Close() })
	c := &conn{nc: local, dc: &deadlineConn{c: local, timeout: time.Minute}, peer: l.peer, lane: l.lane, done: make(chan struct{})}
	l.mu.Lock()
	l.cur = c
	l.mu.Unlock()
	l.wmu.Lock()
	l.out = &linkOut{c: c, bw: bufio.NewWriterSize(c.dc, connBufSize)}
	l.wmu.Unlock()
	got := make(chan zab.Message, 16)
	go func() {
		fr := newFrameReader(&deadlineConn{c: remote, timeout: time.Minute}, connBufSize, 1<<20)
		for {
			body, err := fr.next()
			if err != nil {
				return
			}
			m, err := DecodeMessage(body)
			if err != nil {
				return
			}
			got <- m
		}
	}()
	return got
}

// linkTestTCP is a TCP with no listener or dials, for links set up by
// hand (pipeLink); it stops with the test.
func linkTestTCP(t *testing.T) *TCP {
	tr := &TCP{peers: map[uint64]*peerLink{}, log: slog.New(slog.DiscardHandler),
		cfg: TCPConfig{MaxQueueMessages: 100, MaxQueueBytes: 1 << 20, MaxElectionQueue: 4, MaxFrameBytes: 1 << 20}}
	tr.ctx, tr.cancel = context.WithCancel(context.Background())
	t.Cleanup(tr.cancel)
	return tr
}

func TestIdleWriterSendsItsSiblingsQueues(t *testing.T) {
	tr := linkTestTCP(t)
	self := tr.addPeerLocked(2, Peer{}).lanes[laneQuorum]
	idle := tr.addPeerLocked(3, Peer{}).lanes[laneQuorum]
	busy := tr.addPeerLocked(4, Peer{}).lanes[laneQuorum]
	big := tr.addPeerLocked(5, Peer{}).lanes[laneQuorum]
	idleGot := pipeLink(t, idle)
	busyGot := pipeLink(t, busy)
	bigGot := pipeLink(t, big)
	// As if it had flushed just now: stamped an hour ahead, so that it
	// still counts as recent however slowly the test gets to the help.
	busy.lastFlush.Store(monoNow() + int64(time.Hour))

	prop := zab.Message{Type: zab.MsgProposal, From: 1, To: 3, Epoch: 1, Entries: []zab.Entry{{Zxid: 0x100000001, Data: []byte("create")}}}
	idle.enqueue(prop, 64)
	busy.enqueue(prop, 64)
	big.enqueue(prop, helpSize+1)

	tr.helpSiblings(self)

	select {
	case m := <-idleGot:
		if m.Type != zab.MsgProposal || len(m.Entries) != 1 || string(m.Entries[0].Data) != "create" {
			t.Errorf("the idle link's peer read %+v", m)
		}
	case <-time.After(waitLimit):
		t.Fatal("the idle sibling's queue was not sent")
	}
	idle.mu.Lock()
	left := idle.q.len()
	idle.mu.Unlock()
	if left != 0 || idle.lastFlush.Load() == 0 || idle.sent.Load() != 1 {
		t.Errorf("idle link after the help: %d queued, lastFlush %d, sent %d", left, idle.lastFlush.Load(), idle.sent.Load())
	}
	for _, l := range []*laneLink{busy, big} {
		l.mu.Lock()
		n := l.q.len()
		l.mu.Unlock()
		if n != 1 || l.sent.Load() != 0 {
			t.Errorf("link to %d: %d queued and %d sent, want its queue left to its own writer", l.peer, n, l.sent.Load())
		}
	}
	select {
	case m := <-busyGot:
		t.Errorf("the busy link's peer read %+v", m)
	case m := <-bigGot:
		t.Errorf("the large queue's peer read %+v", m)
	default:
	}
	// Its own writer, woken later, finds the queue empty and sends
	// nothing twice.
	idle.wmu.Lock()
	ok := idle.flushLocked(idle.out)
	idle.wmu.Unlock()
	if !ok || idle.sent.Load() != 1 {
		t.Errorf("the owner's flush after the help: ok %v, sent %d", ok, idle.sent.Load())
	}
}

// TestFailedFlushKeepsNoQueueArray: a flush whose write fails must not
// leave its linkOut holding the array the queue now appends to. A
// sibling's writer may flush that linkOut once more before its writer
// clears it (helpSiblings); take would then hand the queue's own array
// out as the batch, written while Send appends to it (a race the
// detector caught in TestZabOverTCP).
func TestFailedFlushKeepsNoQueueArray(t *testing.T) {
	tr := linkTestTCP(t)
	l := tr.addPeerLocked(2, Peer{}).lanes[laneQuorum]
	got := pipeLink(t, l)
	m := zab.Message{Type: zab.MsgCommit, From: 1, To: 2, Epoch: 1, Zxid: 0x100000001}

	l.enqueue(m, 64)
	l.wmu.Lock()
	ok := l.flushLocked(l.out)
	l.wmu.Unlock()
	if !ok {
		t.Fatal("the first flush failed")
	}
	select {
	case <-got:
	case <-time.After(waitLimit):
		t.Fatal("the first flush did not arrive")
	}

	l.enqueue(m, 64)
	out := l.out
	out.c.nc.Close() // the next write fails
	l.wmu.Lock()
	ok = l.flushLocked(out)
	l.wmu.Unlock()
	if ok {
		t.Fatal("a flush on a closed connection succeeded")
	}
	l.enqueue(m, 64)
	l.mu.Lock()
	defer l.mu.Unlock()
	if cap(out.spare) > 0 && len(l.q.msgs) > 0 && &out.spare[:1][0] == &l.q.msgs[0] {
		t.Fatal("after a failed write the linkOut's spare is the queue's array")
	}
}
