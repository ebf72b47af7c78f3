package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/probe"
	repl "github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/replica/snapstream"
	"github.com/corral-db/corral/server/flw"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// replica is a server's member of an ensemble: the ZooKeeper side of
// replication (proposals and their requests, forwarding, syncs, the
// writable flag) around a repl.Driver, which owns everything between
// zab and the znode tree (Ready loop, log and group fsync, SNAP and TRUNC
// install, log cut, diskless checkpoints, the recovering flag).
//
// The path of a write on the leader: prep (on the submitting goroutine,
// under prepMu) asks the driver for the next zxid, builds the transaction
// with it and proposes it (Driver.ProposeWith); the node loop (run) hands
// it to the log goroutine (Driver.RunLog: WAL append, group fsync, then
// Persisted) and sends the proposals; once a quorum acknowledged it, it
// comes back to treeSM.Apply and goes to the apply goroutine. On a
// learner, a write is forwarded to the leader (forward.go) and answered
// when its transaction is applied here.
//
// Goroutines: run (the node loop: ticks, messages, Driver.Process), the
// driver's log goroutine, fwdLoop (forwarded requests on the leader), and
// the server's apply goroutine (pipeline.go).
//
// Lock order: prepMu (Server) → the driver's lock (inside
// Driver.ProposeWith, which runs prep) → mu → snapSentMu, bmu, wmu.
type replica struct {
	s   *Server
	log *slog.Logger
	id  uint64
	ens *Ensemble
	d   *repl.Driver
	sm  *treeSM
	tr  transport.Transport

	// mu guards the requests waiting on the replication.
	mu sync.Mutex
	// inflight maps the zxids this leader proposed to their requests.
	inflight map[int64]*request
	// confirms are syncs waiting for a leadership confirmation round.
	confirms []confirmWait

	// snapSentMu guards snapSentTo: the learners sent a snapshot (SNAP)
	// that have not synchronized yet (see releaseAfterSnapSent); snapSent
	// says it is not empty.
	snapSentMu sync.Mutex
	snapSentTo map[uint64]struct{}
	snapSent   atomic.Bool

	// bmu guards barriers: syncs waiting for the tree to reach a zxid.
	bmu      sync.Mutex
	barriers []*request

	// streamer runs the SNAP streams this member leads, learner takes
	// the ones it receives (snapstream.go); streamConfigErr is why a
	// streamed install must fail (payloads for a member without a data
	// log).
	streamer        *snapstream.Sender
	learner         *snapstream.Learner
	streamConfigErr atomic.Pointer[error]

	// wmu guards writableNow, closed when the server becomes writable.
	wmu         sync.Mutex
	writableNow chan struct{}

	diskless bool
	// standalone: a server without an ensemble, run as the only voter of
	// a group of one (standaloneEnsemble); its clients see a standalone
	// ZooKeeper server (Mode: standalone, no election metrics).
	standalone bool
	soft       atomic.Pointer[zab.SoftState]
	// writable: this server is the established leader and has applied its
	// initial history, so prep sees the whole committed state.
	writable atomic.Bool
	// readyAt is the zxid a new leader must apply before it is writable.
	readyAt atomic.Int64
	// leadingSince is when this server last became writable (unix nanos).
	leadingSince atomic.Int64

	kick chan struct{}
	// fwdIn feeds the leader's forwarded requests and syncs to fwdLoop.
	fwdIn chan fwdIn
	// fwdQueued counts forwarded messages queued for or inside fwdLoop.
	fwdQueued atomic.Int64

	fw forwarder

	// cfg is the configuration with addresses (reconfig.go).
	cfg membership

	// lastTouch is when the learner last reported its sessions (node loop).
	lastTouch int64

	// comb is the write submitters' way to prepMu (combine.go).
	comb combiner

	// building is the write propose is building (under prepMu), and build
	// the function bound to it that the driver calls.
	building proposal
	build    func(zab.Zxid) ([]byte, error)
	// pooled: proposals are encoded into records (a standalone server
	// not diskless: the driver releases every applied entry, which no
	// learner reads).
	pooled  bool
	records recordPool
}

