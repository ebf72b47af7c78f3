package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/probe"
	"github.com/corral-db/corral/server/flw"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// replica drives a zab.Node for a server in an ensemble. Its node loop
// (run) is the only goroutine that takes Ready from the node; everything
// else talks to the node under mu.
//
// The path of a write on the leader: prep (on the submitting goroutine,
// under prepMu and mu) asks zab for the next zxid, builds the transaction
// with it and proposes it; the node loop appends it to the in-memory log,
// hands it to the log goroutine (logLoop: WAL append, group fsync, then
// Persisted) and sends the proposals; once a quorum acknowledged it, it
// comes back in Ready.Committed and goes to the apply goroutine. On a
// learner, a write is forwarded to the leader (forward.go) and answered
// when its transaction is applied here.
type replica struct {
	s   *Server
	log *slog.Logger
	id  uint64
	ens *Ensemble
	ms  *zab.MemoryStorage
	tr  transport.Transport
	// prevSnap is the zxid of the newest snapshot, the one compact cuts
	// the log at when the next is written (diskless): the snapshot loaded
	// at start or installed from the leader, where the in-memory log
	// begins, until the first busy snapshot.
	prevSnap atomic.Int64
	// snapInstalls counts the leader's snapshots installed (SNAP syncs).
	snapInstalls atomic.Int64
	// snapSentTo holds the learners sent a snapshot (SNAP) that have not
	// synchronized yet (see releaseAfterSnapSent), under snapSentMu;
	// snapSent says it is not empty. Snapshots are attached by the run
	// goroutine and, in sync mode, by the log goroutine.
	snapSentMu sync.Mutex
	snapSentTo map[uint64]struct{}
	snapSent   atomic.Bool

	// mu guards node and what changes with it atomically.
	mu   sync.Mutex
	node *zab.Node
	// gen counts the Readys that truncated the log or installed a
	// snapshot: a Persisted report for entries appended before is stale.
	gen uint64
	// inflight maps the zxids this leader proposed to their requests.
	inflight map[int64]*request
	// confirms are syncs waiting for a leadership confirmation round.
	confirms []confirmWait

	// hs is the hard state last written (node loop only).
	hs zab.HardState
	// diskless: no transaction log; entries are durable once in memory.
	diskless bool

	soft atomic.Pointer[zab.SoftState]
	// writable: this server is the established leader and has applied its
	// initial history, so prep sees the whole committed state.
	writable atomic.Bool
	// readyAt is the zxid a new leader must apply before it is writable.
	readyAt atomic.Int64
	// writableNow is closed when the server becomes writable.
	wmu         sync.Mutex
	writableNow chan struct{}

	kick  chan struct{}
	logCh chan logOp
	// fwdIn feeds the leader's forwarded requests and syncs to fwdLoop.
	fwdIn chan fwdIn
	// fwdQueued counts forwarded messages queued for or inside fwdLoop.
	fwdQueued atomic.Int64

	fw forwarder

	// bmu guards barriers: syncs waiting for the tree to reach a zxid.
	bmu      sync.Mutex
	barriers []*request

	// leadingSince is when this server last became writable (unix nanos).
	leadingSince atomic.Int64

	// lastTouch is when the learner last reported its sessions (node loop).
	lastTouch int64
}

// subTicks is how many zab ticks make one tickTime.
const subTicks = 10

// logOp is one piece of work for the log goroutine.
type logOp struct {
	entries  []zab.Entry
	gen      uint64
	truncate *zab.Zxid
	done     chan error
}

// fwdIn is a forwarded message waiting for the leader's fwdLoop.
type fwdIn struct {
	from uint64
	msg  driverMsg
}

