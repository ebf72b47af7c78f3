package transport

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/internal/probe"
	"github.com/corral-db/corral/zab"
)

// connBufSize is the bufio buffer of each connection's reader and writer.
const connBufSize = 64 << 10

// yieldWindow: a writer woken within this long of its last flush
// yields before taking its queue (see laneLink.write).
const yieldWindow = 100 * time.Microsecond

// maxScratch is the largest encoding buffer a writer keeps between
// batches; a larger one (a big DIFF) is left to the garbage collector.
const maxScratch = 4 << 20

// laneLink is the link to one peer for one lane: its queue and its live
// connection, if any. Messages are queued only while a connection is live;
// when it ends the queue is emptied, as a broken TCP connection loses
// what it had in flight.
type laneLink struct {
	t    *TCP
	peer uint64
	lane lane
	log  *slog.Logger

	mu  sync.Mutex
	q   queue
	cur *conn
	// notify wakes the writer of cur; one pending signal is enough since
	// the writer takes the whole queue.
	notify chan struct{}

	// wmu is held while a batch is taken from q and written to out's
	// connection: by that connection's writer goroutine, or by another
	// link's writer helping (helpSiblings). It guards out. Lock order:
	// wmu before mu; a writer holds at most one wmu at a time.
	wmu sync.Mutex
	out *linkOut
	// lastFlush is when a batch last left, in nanoseconds of the
	// process's monotonic clock (monoNow), 0 before the first.
	lastFlush atomic.Int64

	sent, received, droppedFull, droppedDown, droppedTooLarge atomic.Uint64
	connects, disconnects                                     atomic.Uint64
}

// linkOut is a live connection's writing state, guarded by its link's
// wmu.
type linkOut struct {
	c       *conn
	bw      *bufio.Writer
	scratch []byte
	spare   []queued
}

// monoEpoch anchors monoNow.
var monoEpoch = time.Now()

// monoNow is the time since monoEpoch on the monotonic clock.
func monoNow() int64 { return int64(time.Since(monoEpoch)) }

// conn is one established (or handshaking) connection.
type conn struct {
	nc   net.Conn
	dc   *deadlineConn
	peer uint64
	lane lane

	once   sync.Once
	reason error
	done   chan struct{}
}

// close closes the connection, recording the first reason given.
func (c *conn) close(reason error) {
	c.once.Do(func() {
		c.reason = reason
		c.nc.Close()
		close(c.done)
	})
}

func (ll *laneLink) enqueue(m zab.Message, size int) {
	ll.mu.Lock()
	if ll.cur == nil {
		ll.mu.Unlock()
		ll.droppedDown.Add(1)
		return
	}
	ok, evicted := ll.q.push(m, size)
	ll.mu.Unlock()
	if evicted > 0 {
		ll.droppedFull.Add(uint64(evicted))
	}
	if !ok {
		ll.droppedFull.Add(1)
		return
	}
	select {
	case ll.notify <- struct{}{}:
	default:
	}
}

// attach makes c the live connection, closing the one it replaces (a
// peer that reconnects has given up on its old connection, perhaps
// before this side noticed it broke).
func (ll *laneLink) attach(c *conn) {
	ll.mu.Lock()
	old := ll.cur
	ll.cur = c
	ll.mu.Unlock()
	if old != nil {
		old.close(errors.New("replaced by a new connection from the peer"))
		// Report the old connection's end now, before the new one's reader
		// starts: reported later by the old connection's goroutine, it
		// could reach zab after the peer's first message on the new one
		// and make a leader drop the session the peer just opened.
		ll.reportDisconnect()
	}
	ll.connects.Add(1)
}

// reportDisconnect tells the driver that the quorum connection with the
// peer ended.
func (ll *laneLink) reportDisconnect() {
	if f := ll.t.cfg.OnDisconnect; f != nil && ll.lane == laneQuorum {
		f(ll.peer)
	}
}

// reportProgress tells the driver that a chunk of a large frame to or
// from the peer moved (TCPConfig.OnProgress).
func (ll *laneLink) reportProgress() {
	if f := ll.t.cfg.OnProgress; f != nil && ll.lane == laneQuorum {
		f(ll.peer)
	}
}