// subTicks is how many zab ticks make one tickTime.
const subTicks = 10

// fwdIn is a forwarded message waiting for the leader's fwdLoop.
type fwdIn struct {
	from uint64
	msg  driverMsg
}

// standaloneID is the member id of a standalone server's group of one
// (zab ids are not 0, and a standalone server has no myid).
const standaloneID = 1

// standaloneEnsemble is the configuration a standalone server runs: one
// voter and no peers. Its leader elects itself at once (zab needs no
// timeout when its own vote is a quorum) and commits what its own log
// holds as soon as it is durable.
func standaloneEnsemble() *Ensemble {
	return &Ensemble{ID: standaloneID, Voters: []uint64{standaloneID}, InitLimit: 10, SyncLimit: 5}
}

// newReplica makes the server's member of ens (standaloneEnsemble for a
// standalone server).
func newReplica(s *Server, st *storage, tree *datatree.Tree, ens *Ensemble) (*replica, error) {
	rp := &replica{
		s:          s,
		log:        s.log,
		id:         ens.ID,
		ens:        ens,
		inflight:   map[int64]*request{},
		kick:       make(chan struct{}, 1),
		fwdIn:      make(chan fwdIn, 4096),
		diskless:   s.opts.Durability == DurabilityDiskless,
		standalone: s.opts.Ensemble == nil,
	}
	rp.learner = &snapstream.Learner{ID: rp.id, Send: func(m []zab.Message) { rp.tr.Send(m) },
		FS: st.fs, Path: filepath.Join(st.snapDir, "snap.spool"), ProgressEvery: s.opts.TickTime / 2,
		Logger: rp.log, Take: rp.takePiece}
	rp.build = rp.buildProposal
	rp.pooled = rp.standalone && !rp.diskless
	rp.fw.init()
	rp.cfg.init(ens)
	rp.readyAt.Store(-1)
	rp.writableNow = make(chan struct{})
	hs, err := st.readHardState()
	if err != nil {
		return nil, fmt.Errorf("read epochs: %w", err)
	}
	snapZxid := tree.LastZxid()
	complete := st.complete
	if ens.ForceRecover {
		if wouldRecover(st, hs) {
			if err := forceRecover(st, hs, ens.ID, snapZxid); err != nil {
				return nil, err
			}
			complete = true
		} else {
			s.log.Warn("-force-recover has no effect: this member is not recovering (not diskless, restarted from a "+
				"complete checkpoint, or new); remove the flag", "id", ens.ID)
		}
	}
	rp.sm = newTreeSM(rp, st, snapZxid)
	if s.opts.RlogRoot != "" {
		if err := openLogs(st, tree, snapZxid); err != nil {
			return nil, err
		}
	}
	// zab takes every entry in Storage as durable; records a crashed
	// process left in the page cache are made so before it starts.
	if st.wal != nil {
		if err := st.wal.Sync(); err != nil {
			return nil, fmt.Errorf("sync the recovered log: %w", err)
		}
	}
	mode := repl.Sync
	switch s.opts.Durability {
	case DurabilityAsync:
		mode = repl.Async
	case DurabilityDiskless:
		mode = repl.Diskless
	}
	env := repl.Env{
		HardState:     &hardStateFile{st: st, prev: hs},
		Send:          rp.send,
		Clock:         repl.SystemClock{},
		SnapshotImage: func(z zab.Zxid) ([]byte, error) { return rp.snapshotData(int64(z)) },
	}
	if rp.diskless {
		env.Checkpoints = checkpointFiles{rp: rp, st: st}
	} else {
		env.Log = walStore{rp: rp, st: st}
	}
	d, err := repl.New(repl.Config{
		ID:        ens.ID,
		Voters:    ens.Voters,
		Observers: ens.Observers,
		// The configuration's version, and reconfig transactions as
		// membership changes (reconfig.go).
		MembershipZxid:   zab.Zxid(ens.ConfigVersion),
		DecodeMembership: decodeMembership,
		Mode:             mode,
		Env:              env,
		SM:               rp.sm,
		HardState:        hs,
		Log:              st.recovered,
		// A standalone server has no leader to be brought up to date by:
		// restarted from a diskless snapshot it serves what it holds, as
		// a standalone ZooKeeper server does.
		Complete: complete || rp.standalone,
		// Its zxids stay in epoch 0 across restarts, as a standalone
		// ZooKeeper server's (0x1, 0x2, ...).
		KeepEpoch: rp.standalone,
		// zab counts in sub-ticks, a tenth of tickTime, so its retries
		// (votes, a lost FOLLOWERINFO) come within a fraction of a tick
		// while initLimit and syncLimit keep ZooKeeper's meaning in
		// wall-clock time. The leader pings twice a tick, as ZooKeeper's.
		ElectionTick:  2,
		HeartbeatTick: subTicks / 2,
		InitLimit:     ens.InitLimit * subTicks,
		SyncLimit:     ens.SyncLimit * subTicks,
		// Building or installing a large SNAP image moves no bytes over
		// the link: say the sync is moving every tick meanwhile.
		SyncProgressEvery: s.opts.TickTime,
		// The driver schedules snapshots (busy by count, diskless idle
		// lulls, spacing); the snapshot goroutine asks it (driveSnapshots).
		Schedule: repl.Schedule{SnapCount: s.opts.SnapCount, SnapBytes: max(s.opts.SnapBytes, 0), IdleQuiet: st.idleQuiet, IdleMin: int(st.idleSnapMin())},
		// The driver knows why it took a snapshot: it counts them by
		// kind (takeSnapshot counts only the snapshots it decides on).
		OnSnapshot: func(_ zab.Zxid, busy bool) {
			if busy {
				st.countSnapshot(snapBusy)
			} else {
				st.countSnapshot(snapIdle)
			}
		},
		// A reconfig proposal is recorded before it is acknowledged
		// (zoo.cfg.dynamic.next, reconfig.go).
		OnAppend:        rp.reconfigAccepted,
		OnSoftState:     func(_, cur zab.SoftState) { rp.setSoft(cur) },
		Released:        rp.released,
		OnDriverMessage: rp.receiveDriver,
		Intercept:       rp.learner.Intercept,
		Rand:            rand.New(rand.NewPCG(ens.ID, uint64(time.Now().UnixNano()))),
		Logger:          s.log.With("zab", ens.ID),
	})
	if err != nil {
		return nil, err
	}
	rp.d = d
	st.recovered = nil
	st.onSnapshot = rp.compact
	recovering := d.Status().Recovering
	last := d.LastZxid()
	if recovering && !rp.standalone {
		// After a crash of a majority every member restarts so, and the
		// ensemble waits for good (the safe choice): say what to do.
		s.log.Warn("diskless member restarted from a partial snapshot: it is RECOVERING and will neither vote "+
			"nor count toward a quorum until a synchronized leader has brought it up to date. If a majority "+
			"crashed at once, the ensemble stays unavailable until enough members with complete state return. "+
			"If none will, compare the zxid each member reports (srvr: Recovering, Zxid) and restart every "+
			"member with `corral server -force-recover`, one at a time, newest zxid first: the member with the "+
			"newest snapshot leads and the writes after it are lost (docs/design/diskless.md, \"Forced recovery\")",
			"id", ens.ID, "snapshot", hex(snapZxid))
	}
	if rp.standalone {
		s.log.Info("standalone: the only voter of a group of one", "snapshot", hex(snapZxid), "lastLogged", hex(int64(last)))
		return rp, nil
	}
	s.log.Info("replica ready", "id", ens.ID, "recovering", recovering, "voters", ens.Voters, "observers", ens.Observers,
		"acceptedEpoch", hs.AcceptedEpoch, "currentEpoch", hs.CurrentEpoch,
		"snapshot", hex(snapZxid), "lastLogged", hex(int64(last)))
	return rp, nil
}