func newReplica(s *Server, st *storage, tree *datatree.Tree) (*replica, error) {
	ens := s.opts.Ensemble
	rp := &replica{
		s:        s,
		log:      s.log,
		id:       ens.ID,
		ens:      ens,
		ms:       zab.NewMemoryStorage(),
		inflight: map[int64]*request{},
		kick:     make(chan struct{}, 1),
		logCh:    make(chan logOp, 1024),
		fwdIn:    make(chan fwdIn, 4096),
	}
	rp.fw.init()
	rp.readyAt.Store(-1)
	rp.writableNow = make(chan struct{})
	hs, err := st.readHardState()
	if err != nil {
		return nil, fmt.Errorf("read epochs: %w", err)
	}
	rp.hs = hs
	snapZxid := tree.LastZxid()
	rp.ms.SetHardState(hs)
	rp.ms.ApplySnapshot(zab.Snapshot{Zxid: zab.Zxid(snapZxid)})
	if err := rp.ms.Append(st.recovered); err != nil {
		return nil, fmt.Errorf("recovered log: %w", err)
	}
	st.recovered = nil
	st.onSnapshot = rp.compact
	// zab takes every entry in Storage as durable; records a crashed
	// process left in the page cache are made so before it starts.
	if st.wal != nil {
		if err := st.wal.Sync(); err != nil {
			return nil, fmt.Errorf("sync the recovered log: %w", err)
		}
	}
	rp.diskless = s.opts.Durability == DurabilityDiskless
	// Diskless: a server restarted from a busy (fuzzy) snapshot holds an
	// unknown prefix of what it acknowledged; it must not vote or count
	// until a leader has synchronized it. One that never took part in an
	// epoch acknowledged nothing.
	recovering := rp.diskless && !st.complete && (hs.AcceptedEpoch > 0 || hs.CurrentEpoch > 0)
	node, err := zab.NewNode(zab.Config{
		ID:        ens.ID,
		Voters:    ens.Voters,
		Observers: ens.Observers,
		// zab counts in sub-ticks, a tenth of tickTime, so its retries
		// (votes, a lost FOLLOWERINFO) come within a fraction of a tick
		// while initLimit and syncLimit keep ZooKeeper's meaning in
		// wall-clock time. The leader pings twice a tick, as ZooKeeper's.
		ElectionTick:  2,
		HeartbeatTick: subTicks / 2,
		InitLimit:     ens.InitLimit * subTicks,
		SyncLimit:     ens.SyncLimit * subTicks,
		Storage:       rp.ms,
		Applied:       zab.Zxid(snapZxid),
		Recovering:    recovering,
		// Peer acknowledgements (zab/peer_ack.go) let a follower commit
		// without waiting for the leader's COMMIT, which shortens a write
		// that waits for the disks. A diskless member acknowledges at once
		// and is CPU-bound under load: there the extra messages cost 4% of
		// Fig. 5.1's create throughput (27.8k/28.1k creates/s without
		// them, 26.9k/26.5k with, alternating builds) for a latency that
		// no disk holds up.
		DisablePeerAcks: rp.diskless,
		Rand:            rand.New(rand.NewPCG(ens.ID, uint64(time.Now().UnixNano()))),
		Logger:          s.log.With("zab", ens.ID),
	})
	if err != nil {
		return nil, err
	}
	rp.node = node
	// A restarted server's log begins at its snapshot: its first busy
	// snapshot keeps the log back to there, so that, leading, it can
	// still bring a member restarted from an older snapshot up by DIFF
	// (the Fig. 5.4 trials' third and later kills: with the cut at its
	// first busy snapshot, a leader that had itself restarted sent SNAPs).
	rp.prevSnap.Store(snapZxid)
	last, _ := rp.ms.LastZxid()
	s.log.Info("replica ready", "id", ens.ID, "recovering", recovering, "voters", ens.Voters, "observers", ens.Observers,
		"acceptedEpoch", hs.AcceptedEpoch, "currentEpoch", hs.CurrentEpoch,
		"snapshot", hex(snapZxid), "lastLogged", hex(int64(last)))
	return rp, nil
}

// start opens the transport and runs the replica's goroutines until ctx
// ends.
func (rp *replica) start(ctx context.Context, wg *sync.WaitGroup) error {
	tr, err := transport.NewTCP(ctx, transport.TCPConfig{
		ID:            rp.id,
		Peers:         rp.ens.Peers,
		MaxFrameBytes: 1 << 30,
		TLS:           rp.ens.QuorumTLS,
		OnDisconnect: func(peer uint64) {
			rp.mu.Lock()
			rp.node.ReportUnreachable(peer)
			rp.mu.Unlock()
			rp.wake()
		},
		Logger: rp.log,
	})
	if err != nil {
		return fmt.Errorf("open quorum and election ports: %w", err)
	}
	rp.tr = tr
	wg.Add(3)
	go func() { defer wg.Done(); rp.run(ctx) }()
	go func() { defer wg.Done(); rp.logLoop() }()
	go func() { defer wg.Done(); rp.fwdLoop(ctx) }()
	return nil
}

func (rp *replica) wake() {
	select {
	case rp.kick <- struct{}{}:
	default:
	}
}