// detach forgets c if it is still the live connection and drops what was
// queued for it.
func (ll *laneLink) detach(c *conn) (current bool) {
	ll.mu.Lock()
	var lost int
	if ll.cur == c {
		ll.cur = nil
		lost = len(ll.q.take(nil))
		current = true
	}
	ll.mu.Unlock()
	ll.droppedDown.Add(uint64(lost))
	ll.disconnects.Add(1)
	return current
}

// take hands c's writer the queued messages; ok is false if c is no longer
// the live connection, in which case the wake-up it consumed is passed on
// to the writer of the connection that replaced it.
// spare is the writer's previous batch, all sent (see queue.take).
func (ll *laneLink) take(c *conn, spare []queued) (batch []queued, ok bool) {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	if ll.cur != c {
		select {
		case ll.notify <- struct{}{}:
		default:
		}
		return nil, false
	}
	return ll.q.take(spare), true
}

// serve runs an established connection until it ends: a reader goroutine
// delivers to Recv, this goroutine writes.
func (ll *laneLink) serve(c *conn) {
	ll.attach(c)
	ll.log.Info("transport: connected", "remote", c.nc.RemoteAddr().String())
	readerDone := make(chan struct{})
	ll.t.wg.Add(1)
	go func() {
		defer ll.t.wg.Done()
		defer close(readerDone)
		ll.read(c)
	}()
	ll.write(c)
	current := ll.detach(c)
	<-readerDone
	level := slog.LevelInfo
	if errors.Is(c.reason, ErrMalformed) || errors.Is(c.reason, ErrChecksum) || errors.Is(c.reason, ErrFrameTooLarge) {
		level = slog.LevelWarn
	}
	ll.log.Log(ll.t.ctx, level, "transport: disconnected", "remote", c.nc.RemoteAddr().String(), "reason", c.reason)
	if current { // a replaced connection was reported by attach
		ll.reportDisconnect()
	}
}

// write sends queued messages in batches: all that is queued is encoded
// into the buffered writer and flushed once.
func (ll *laneLink) write(c *conn) {
	c.dc.progress = ll.reportProgress
	out := &linkOut{c: c, bw: bufio.NewWriterSize(c.dc, connBufSize)}
	ll.wmu.Lock()
	ll.out = out
	ll.wmu.Unlock()
	defer func() {
		ll.wmu.Lock()
		if ll.out == out {
			ll.out = nil
		}
		ll.wmu.Unlock()
	}()
	for {
		select {
		case <-c.done:
			return
		case <-ll.notify:
		}
		// A link that flushed moments ago is busy: let whatever else is
		// runnable go first. The driver that woke this writer is often
		// about to queue more for the same peer (the next proposals, a
		// commit), and the reader goroutines have acks and requests
		// waiting to reach it; taking the queue after them sends that in
		// the same write. Under 60 synchronous clients on a diskless
		// ensemble (scripts/probe/diskless-cpu.sh) yielding cut the
		// members' write syscalls per create from 2.08 to 1.39. A link
		// idle for longer carries one write at a time (a sequential
		// client's proposal), and there the yield only delays it: the
		// writer waits for the rest of its P's run queue, tens of
		// microseconds on a busy machine.
		busy := ll.busy(monoNow())
		if busy {
			runtime.Gosched()
		}
		ll.wmu.Lock()
		ok := ll.flushLocked(out)
		ll.wmu.Unlock()
		if !ok {
			return
		}
		if !busy {
			ll.t.helpSiblings(ll)
		}
	}
}