// start opens the transport and runs the replica's goroutines until ctx
// ends.
func (rp *replica) start(ctx context.Context, wg *sync.WaitGroup) error {
	tr, err := rp.openTransport(ctx)
	if err != nil {
		return err
	}
	rp.tr = tr
	{
		cfg := snapstream.SenderConfig{ID: rp.id, Send: tr.Send, Produce: rp.produceSnapshot,
			Piece: func(to, id, seq uint64, b []byte) zab.Message {
				return snapstream.PieceMessage(rp.id, to, id, seq, b)
			},
			ProgressEvery: rp.s.opts.TickTime / 2, Logger: rp.log}
		if bl, ok := tr.(interface{ Backlog(uint64) int64 }); ok {
			cfg.Backlog = bl.Backlog
		}
		rp.streamer = snapstream.NewSender(ctx, cfg)
	}
	logCtx, stopLog := context.WithCancel(context.Background())
	logDone := make(chan struct{})
	wg.Add(3)
	go func() {
		defer wg.Done()
		rp.run(ctx)
		rp.streamer.Wait()
		// The log goroutine outlives the node loop, so a Process waiting
		// on it finishes first.
		stopLog()
		<-logDone
	}()
	go func() {
		defer wg.Done()
		defer close(logDone)
		if rp.diskless {
			return
		}
		if err := rp.d.RunLog(logCtx); err != nil {
			rp.s.fatal("transaction log write failed", err)
		}
	}()
	go func() { defer wg.Done(); rp.fwdLoop(ctx) }()
	// The node's first Ready (its votes; a group of one is established
	// already) is processed now rather than at the first tick.
	if rp.standalone {
		rp.wake()
	}
	return nil
}