// run is the node loop: ticks, messages from peers, and every Ready.
func (rp *replica) run(ctx context.Context) {
	defer func() {
		rp.tr.Close()
		close(rp.logCh)
		rp.abandonAll(errors.New("server shutting down"))
	}()
	tick := time.NewTicker(rp.s.opts.TickTime / subTicks)
	defer tick.Stop()
	n := 0
	recv := rp.tr.Recv()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			rp.mu.Lock()
			rp.node.Tick()
			rp.mu.Unlock()
			if n++; n%(subTicks/2) == 0 {
				rp.onTick()
			}
		case m, ok := <-recv:
			if !ok {
				return
			}
			rp.receive(m)
			for i := 0; i < 256; i++ {
				select {
				case m, ok = <-recv:
					if !ok {
						return
					}
					rp.receive(m)
					continue
				default:
				}
				break
			}
		case <-rp.kick:
		}
		rp.process()
		rp.releaseConfirmed()
		if rp.snapSent.Load() {
			rp.releaseAfterSnapSent()
		}
	}
}

// releaseAfterSnapSent returns the memory of the snapshots sent to
// learners (memory.go) once none of them is still joining: each learner
// acknowledged NEWLEADER, which followed its snapshot on the same link,
// or left.
func (rp *replica) releaseAfterSnapSent() {
	rp.mu.Lock()
	st := rp.node.Status()
	rp.mu.Unlock()
	rp.snapSentMu.Lock()
	defer rp.snapSentMu.Unlock()
	if st.State == zab.StateLeading {
		for _, l := range st.Learners {
			if _, ok := rp.snapSentTo[l.ID]; ok && !l.Synced {
				return
			}
		}
	}
	clear(rp.snapSentTo)
	rp.snapSent.Store(false)
	rp.s.releaseMemory("sending a snapshot to a learner")
}

// receive steps one message from a peer.
func (rp *replica) receive(m zab.Message) {
	if probe.Enabled {
		probe.Mark("node-rx-"+m.Type.String(), probe.MsgZxid(m))
	}
	if m.Type == zab.MsgDriver {
		rp.receiveDriver(m)
		return
	}
	rp.mu.Lock()
	err := rp.node.Step(m)
	rp.mu.Unlock()
	if err != nil {
		rp.log.Warn("message refused", "msg", m.String(), "err", err)
	}
}

// process handles every Ready the node has, in the order zab.Ready
// documents.
func (rp *replica) process() {
	for {
		rp.mu.Lock()
		if !rp.node.HasReady() {
			rp.mu.Unlock()
			return
		}
		rd := rp.node.Ready()
		if rd.Truncate != nil || rd.Snapshot != nil {
			rp.gen++
		}
		gen := rp.gen
		batch, lost := rp.committedRequests(rd.Committed)
		rp.mu.Unlock()
		for _, r := range lost {
			rp.s.abandon(r, errors.New("forwarded request lost on the way to the leader"))
		}

		if rd.SoftState != nil {
			rp.setSoft(*rd.SoftState)
		}
		if rd.Snapshot != nil {
			rp.installSnapshot(*rd.Snapshot)
		}
		if rd.Truncate != nil {
			if err := rp.ms.Truncate(*rd.Truncate); err != nil {
				rp.s.fatal("truncating the in-memory log failed", err)
			}
		}
		if rd.Truncate != nil && !rp.diskless {
			done := make(chan error, 1)
			rp.logCh <- logOp{truncate: rd.Truncate, done: done}
			if err := <-done; err != nil {
				rp.s.fatal("truncating the transaction log failed", err)
			}
		}
		if len(rd.Entries) > 0 {
			if err := rp.ms.Append(rd.Entries); err != nil {
				rp.s.fatal("appending to the in-memory log failed", err)
			}
			if !rp.diskless {
				probe.Mark("node-to-log", int64(rd.Entries[len(rd.Entries)-1].Zxid))
				rp.logCh <- logOp{entries: rd.Entries, gen: gen}
			}
		}
		if rd.HardState != nil {
			if err := rp.s.store.writeHardState(*rd.HardState, rp.hs); err != nil {
				rp.s.fatal("writing the epochs failed", err)
			}
			rp.hs = *rd.HardState
			rp.ms.SetHardState(rp.hs)
		}
		if len(rd.Messages) > 0 {
			rp.attachSnapshots(rd.Messages)
			if probe.Enabled {
				for _, m := range rd.Messages {
					probe.Mark("node-send-"+m.Type.String(), probe.MsgZxid(m))
				}
			}
			rp.tr.Send(rd.Messages)
		}
		if len(batch) > 0 {
			probe.Mark("node-to-apply", batch[len(batch)-1].hdr.Zxid)
			rp.s.applyCh <- batch
		}
		rp.mu.Lock()
		rp.node.RecycleMessages(rd.Messages)
		rp.node.Advance(rd)
		if rp.diskless && len(rd.Entries) > 0 {
			// Diskless: a proposal is as durable as it gets once in
			// memory.
			rp.node.Persisted(rd.Entries[len(rd.Entries)-1].Zxid)
		}
		rp.mu.Unlock()
	}
}