// flushLocked takes what is queued and writes it to out's connection; false
// if the connection is no longer usable (replaced or failed; it is closed).
// wmu is held.
func (ll *laneLink) flushLocked(out *linkOut) bool {
	c := out.c
	batch, ok := ll.take(c, out.spare)
	// The spare array is the queue's now: out must not hand it to take
	// again (a write error below returns without a new spare; a later
	// flush of this out, by a sibling's writer, would then make the
	// queue and its batch one array, appended to while it is written).
	out.spare = nil
	if !ok {
		c.close(errors.New("replaced by a new connection from the peer"))
		return false
	}
	if len(batch) == 0 { // a sibling's writer sent it (helpSiblings)
		out.spare = batch
		return true
	}
	var err error
	for i := range batch {
		var head, tail []byte
		head, tail = encodeHead(out.scratch[:0], batch[i].m)
		if err = writeFrame(out.bw, head, tail); err != nil {
			break
		}
		out.scratch = head
		batch[i] = queued{} // let the entries go as soon as written
	}
	if err == nil {
		err = out.bw.Flush()
	}
	if cap(out.scratch) > maxScratch {
		out.scratch = nil
	}
	if err != nil {
		// Some of the batch may have reached the peer; it cannot be
		// known which, and zab does not need to.
		ll.droppedDown.Add(uint64(len(batch)))
		c.close(fmt.Errorf("write: %w", err))
		return false
	}
	ll.sent.Add(uint64(len(batch)))
	out.spare = batch
	ll.lastFlush.Store(monoNow())
	probe.Mark("tr-flushed", 0)
	return true
}

// helpSize bounds what a writer sends for another link (helpSiblings).
const helpSize = connBufSize

// helpSiblings sends, from the writer of self that has just flushed an
// idle link, what the same lane's links to the other peers have queued
// and their own writers have not taken yet. A leader's proposal goes to
// every follower at once, and each link's writer is a goroutine to wake:
// the first to run sends its own and then the others', rather than the
// others waiting for a thread of their own (on a busy machine the second
// follower's proposal left tens of microseconds after the first). A link
// whose writer is at work (its wmu held), or with more than helpSize
// queued, or that flushed within yieldWindow, is left to it; a busy
// link's writer does not help, so under load each writer still gathers
// its own batches.
func (t *TCP) helpSiblings(self *laneLink) {
	var buf [8]*laneLink
	links := buf[:0]
	t.peersMu.RLock()
	for _, id := range t.ids {
		if l := t.peers[id].lanes[self.lane]; l != nil && l != self {
			links = append(links, l)
		}
	}
	t.peersMu.RUnlock()
	now := monoNow()
	for _, l := range links {
		if l.busy(now) || !l.waiting(helpSize) || !l.wmu.TryLock() {
			continue // a busy link's writer gathers its own batch
		}
		if out := l.out; out != nil {
			l.flushLocked(out)
		}
		l.wmu.Unlock()
	}
}

// busy reports whether the link flushed less than yieldWindow before now
// (monoNow).
func (ll *laneLink) busy(now int64) bool {
	last := ll.lastFlush.Load()
	return last != 0 && now-last < int64(yieldWindow)
}

// waiting reports whether the link has messages queued, at most limit
// bytes of them.
func (ll *laneLink) waiting(limit int64) bool {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	return ll.q.len() > 0 && ll.q.bytes <= limit
}

// read delivers the connection's messages to Recv, in order. A frame
// that is malformed, too large, fails its CRC, or carries a message that
// does not belong on this connection closes the connection (and only
// it).
func (ll *laneLink) read(c *conn) {
	fr := newFrameReader(c.dc, connBufSize, ll.t.cfg.MaxFrameBytes)
	fr.progress = ll.reportProgress
	for {
		body, err := fr.next()
		if err != nil {
			c.close(fmt.Errorf("read: %w", err))
			return
		}
		m, err := DecodeMessage(body)
		if err == nil {
			err = ll.check(m)
		}
		if err != nil {
			c.close(err)
			return
		}
		ll.received.Add(1)
		if probe.Enabled {
			probe.Mark("tr-rx-"+m.Type.String(), probe.MsgZxid(m))
		}
		select {
		case ll.t.recv <- m:
		case <-c.done:
			return
		}
	}
}

// check refuses a message that did not come from where it claims: zab
// trusts From, and the handshake established who is at the other end.
func (ll *laneLink) check(m zab.Message) error {
	switch {
	case m.From != ll.peer:
		return fmt.Errorf("%w: %v claims to be from %d on the connection of server %d", ErrMalformed, m.Type, m.From, ll.peer)
	case m.To != ll.t.cfg.ID:
		return fmt.Errorf("%w: %v addressed to %d, this is server %d", ErrMalformed, m.Type, m.To, ll.t.cfg.ID)
	case laneOf(m.Type) != ll.lane:
		return fmt.Errorf("%w: %v on the %s connection", ErrMalformed, m.Type, ll.lane)
	}
	return nil
}