// openTransport opens the quorum and election ports; a standalone
// server, which has no peer, gets an in-memory endpoint that nothing
// ever reaches.
func (rp *replica) openTransport(ctx context.Context) (transport.Transport, error) {
	if rp.standalone {
		nw := transport.NewNetwork(transport.NetworkConfig{RecvBuffer: 1})
		ep, err := nw.Join(rp.id)
		if err != nil {
			return nil, err
		}
		return standaloneTransport{ep, nw}, nil
	}
	tr, err := transport.NewTCP(ctx, transport.TCPConfig{
		ID:            rp.id,
		Peers:         rp.ens.Peers,
		MaxFrameBytes: 1 << 30,
		TLS:           rp.ens.QuorumTLS,
		AcceptUnknown: rp.ens.ReconfigEnabled,
		OnDisconnect:  rp.d.ReportUnreachable,
		OnProgress:    rp.d.ReportProgress,
		Logger:        rp.log,
	})
	if err != nil {
		return nil, fmt.Errorf("open quorum and election ports: %w", err)
	}
	return tr, nil
}

// standaloneTransport is a standalone server's transport: its only
// endpoint, closed with its network.
type standaloneTransport struct {
	*transport.Endpoint
	nw *transport.Network
}

func (t standaloneTransport) Close() error {
	err := t.Endpoint.Close()
	t.nw.Close()
	return err
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
			rp.d.Tick()
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
		case <-rp.d.Wake():
		}
		if err := rp.d.Process(); err != nil {
			rp.s.fatal("replication failed", err)
			return
		}
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
	st := rp.d.Status()
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
	if err := rp.d.Step(m); err != nil {
		rp.log.Warn("message refused", "msg", m.String(), "err", err)
	}
}

// send is the driver's Env.Send: it notes the learners sent a snapshot
// (their memory is released once they synchronized).
func (rp *replica) send(msgs []zab.Message) {
	for i := range msgs {
		if probe.Enabled {
			probe.Mark("node-send-"+msgs[i].Type.String(), probe.MsgZxid(msgs[i]))
		}
		if sn := msgs[i].Snapshot; sn != nil && sn.Data != nil {
			rp.snapSentMu.Lock()
			if rp.snapSentTo == nil {
				rp.snapSentTo = map[uint64]struct{}{}
			}
			rp.snapSentTo[msgs[i].To] = struct{}{}
			rp.snapSent.Store(true)
			rp.snapSentMu.Unlock()
		}
	}
	rp.tr.Send(rp.streamer.Route(msgs))
}