// committedRequests turns committed entries into requests for apply: the
// leader's own proposals and this learner's forwarded writes are matched
// to the requests waiting for them; other servers' get a request without
// a connection. Called under mu.
func (rp *replica) committedRequests(ents []zab.Entry) (out, lost []*request) {
	if len(ents) == 0 {
		return nil, nil
	}
	out = make([]*request, 0, len(ents))
	for _, e := range ents {
		z := int64(e.Zxid)
		if r, ok := rp.inflight[z]; ok {
			delete(rp.inflight, z)
			rp.s.met.committed(r)
			out = append(out, r)
			continue
		}
		var h txn.Header
		var tx txn.Txn
		if err := txn.Decode(e.Data, &h, &tx); err != nil {
			rp.s.fatal("committed transaction does not decode", fmt.Errorf("%s: %w", hex(z), err))
			return out, lost
		}
		h.Zxid = z
		r, l := rp.fw.match(h.SessionID, h.Cxid)
		lost = append(lost, l...)
		if r == nil {
			r = &request{sid: h.SessionID, xid: h.Cxid, op: h.Type, kind: kindWrite}
		}
		r.hdr, r.tx = h, tx
		out = append(out, r)
	}
	return out, lost
}

// setSoft reacts to a change of role or phase. Leaving broadcast (or
// changing leader) closes every client connection and fails what is in
// flight, as a ZooKeeper server does when it loses its leader: clients
// reconnect, to this server once it serves again or to another.
func (rp *replica) setSoft(ss zab.SoftState) {
	prev := rp.soft.Swap(&ss)
	rp.s.met.zabState(ss)
	if rp.diskless && ss.State == zab.StateLooking && prev != nil && prev.State != zab.StateLooking {
		// The thesis's checkpoints (Algorithms 4.2, 4.3): leaving a
		// leader or a quorum, write a complete snapshot, accepted
		// proposals included, before taking part in the election.
		rp.checkpoint()
	}
	if rp.diskless && ss.State != zab.StateLooking && (prev == nil || prev.State == zab.StateLooking) {
		// Joining (or leading) means acknowledging what no checkpoint
		// holds: the checkpoint no longer covers this server.
		if err := rp.s.store.invalidateCheckpoints(); err != nil {
			rp.s.fatal("removing checkpoints failed", err)
		}
	}
	rp.log.Info("zab state", "state", ss.State.String(), "phase", ss.Phase.String(),
		"leader", ss.Leader, "epoch", ss.Epoch, "recovering", ss.Recovering)
	changed := prev == nil || prev.Leader != ss.Leader || prev.Epoch != ss.Epoch ||
		prev.State != ss.State || ss.Phase != zab.PhaseBroadcast
	if changed && rp.s.serving.Load() {
		rp.s.serving.Store(false)
		rp.setWritable(false)
		rp.abandonAll(errors.New("leader changed"))
		rp.s.closeClients(errors.New("not following a leader any more"))
	}
	if ss.Phase != zab.PhaseBroadcast {
		return
	}
	if ss.State == zab.StateLeading {
		// Sessions get a full timeout under a new leader (their touches
		// went to the old one).
		rp.s.sessions.touchAll()
		rp.mu.Lock()
		last := rp.node.Status().LastZxid
		rp.mu.Unlock()
		rp.readyAt.Store(int64(last))
		rp.checkWritable(rp.s.appliedZxid())
		return
	}
	rp.readyAt.Store(-1)
	rp.s.serving.Store(true)
}

// checkWritable makes a new leader writable once its tree holds its whole
// initial history (apply goroutine and node loop).
func (rp *replica) checkWritable(applied int64) {
	at := rp.readyAt.Load()
	if at < 0 || applied < at || rp.writable.Load() {
		return
	}
	ss := rp.soft.Load()
	if ss == nil || !ss.Established() {
		return
	}
	rp.s.prepMu.Lock()
	rp.s.pending.reset()
	rp.s.prepMu.Unlock()
	rp.leadingSince.Store(time.Now().UnixNano())
	rp.setWritable(true)
	rp.s.serving.Store(true)
	rp.log.Info("leading", "epoch", ss.Epoch, "zxid", hex(applied))
}