// committedRequests turns committed entries into requests for apply: the
// leader's own proposals and this learner's forwarded writes are matched
// to the requests waiting for them; other servers' get a request without
// a connection, decoded from the entry. They are built in dst's array
// when it is large enough.
//
// A decoded Data is a slice of the entry, not a copy: the tree copies
// what it keeps into its arena (datatree.Tree.Apply), a committed entry's
// bytes are never modified, and nothing else holds a Data past the reply
// (reconfig parses and clones its text). An append's payload stays a
// slice of the entry until forApply writes it to the data log (if the
// log goroutine has not) and puts the reference in its place.
func (rp *replica) committedRequests(dst []*request, ents []zab.Entry) (out, lost []*request) {
	if len(ents) == 0 {
		return dst, nil
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	out = dst[:0]
	if cap(out) < len(ents) {
		out = make([]*request, 0, len(ents))
	}
	for _, e := range ents {
		z := int64(e.Zxid)
		if r, ok := rp.inflight[z]; ok {
			delete(rp.inflight, z)
			if !rp.standalone {
				rp.s.met.committed(r)
			}
			out = append(out, r)
			continue
		}
		var h txn.Header
		var tx txn.Txn
		if err := txn.DecodeShared(e.Data, &h, &tx); err != nil {
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
	// The driver has written the diskless checkpoint (entering election)
	// or invalidated it (joining) already.
	prev := rp.soft.Swap(&ss)
	if !rp.standalone {
		rp.s.met.zabState(ss)
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
		rp.readyAt.Store(int64(rp.d.Status().LastZxid))
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
	// Who owns which session is this leader's to learn (sessionmove.go).
	rp.s.sessions.clearMembers()
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
// recovering says whether this member waits, as a non-voter, for a
// synchronized leader (zab.SoftState.Recovering).
func (rp *replica) recovering() bool {
	if ss := rp.soft.Load(); ss != nil {
		return ss.Recovering
	}
	return rp.d.Status().Recovering // before the first Ready
}

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
	// A reconfiguration this server proposed is no longer its to track:
	// zab refuses another while one is in the log (reconfig.go).
	rp.cfg.mu.Lock()
	rp.cfg.lastSeen = rp.cfg.version
	rp.cfg.mu.Unlock()
	rp.s.prepMu.Unlock()
}

// snapshotData is the SNAP image: a streamed image's header, the tree's
// snapshot and the logs' payloads going ahead of it (snapstream.go).
func (rp *replica) snapshotData(int64) ([]byte, error) {
	return snapstream.Header(nil), nil
}

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// compact learns each busy snapshot the server wrote (storage.onSnapshot)
// and lets the driver cut its log there (repl.Driver.CutLog).
func (rp *replica) compact(zxid int64) {
	rp.sm.durable.Store(zxid)
	rp.d.CutLog(zab.Zxid(zxid))
}

// propose runs prep for a write on the leader and proposes it. It holds
// prepMu (the caller), and prep runs under the driver's lock, so the zxid
// prep writes into the transaction is the one zab assigns.
//
// quiet leaves the node loop asleep: the caller drives the proposal
// itself next (drive or process), after releasing prepMu.
func (rp *replica) propose(r *request, quiet bool) bool {
	b := &rp.building
	b.r, b.built, b.rec = r, false, nil
	var z zab.Zxid
	var err error
	if quiet {
		z, err = rp.d.ProposeWithQuiet(rp.build)
	} else {
		z, err = rp.d.ProposeWith(rp.build)
	}
	built, rec := b.built, b.rec
	b.r, b.rec = nil, nil
	if err != nil {
		if !built {
			rp.s.abandon(r, err)
			return true
		}
		rp.mu.Lock()
		delete(rp.inflight, int64(z))
		rp.mu.Unlock()
		rp.s.fatal("proposal refused after its zxid was assigned", err)
		return false
	}
	if rec != nil {
		rp.records.proposed(z, rec)
	}
	probe.Mark("l-proposed", int64(z))
	if !quiet {
		rp.wake()
	}
	return true
}

// proposal is the write propose is building, under prepMu: build reads
// it, so that proposing allocates no closure.
type proposal struct {
	r     *request
	built bool
	// rec is the pooled record the proposal was encoded into (a
	// standalone server's), which recordPool takes back once released.
	rec []byte
}

// buildProposal is the function propose hands the driver
// (Driver.ProposeWith), bound once in newReplica (rp.build): it preps
// rp.building's request for zxid z and encodes its transaction.
func (rp *replica) buildProposal(z zab.Zxid) ([]byte, error) {
	if !rp.writable.Load() {
		return nil, zab.ErrNotLeader
	}
	b := &rp.building
	r := b.r
	b.built = true
	rp.s.prep(r, int64(z))
	var data []byte
	if rp.pooled {
		// The record is the WAL's to copy and then recycled (Released):
		// r.tx's data stays the request's own, which the tree keeps.
		data = txn.Append(rp.records.get(txn.SizeHint(&r.tx)), &r.hdr, &r.tx)
		b.rec = data
	} else {
		// Shared: from here on r.tx's data is the proposal's own copy,
		// which the log keeps anyway; the tree keeps no other (and none
		// that points into a forwarded request's network frame).
		data = txn.AppendShared(make([]byte, 0, txn.SizeHint(&r.tx)), &r.hdr, &r.tx)
		r.proposed = time.Now()
	}
	rp.mu.Lock()
	rp.inflight[int64(z)] = r
	rp.mu.Unlock()
	return data, nil
}

// drive runs a standalone server's lone write to completion on the
// submitting goroutine when nothing else was in the pipeline
// (repl.Driver.Drive): logged, synced, committed and, if the apply
// goroutine has nothing queued, applied and answered here (treeSM.Apply).
// A write that finds others in flight goes to the node loop instead, so
// under load the log goroutine's syncs overlap the apply goroutine's
// work as in an ensemble.
// With one client writing one request at a time, the wake-ups of the node
// loop, the log goroutine and the apply goroutine would be most of the
// time outside the fsync. Under load writes go through the node loop and
// the log goroutine, whose groups share one sync.
func (rp *replica) drive() {
	_, err := rp.d.Drive()
	if err != nil {
		rp.s.fatal("replication failed", err)
	}
	// Confirmations (syncs) the node loop would release after Process.
	rp.releaseConfirmed()
}

// submit sends a write (or sync) on its way: prep and propose on the
// leader (through the combiner), forward from a learner.
func (rp *replica) submit(r *request) bool {
	if r.op == wire.OpSync {
		return rp.sync(r)
	}
	if rp.isLeader() {
		one := [1]*request{r}
		return rp.submitCombined(one[:])
	}
	return rp.forward(r)
}

// process hands a standalone server's proposals to the log writer on the
// submitting goroutine (repl.Driver.Kick), rather than through a wake-up
// of the node loop, unless a Process runs elsewhere already.
func (rp *replica) process() {
	if err := rp.d.Kick(); err != nil {
		rp.s.fatal("replication failed", err)
	}
}

// submitBatch submits writes in order: on the leader through the
// combiner (combine.go); a sync, or a learner's writes, go one by one as
// submit sends them.
func (rp *replica) submitBatch(rs []*request) bool {
	if rp.combinable(rs) {
		return rp.submitCombined(rs)
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
	z := rp.d.LastZxid()
	round, err := rp.d.ConfirmLeadership()
	if err != nil {
		done(0, false)
		return
	}
	rp.mu.Lock()
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
	rp.mu.Unlock()
	c := rp.d.Confirmed()
	rp.mu.Lock()
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
	if rp.standalone || !rp.isLeader() {
		return nil
	}
	st := rp.d.Status()
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

// checkpoint makes this server's disk complete at orderly shutdown
// (diskless): a snapshot with the log entries after it. A recovering
// server writes none (repl.Driver.Checkpoint says why).
func (rp *replica) checkpoint() {
	if err := rp.d.Checkpoint(); err != nil {
		rp.log.Error("checkpoint failed", "err", err)
	}
}