func (rp *replica) setWritable(w bool) {
	rp.wmu.Lock()
	defer rp.wmu.Unlock()
	if rp.writable.Load() == w {
		return
	}
	rp.writable.Store(w)
	if w {
		close(rp.writableNow)
	} else {
		rp.writableNow = make(chan struct{})
	}
}

func (rp *replica) waitWritable(ctx context.Context) bool {
	rp.wmu.Lock()
	ch := rp.writableNow
	rp.wmu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// isLeader reports whether this server is the established leader.
func (rp *replica) isLeader() bool {
	ss := rp.soft.Load()
	return ss != nil && ss.Established()
}

// mode is what srvr and mntr print.
func (rp *replica) mode() string {
	ss := rp.soft.Load()
	if ss == nil {
		return "looking"
	}
	switch ss.State {
	case zab.StateLeading:
		return "leader"
	case zab.StateFollowing:
		return "follower"
	case zab.StateObserving:
		return "observer"
	}
	return "looking"
}

// abandonAll fails every request waiting on the replication: the
// leader's proposals, forwarded writes and syncs. Their clients see the
// connection close; a write may still commit (like any write whose reply
// was lost).
func (rp *replica) abandonAll(reason error) {
	rp.mu.Lock()
	inflight := rp.inflight
	rp.inflight = map[int64]*request{}
	confirms := rp.confirms
	rp.confirms = nil
	rp.mu.Unlock()
	for _, r := range inflight {
		rp.s.abandon(r, reason)
	}
	for _, w := range confirms {
		w.done(0, false)
	}
	for _, r := range rp.fw.takeAll() {
		rp.s.abandon(r, reason)
	}
	rp.bmu.Lock()
	bs := rp.barriers
	rp.barriers = nil
	rp.bmu.Unlock()
	for _, r := range bs {
		rp.s.abandon(r, reason)
	}
	rp.s.prepMu.Lock()
	rp.s.pending.reset()
	rp.s.sessions.clearClosing()
	rp.s.prepMu.Unlock()
}

// installSnapshot replaces the state with a snapshot from the leader
// (SNAP), durably, before anything after it is appended.
func (rp *replica) installSnapshot(sn zab.Snapshot) {
	tree, err := rp.s.store.installSnapshot(int64(sn.Zxid), sn.Data)
	if err != nil {
		rp.s.fatal("installing the leader's snapshot failed", err)
		return
	}
	rp.ms.ApplySnapshot(zab.Snapshot{Zxid: sn.Zxid})
	rp.prevSnap.Store(int64(sn.Zxid))
	rp.snapInstalls.Add(1)
	if !rp.diskless {
		done := make(chan error, 1)
		z := sn.Zxid
		rp.logCh <- logOp{truncate: &z, done: done}
		if err := <-done; err != nil {
			rp.s.fatal("cutting the transaction log to the snapshot failed", err)
		}
	}
	rp.s.applyCh <- []*request{{install: tree, hdr: txn.Header{Zxid: int64(sn.Zxid)}}}
	rp.log.Info("installed the leader's snapshot", "zxid", hex(int64(sn.Zxid)), "nodes", tree.NodeCount())
}

// attachSnapshots fills in the bytes of SNAP messages: the snapshot file
// of the zxid zab names (the in-memory log keeps no snapshot data).
func (rp *replica) attachSnapshots(msgs []zab.Message) {
	for i := range msgs {
		sn := msgs[i].Snapshot
		if sn == nil || sn.Data != nil {
			continue
		}
		data, err := rp.snapshotData(int64(sn.Zxid))
		if err != nil {
			rp.log.Error("cannot send a snapshot to a learner", "zxid", hex(int64(sn.Zxid)), "err", err)
			continue
		}
		msgs[i].Snapshot = &zab.Snapshot{Zxid: sn.Zxid, Data: data}
		rp.snapSentMu.Lock()
		if rp.snapSentTo == nil {
			rp.snapSentTo = map[uint64]struct{}{}
		}
		rp.snapSentTo[msgs[i].To] = struct{}{}
		rp.snapSent.Store(true)
		rp.snapSentMu.Unlock()
	}
}

func (rp *replica) snapshotData(zxid int64) ([]byte, error) {
	if zxid == 0 {
		var b bytesBuffer
		if err := datatree.New().WriteSnapshot(&b, nil); err != nil {
			return nil, err
		}
		return b.b, nil
	}
	return rp.s.store.snapshotBytes(zxid)
}

// maxExtraLog bounds the log a diskless server keeps before its newest
// snapshot (see compact).
const maxExtraLog = 64 << 20

// logBytes is the size of the in-memory log's entries in (after, upTo], or
// more than maxExtraLog if the log no longer holds them all.
func (rp *replica) logBytes(after, upTo int64) int {
	ents, err := rp.ms.Entries(zab.Zxid(after), zab.Zxid(upTo), math.MaxUint64)
	if err != nil {
		return maxExtraLog + 1
	}
	n := 0
	for _, e := range ents {
		n += len(e.Data)
	}
	return n
}

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// compact drops the in-memory log up to a snapshot just written; a learner
// further behind gets the snapshot (SNAP).
//
// Diskless: up to the snapshot before it instead, while what lies between
// the two is at most maxExtraLog bytes. A diskless server restarts from
// its own newest snapshot (it has no log), which is behind the leader's
// newest by up to a snapshot interval; with the log cut at the leader's
// newest it got a SNAP, the whole tree (a 500k-node snapshot sent,
// decoded and installed while the old tree became garbage: both servers'
// resident size grew by a few hundred MB, and the next kill of either
// took that much longer to be noticed, ~0.1 s per GB). One more interval
// of log lets it catch up by DIFF instead, as the issue asks ("then from
// the leader by DIFF where it can"), at the cost of that interval's
// entries in memory. The snapshot before the newest is still on disk
// for a SNAP (autopurge keeps at least three).
func (rp *replica) compact(zxid int64) {
	at := zxid
	if rp.diskless {
		// logBytes says too much when the log no longer reaches prev.
		if prev := rp.prevSnap.Swap(zxid); prev < zxid && rp.logBytes(prev, zxid) <= maxExtraLog {
			at = prev
		}
	}
	if err := rp.ms.Compact(zab.Snapshot{Zxid: zab.Zxid(at)}); err != nil && !errors.Is(err, zab.ErrCompacted) {
		rp.log.Debug("log not compacted", "zxid", hex(at), "err", err)
	}
}

// logLoop writes appended entries to the transaction log, one fsync per
// group, and reports them durable; it also cuts the log for TRUNC and
// SNAP. It runs beside the node loop, so proposals keep flowing while the
// disk syncs.
func (rp *replica) logLoop() {
	st := rp.s.store
	var last zab.Zxid
	var gen uint64
	flush := func() {
		if last == 0 {
			return
		}
		probe.Mark("log-sync-start", int64(last))
		if err := st.commit(); err != nil {
			rp.s.fatal("transaction log sync failed", err)
			return
		}
		probe.Mark("log-synced", int64(last))
		rp.persisted(gen, last)
		last = 0
	}
	handle := func(op logOp) {
		if op.truncate != nil {
			flush()
			err := st.wal.TruncateAfter(int64(*op.truncate))
			if err == nil {
				err = st.wal.Sync()
			}
			op.done <- err
			return
		}
		for _, e := range op.entries {
			if err := st.append(int64(e.Zxid), e.Data); err != nil {
				rp.s.fatal("transaction log append failed", err)
				return
			}
			rp.s.stats.lastProposalSize.Store(int64(len(e.Data)))
			last, gen = e.Zxid, op.gen
		}
	}
	for op := range rp.logCh {
		handle(op)
	more:
		for i := 0; i < maxBatch; i++ {
			select {
			case op, ok := <-rp.logCh:
				if !ok {
					break more
				}
				handle(op)
			default:
				break more
			}
		}
		flush()
	}
	flush()
}

// persisted reports durable entries to the node, unless the log was cut
// since they were appended.
func (rp *replica) persisted(gen uint64, z zab.Zxid) {
	rp.mu.Lock()
	if gen == rp.gen {
		rp.node.Persisted(z)
		// Send the acknowledgement (or the leader's commit) it caused
		// now, rather than after a hand-off to the node loop. Under mu,
		// so they leave before anything of a later Ready.
		if msgs := rp.node.TakeMessages(); len(msgs) > 0 {
			if probe.Enabled {
				for _, m := range msgs {
					probe.Mark("persisted-send-"+m.Type.String(), probe.MsgZxid(m))
				}
			}
			rp.attachSnapshots(msgs)
			rp.tr.Send(msgs)
			rp.node.RecycleMessages(msgs)
		}
	}
	rp.mu.Unlock()
	rp.wake()
}

// propose runs prep for a write on the leader and proposes it. It holds
// prepMu (the caller) and mu, so the zxid prep writes into the
// transaction is the one zab assigns.
func (rp *replica) propose(r *request) bool {
	rp.mu.Lock()
	z, err := rp.node.NextZxid()
	if err != nil || !rp.writable.Load() {
		rp.mu.Unlock()
		if err == nil {
			err = zab.ErrNotLeader
		}
		rp.s.abandon(r, err)
		return true
	}
	rp.s.prep(r, int64(z))
	// Shared: from here on r.tx's data is the proposal's own copy, which
	// the log keeps anyway; the tree keeps no other (and none that points
	// into a forwarded request's network frame).
	data := txn.AppendShared(make([]byte, 0, txn.SizeHint(&r.tx)), &r.hdr, &r.tx)
	got, err := rp.node.Propose(data)
	if err != nil || got != z {
		rp.mu.Unlock()
		rp.s.fatal("proposal refused after its zxid was assigned", fmt.Errorf("%v (zxid %v, assigned %v)", err, z, got))
		return false
	}
	r.proposed = time.Now()
	rp.inflight[int64(z)] = r
	rp.mu.Unlock()
	probe.Mark("l-proposed", int64(z))
	rp.wake()
	return true
}

// submit sends a write (or sync) on its way: prep and propose on the
// leader, forward from a learner.
func (rp *replica) submit(r *request) bool {
	if r.op == wire.OpSync {
		return rp.sync(r)
	}
	if rp.isLeader() {
		rp.s.prepMu.Lock()
		defer rp.s.prepMu.Unlock()
		return rp.propose(r)
	}
	return rp.forward(r)
}

// submitBatch submits writes in order: on the leader the proposals are
// decided under one hold of prepMu; a sync, or a learner's writes, go one
// by one as submit sends them.
func (rp *replica) submitBatch(rs []*request) bool {
	if len(rs) > 1 && rp.isLeader() && !slices.ContainsFunc(rs, func(r *request) bool { return r.op == wire.OpSync }) {
		rp.s.prepMu.Lock()
		defer rp.s.prepMu.Unlock()
		for _, r := range rs {
			if !rp.propose(r) {
				return false
			}
		}
		return true
	}
	for _, r := range rs {
		if !rp.submit(r) {
			return false
		}
	}
	return true
}

// sync is the paper's sync (§4.4): on the leader, the answer waits until
// everything proposed so far is applied here; a learner asks the leader
// for that zxid (after the writes it forwarded before) and waits until it
// has applied it.
func (rp *replica) sync(r *request) bool {
	if rp.isLeader() {
		rp.syncPoint(func(z zab.Zxid, ok bool) {
			if ok {
				rp.addBarrier(r, int64(z))
			} else {
				rp.s.abandon(r, errNotServing)
			}
		})
		return true
	}
	return rp.forwardSync(r)
}

// confirmWait is a sync waiting for the leader to confirm it still leads.
type confirmWait struct {
	round uint64
	zxid  zab.Zxid
	done  func(zxid zab.Zxid, ok bool)
}

// syncPoint calls done with the zxid a sync must wait for (the last one
// proposed) once a quorum has confirmed this server still leads, so a
// leader cut off from a quorum that moved on never answers a sync with a
// stale state (zab/confirm.go); ok is false if it stops leading first.
func (rp *replica) syncPoint(done func(zab.Zxid, bool)) {
	rp.mu.Lock()
	z := rp.node.Status().LastZxid
	round, err := rp.node.ConfirmLeadership()
	if err != nil {
		rp.mu.Unlock()
		done(0, false)
		return
	}
	rp.confirms = append(rp.confirms, confirmWait{round: round, zxid: z, done: done})
	rp.mu.Unlock()
	rp.wake()
}

// releaseConfirmed runs the syncs whose round a quorum confirmed (node
// loop).
func (rp *replica) releaseConfirmed() {
	rp.mu.Lock()
	if len(rp.confirms) == 0 {
		rp.mu.Unlock()
		return
	}
	c := rp.node.Confirmed()
	var ready []confirmWait
	keep := rp.confirms[:0]
	for _, w := range rp.confirms {
		if w.round <= c {
			ready = append(ready, w)
		} else {
			keep = append(keep, w)
		}
	}
	rp.confirms = keep
	rp.mu.Unlock()
	for _, w := range ready {
		w.done(w.zxid, true)
	}
}

// addBarrier parks a sync until the tree reaches zxid.
func (rp *replica) addBarrier(r *request, zxid int64) {
	r.hdr.Zxid = zxid
	rp.s.mu.Lock()
	defer rp.s.mu.Unlock()
	if rp.s.tree.LastZxid() >= zxid {
		rp.s.completeBarrier(r)
		return
	}
	rp.bmu.Lock()
	rp.barriers = append(rp.barriers, r)
	rp.bmu.Unlock()
}

// releaseBarriers answers the syncs the tree has reached. The apply
// goroutine calls it holding the tree's write lock.
func (rp *replica) releaseBarriers(applied int64) {
	rp.bmu.Lock()
	var ready []*request
	keep := rp.barriers[:0]
	for _, r := range rp.barriers {
		if r.hdr.Zxid <= applied {
			ready = append(ready, r)
		} else {
			keep = append(keep, r)
		}
	}
	rp.barriers = keep
	rp.bmu.Unlock()
	for _, r := range ready {
		rp.s.completeBarrier(r)
	}
}

// onTick runs twice a tick in the node loop: learners report the
// sessions they heard from and give up on forwarded requests the leader
// seems to have lost.
func (rp *replica) onTick() {
	ss := rp.soft.Load()
	if ss == nil || ss.Phase != zab.PhaseBroadcast || ss.State == zab.StateLeading {
		return
	}
	now := rp.s.sessions.nowMs()
	ids := rp.s.sessions.touchedSince(rp.lastTouch)
	rp.lastTouch = now
	if len(ids) > 0 {
		rp.tr.Send([]zab.Message{driverMessage(rp.id, ss.Leader, &driverMsg{kind: driverTouch, sessions: ids})})
	}
	limit := time.Duration(2*rp.ens.SyncLimit) * rp.s.opts.TickTime
	if rp.fw.overdue(limit) {
		rp.log.Warn("a forwarded request got no answer from the leader; dropping client connections", "after", limit)
		rp.abandonAll(errors.New("no answer from the leader"))
		rp.s.closeClients(errors.New("no answer from the leader"))
	}
}

// leaderMetrics are the gauges ZooKeeper 3.9's leader adds to mntr
// (LeaderZooKeeperServer.dumpMonitorValues), plus zk_followers, the name
// ZooKeeper 3.4 and 3.5 used for the learner count, which older
// monitoring scripts still read. Other servers add nothing.
func (rp *replica) leaderMetrics() []flw.Metric {
	if !rp.isLeader() {
		return nil
	}
	rp.mu.Lock()
	st := rp.node.Status()
	rp.mu.Unlock()
	var synced, syncedObservers int
	for _, l := range st.Learners {
		switch {
		case !l.Synced:
		case l.Observer:
			syncedObservers++
		default:
			synced++
		}
	}
	// ZooKeeper's pending_syncs are sync requests waiting at the leader.
	rp.bmu.Lock()
	pending := len(rp.barriers)
	rp.bmu.Unlock()
	size := rp.s.stats.lastProposalSize.Load()
	return []flw.Metric{
		{Name: "learners", Value: len(st.Learners)},
		{Name: "followers", Value: len(st.Learners)},
		{Name: "synced_followers", Value: synced},
		{Name: "synced_non_voting_followers", Value: 0},
		{Name: "synced_observers", Value: syncedObservers},
		{Name: "pending_syncs", Value: pending},
		{Name: "leader_uptime", Value: time.Since(time.Unix(0, rp.leadingSince.Load())).Milliseconds()},
		{Name: "last_proposal_size", Value: size},
	}
}

// checkpoint makes this server's disk complete: a snapshot with the log
// entries after it (diskless mode; see storage.writeCheckpoint).
//
// A recovering server writes none: restored from a fuzzy snapshot, it holds
// an unknown prefix of what it acknowledged before it crashed until a
// leader has synchronized it, and a checkpoint would make it restart
// complete, as a voter that lacks acknowledged writes (the simulator found
// a 7-server run that lost a committed write that way: a recovering server
// left a sync for an election, checkpointed, crashed, and came back
// voting). Its fuzzy snapshot stays what a restart loads, recovering again.
func (rp *replica) checkpoint() {
	rp.mu.Lock()
	recovering := rp.node.Status().Recovering
	rp.mu.Unlock()
	if recovering {
		rp.log.Info("no checkpoint: this server is recovering and not yet synchronized by a leader")
		return
	}
	err := rp.s.store.writeCheckpoint(rp.s, func(zxid int64) ([]zab.Entry, error) {
		last, _ := rp.ms.LastZxid()
		return rp.ms.Entries(zab.Zxid(zxid), last, math.MaxUint64)
	})
	if err != nil {
		rp.log.Error("checkpoint failed", "err", err)
	}
}
