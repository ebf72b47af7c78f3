package sim

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/internal/linmodel"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/zab"
)

// Cluster is a simulated ensemble. Run drives a whole randomized run;
// tests also drive it step by step (Crash, Restart, Partition, RunFor).
type Cluster struct {
	opts   Options
	rng    *rand.Rand
	xrng   *rand.Rand // SNAP transfers (transfer.go)
	srng   *rand.Rand // streamed SNAPs' ids (stream.go)
	now    int64
	ids    []uint64
	voters []uint64
	// servers is indexed by id (ids are 1..n; servers[0] is unused).
	servers []*server
	net     *network
	chk     *checker
	wl      *workload // nil without Options.Clients
	tr      *trace
	err     error

	faultsOn       bool
	partitionUntil int64
	// transferTo is the target of the last transfer a leader accepted,
	// until the next leader is established (Stats.Handovers).
	transferTo    uint64
	proposed      int
	marker        []byte // payload of the settle phase's proposal
	markerApplied bool
	rc            *reconfigState
	Stats         Stats
}

// Stats summarise a run.
type Stats struct {
	Committed  int // entries in the committed history
	Proposed   int
	Delivered  int
	Dropped    int
	Crashes    int
	Partitions int
	Leaders    int // distinct established (epoch, leader) pairs
	MaxEpoch   uint32
	Syncs      [4]int // by zab.SyncMode
	Reconfigs  int    // configuration changes committed
	Transfers  int    // leadership transfers a leader accepted
	Handovers  int    // of those, the target became the next established leader
	// GateTransfers: of Transfers, those the kv run's compaction-aware
	// leader change started (kvgate.go); GateRuns: runs with one.
	GateTransfers, GateRuns int
	// The register workload: operations answered, operations left
	// open-ended (outcome unknown), and runs whose history porcupine did
	// not finish checking within linTimeout (not counted as failures).
	RegOps       int
	RegUnknown   int
	LinUnchecked int
	// SNAP transfers (transfer.go): those longer than InitLimit that
	// arrived, and those that stalled.
	LongSnaps    int
	StalledSnaps int
	// Streamed SNAPs (stream.go): pieces delivered, SNAPs whose stream
	// arrived whole, and those refused for a stream that did not.
	StreamPieces, StreamedSnaps, RefusedStreams int
}

type server struct {
	id    uint64
	voter bool
	disk  *disk
	d     *replica.Driver
	sm    *simSM
	soft  zab.SoftState
	up    bool
	// fuzzy is the simulator's own view of the recovering rule: the
	// server restarted from a partial state (diskless) and no leader has
	// synchronized it since (it has not reached broadcast).
	fuzzy     bool
	restartAt int64
	paused    int64 // paused until
	syncAt    int64 // pending fsync completion, 0 if none
	period    int64 // time units per tick (clock drift)
	nextTick  int64
	// busy are the zxids of the busy snapshots of this incarnation, the
	// state it started from first (the diskless log-cut check).
	busy []zab.Zxid
	// outbox paces this incarnation's streamed SNAPs (stream.go); nil
	// when SNAPs are not streamed.
	outbox *outbox
}

func (s *Stats) add(o Stats) {
	s.Committed += o.Committed
	s.Proposed += o.Proposed
	s.Delivered += o.Delivered
	s.Dropped += o.Dropped
	s.Crashes += o.Crashes
	s.Partitions += o.Partitions
	s.Leaders += o.Leaders
	s.MaxEpoch = max(s.MaxEpoch, o.MaxEpoch)
	for i := range s.Syncs {
		s.Syncs[i] += o.Syncs[i]
	}
	s.Reconfigs += o.Reconfigs
	s.Transfers += o.Transfers
	s.GateTransfers += o.GateTransfers
	s.GateRuns += o.GateRuns
	s.Handovers += o.Handovers
	s.RegOps += o.RegOps
	s.RegUnknown += o.RegUnknown
	s.LinUnchecked += o.LinUnchecked
	s.LongSnaps += o.LongSnaps
	s.StalledSnaps += o.StalledSnaps
	s.StreamPieces += o.StreamPieces
	s.StreamedSnaps += o.StreamedSnaps
	s.RefusedStreams += o.RefusedStreams
}

// Failure is an invariant violation (or a liveness failure) of one run.
type Failure struct {
	Options Options
	Time    int64
	Err     error
	Trace   []string
}

func (f *Failure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d failed at t=%d: %v\n", f.Options.Seed, f.Time, f.Err)
	fmt.Fprintf(&b, "options: %v\n", f.Options)
	o := f.Options
	if o.Breaks != (replica.Breaks{}) || o.StaleReads || o.OutcomesOnly {
		fmt.Fprintf(&b, "replay: a deliberate break (TestSimulatorBites), seed %d\n", o.Seed)
	} else {
		sm := ""
		if o.Machines != nil {
			sm = " -sm=" + o.Machines.Name()
		}
		fmt.Fprintf(&b, "replay: go test ./sim/ -run 'TestSeeds$' -seed=%d -mode=%v%s -v\n", o.Seed, o.Mode, sm)
	}
	fmt.Fprintf(&b, "last %d events:\n", len(f.Trace))
	for _, l := range f.Trace {
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func (f *Failure) Unwrap() error { return f.Err }

// NewCluster starts every server of opts with empty storage.
func NewCluster(opts Options) *Cluster {
	if opts.TickEvery == 0 {
		opts.TickEvery = 10
	}
	if opts.MaxDelay == 0 {
		opts.MaxDelay = 3
	}
	if opts.MaxSyncDelay == 0 {
		opts.MaxSyncDelay = 3
	}
	if opts.TraceLen == 0 {
		opts.TraceLen = 400
	}
	if opts.Settle == 0 {
		opts.Settle = 6000
	}
	c := &Cluster{
		opts:    opts,
		rng:     rand.New(rand.NewPCG(opts.Seed, 0x73696d)),
		servers: make([]*server, 1, 1+opts.Voters+opts.Observers+opts.Spares),
		chk:     newChecker(),
		tr:      newTrace(opts.TraceLen),
	}
	for i := 1; i <= opts.Voters+opts.Observers+opts.Spares; i++ {
		id := uint64(i)
		c.ids = append(c.ids, id)
		period := opts.TickEvery
		if opts.ClockDrift > 0 {
			period = max(1, int64(float64(opts.TickEvery)*(1+opts.ClockDrift*(2*c.rng.Float64()-1))))
		}
		s := &server{id: id, voter: i <= opts.Voters, disk: newDisk(opts.Mode), period: period,
			nextTick: 1 + c.rng.Int64N(period)}
		if s.voter {
			c.voters = append(c.voters, id)
		}
		c.servers = append(c.servers, s)
	}
	c.net = newNetwork(c.ids, opts.TickEvery)
	// The transfer model draws from a generator of its own, so runs
	// without it (SnapTransfer 0) make the draws they made before it.
	c.xrng = rand.New(rand.NewPCG(opts.Seed, 0x78666572))
	c.srng = rand.New(rand.NewPCG(opts.Seed, 0x7374726d))
	// The register workload runs on the hash chain only. Its operations
	// are entries the register machine interprets; a Machines state
	// machine (the key-value store) ignores them as foreign entries and
	// keeps no registers across a restart or an installed snapshot, so
	// its answers would be meaningless. A Machines run checks its own
	// workload against its own model instead (kv.go: results, contents
	// at equal zxids, reads). The workload draws from a generator of its
	// own, so leaving it out changes no other draw.
	if opts.Clients > 0 && opts.Machines == nil {
		c.wl = newWorkload(opts.Seed, opts.Clients)
	}
	c.initMembership()
	for _, id := range c.ids {
		c.start(c.servers[id], machine{}, nil, false)
	}
	return c
}

// Run performs one randomized run: faults for opts.Duration, then heal and
// require convergence within opts.Settle.
func Run(opts Options) (Stats, error) {
	c := NewCluster(opts)
	c.faultsOn = true
	c.RunFor(opts.Duration)
	c.faultsOn = false
	if c.err == nil {
		c.Settle()
	}
	if c.err == nil && c.wl != nil {
		c.checkHistory()
	}
	if c.err == nil && opts.Machines != nil {
		for _, id := range c.ids {
			if err := c.servers[id].sm.ext.Check(true); err != nil {
				c.fail(fmt.Errorf("server %d at the end: %w", id, err))
				break
			}
		}
	}
	c.Close()
	c.Stats.Committed = len(c.chk.order)
	c.Stats.Delivered = c.net.delivered
	c.Stats.Dropped = c.net.dropped
	c.Stats.LongSnaps = c.net.longArrived
	c.Stats.StalledSnaps = c.net.stalled
	c.Stats.Leaders = len(c.chk.leaders)
	if c.Stats.GateTransfers > 0 {
		c.Stats.GateRuns = 1
	}
	return c.Stats, c.Err()
}

// Err returns the first failure of the run, if any.
func (c *Cluster) Err() error {
	if c.err == nil {
		return nil
	}
	return &Failure{Options: c.opts, Time: c.now, Err: c.err, Trace: c.tr.lines()}
}

func (c *Cluster) fail(err error) {
	if c.err == nil {
		c.err = err
		c.note(0, "FAILURE: "+err.Error())
	}
}

func (c *Cluster) note(id uint64, text string) {
	c.tr.add(event{t: c.now, id: id, text: text})
}

// noteZxid notes text followed by z, formatted only if the trace is
// printed.
func (c *Cluster) noteZxid(id uint64, text string, z zab.Zxid) {
	c.tr.add(event{t: c.now, id: id, text: text, z: z, hasZ: true})
}

func (c *Cluster) chance(p float64) bool { return c.rng.Float64() < p }

// start (re)creates a server's driver from its disk.
func (c *Cluster) start(s *server, m machine, log []zab.Entry, complete bool) {
	var ext Machine
	if c.opts.Machines != nil {
		var err error
		var from machine
		if ext, from, err = c.opts.Machines.Open(s.id); err != nil {
			c.fail(fmt.Errorf("server %d: open state machine: %w", s.id, err))
			return
		}
		if from.zxid < m.zxid {
			c.fail(fmt.Errorf("server %d: state machine reopened at %v, below the %v it had made durable", s.id, from.zxid, m.zxid))
			return
		}
		m = from
		if complete {
			log = slices.DeleteFunc(log, func(e zab.Entry) bool { return e.Zxid <= m.zxid })
		}
	}
	mem, memZxid := c.membershipAt(m.zxid)
	s.voter = c.inForceVoter(s.id)
	// Any server, voter or not: a configuration change may make it one
	// (zab marks every server restarted from a partial state recovering).
	s.fuzzy = c.opts.Mode == ModeDiskless && !complete && (s.disk.hs.AcceptedEpoch > 0 || s.disk.hs.CurrentEpoch > 0)
	s.sm = &simSM{
		m:    m,
		ext:  ext,
		disk: s.disk,
		applied: func(e zab.Entry, m machine, res linmodel.Result, isOp bool) error {
			return c.applied(s, e, m, res, isOp)
		},
		install: func(m machine) error {
			s.busy = []zab.Zxid{m.zxid}
			return c.chk.restored(s.id, m)
		},
	}
	s.disk.cur = &s.sm.m
	s.disk.ext = ext
	s.disk.tear = func(n int) int {
		if n == 0 {
			return 0
		}
		return c.rng.IntN(n + 1)
	}
	env := replica.Env{
		HardState: s.disk,
		Send:      func(msgs []zab.Message) { c.send(s, msgs) },
		Clock:     simClock{c},
	}
	if c.opts.Mode == ModeDiskless {
		env.Checkpoints = s.disk
	} else if c.opts.Slim {
		env.Log = slimDisk{s.disk, c.fail}
	} else {
		env.Log = s.disk
	}
	sched := replica.Schedule{SnapCount: 1 << 30, IdleQuiet: -1}
	if c.opts.SnapCount > 0 && (c.opts.Compact || c.opts.Mode == ModeDiskless) && !c.opts.NoBusySnapshots {
		sched = replica.Schedule{SnapCount: c.opts.SnapCount, SnapBytes: c.opts.SnapBytes, IdleQuiet: 100, IdleMin: max(1, c.opts.SnapCount/8)}
	}
	cfg := replica.Config{
		ID:             s.id,
		Voters:         mem.Voters,
		Observers:      mem.Observers,
		MembershipZxid: memZxid,
		Mode:           c.opts.Mode.replica(),
		Env:            env,
		SM:             s.sm,
		HardState:      s.disk.hs,
		Log:            log,
		Complete:       complete,
		MaxCounter:     c.opts.MaxCounter,
		MaxBatchBytes:  c.opts.MaxBatchBytes,
		Schedule:       sched,
		OnSoftState:    func(prev, cur zab.SoftState) { c.softChanged(s, cur) },
		OnSnapshot: func(z zab.Zxid, busy bool) {
			if busy {
				s.busy = append(s.busy, z)
			}
		},
		Rand:   rand.New(rand.NewPCG(c.rng.Uint64(), s.id)),
		Breaks: c.opts.Breaks,
	}
	if c.opts.StreamPiece > 0 {
		c.newStreamed(s).wire(&cfg.Env, &cfg)
	}
	d, err := replica.New(cfg)
	if err != nil {
		c.fail(fmt.Errorf("server %d: replica.New: %w", s.id, err))
		return
	}
	s.d = d
	s.busy = []zab.Zxid{m.zxid}
	s.up = true
	s.paused = 0
	s.syncAt = 0
	s.soft = zab.SoftState{}
	if err := c.chk.restored(s.id, m); err != nil {
		c.fail(err)
	}
	c.process(s)
}

// simClock reads the simulated time: one unit is a millisecond.
type simClock struct{ c *Cluster }

func (k simClock) Now() time.Time { return time.Unix(0, k.c.now*int64(time.Millisecond)) }

// RunFor advances the simulation by d time units (stopping at a failure).
func (c *Cluster) RunFor(d int64) {
	end := c.now + d
	for c.now < end && c.err == nil {
		c.step()
	}
}

// RunUntil advances until cond holds, at most d time units; it reports
// whether cond held.
func (c *Cluster) RunUntil(d int64, cond func() bool) bool {
	end := c.now + d
	for c.now < end && c.err == nil {
		if cond() {
			return true
		}
		c.step()
	}
	return c.err == nil && cond()
}

func (c *Cluster) step() {
	c.now++
	for _, id := range c.ids {
		if s := c.servers[id]; !s.up && s.restartAt != 0 && c.now >= s.restartAt {
			c.restart(s)
		}
	}
	batch, order := c.net.due(c.now, c.canReceive)
	for _, k := range order {
		if c.err == nil {
			c.deliver(batch[k.i].m)
		}
	}
	c.net.progress(c.now, c.reportProgress)
	for _, id := range c.ids {
		if s := c.servers[id]; c.err == nil && s.up && c.now >= s.paused && s.outbox != nil {
			s.outbox.release(c)
		}
	}
	for _, id := range c.ids {
		s := c.servers[id]
		if c.err == nil && s.up && s.syncAt != 0 && c.now >= s.syncAt && c.now >= s.paused {
			s.syncAt = 0
			// The group commit: what Persisted causes is sent at once.
			if err := s.d.SyncLog(); err != nil {
				c.fail(fmt.Errorf("server %d: SyncLog: %w", s.id, err))
				return
			}
			c.process(s)
		}
	}
	for _, id := range c.ids {
		s := c.servers[id]
		if c.err == nil && s.up && c.now >= s.paused && c.now >= s.nextTick {
			s.nextTick = c.now + s.period
			s.d.Tick()
			c.process(s)
		}
	}
	if c.err != nil {
		return
	}
	if c.faultsOn {
		if c.chance(c.opts.ProposeRate) {
			c.proposeRandom()
		}
		c.faults()
		if g, ok := c.opts.Machines.(clusterStepper); ok && c.err == nil {
			g.stepCluster(c)
		}
		if c.opts.Machines != nil && c.chance(c.opts.ProposeRate) {
			c.checkRandom()
		}
	}
	if c.wl != nil && c.err == nil {
		c.wl.step(c, c.faultsOn)
	}
	c.housekeeping()
}

func (c *Cluster) canReceive(id uint64) bool {
	s := c.servers[id]
	return s.up && c.now >= s.paused
}

func (c *Cluster) deliver(m zab.Message) {
	c.tr.add(event{t: c.now, m: m, msg: true})
	s := c.servers[m.To]
	if m.Type == zab.MsgSync && int(m.Sync) < len(c.Stats.Syncs) {
		c.Stats.Syncs[m.Sync]++
	}
	// A SNAP from a server the recipient no longer follows belongs to a
	// session it left (a slow link delivered it late): zab drops it, and
	// the recipient's log says nothing about what the leader saw.
	if m.Type == zab.MsgSync && m.Sync == zab.SyncSnap && c.opts.Mode == ModeDiskless && !c.opts.OutcomesOnly &&
		s.soft.Leader == m.From {
		if err := c.checkSnapNeeded(s, c.servers[m.From]); err != nil {
			c.fail(err)
			return
		}
	}
	if err := s.d.Step(m); err != nil {
		c.fail(fmt.Errorf("server %d: Step(%v): %w", s.id, m, err))
		return
	}
	c.process(s)
}

// process runs the server's driver until it has nothing to do, and asks
// for an fsync (after a simulated latency) when it queued log writes.
func (c *Cluster) process(s *server) {
	if c.err != nil || !s.up {
		return
	}
	if err := s.d.Process(); err != nil {
		c.fail(fmt.Errorf("server %d: %w", s.id, err))
		return
	}
	if s.syncAt == 0 && s.d.Pending() {
		delay := int64(1)
		if c.opts.Mode == ModeSync {
			delay += c.rng.Int64N(c.opts.MaxSyncDelay)
		}
		s.syncAt = c.now + delay
	}
}

// send is a server's Env.Send: it checks what the server says and puts
// the messages on the network, behind a streamed SNAP's pieces in the
// server's outbox (stream.go) while any wait there for their peer.
func (c *Cluster) send(s *server, msgs []zab.Message) {
	for _, m := range msgs {
		if s.fuzzy && !c.opts.OutcomesOnly && (m.Type == zab.MsgVote || m.Type == zab.MsgFollowerInfo) && !m.NonVoting {
			c.fail(fmt.Errorf("server %d restarted from a partial state offers its vote (%v) before a leader synchronized it", s.id, m.Type))
			return
		}
		if m.Type == zab.MsgProposal && len(m.Entries) > 0 {
			if err := c.chk.appended(s.id, m.Entries); err != nil {
				c.fail(err)
				return
			}
		}
		if s.outbox != nil && s.outbox.hold(m) {
			continue
		}
		c.emit(m)
	}
}

// emit puts m on the network.
func (c *Cluster) emit(m zab.Message) {
	delay := 1 + c.rng.Int64N(c.opts.MaxDelay)
	if m.Type == zab.MsgSync && m.Sync == zab.SyncSnap && c.opts.SnapTransfer > 0 {
		// The state's size sets the time: between half and all of
		// SnapTransfer, every time, so a rule that cannot complete a
		// long transfer never converges.
		dur := c.opts.SnapTransfer/2 + 1 + c.xrng.Int64N(c.opts.SnapTransfer/2+1)
		var stall, breakAfter int64
		if c.xrng.Float64() < c.opts.SnapStall {
			stall = 1 + c.xrng.Int64N(dur)
			breakAfter = (1 + c.xrng.Int64N(3)) * initLimit * c.opts.TickEvery
		}
		c.net.sendTransfer(m, c.now, delay, dur, stall, breakAfter)
		return
	}
	c.net.send(m, c.now, delay)
}

// initLimit is zab's default InitLimit, which the simulated servers run
// with.
const initLimit = 10

// reportProgress is the transport of server at reporting that a chunk of
// a transfer with peer moved (transfer.go). A paused server's transport
// reads nothing.
func (c *Cluster) reportProgress(at, peer uint64) {
	s := c.servers[at]
	if s.up && c.now >= s.paused {
		s.d.ReportProgress(peer)
	}
}

// softChanged is a server's OnSoftState.
func (c *Cluster) softChanged(s *server, cur zab.SoftState) {
	prev := s.soft
	s.soft = cur
	if cur.Phase == zab.PhaseBroadcast && cur.State != zab.StateLooking || prev.Recovering && !cur.Recovering {
		// A leader synchronized it (or it leads, which a fuzzy server
		// cannot: it does not vote). Or zab says it no longer
		// recovers: a learner synchronized by UPTODATE whose role a
		// configuration committed in the same step changed looks again
		// before its driver sees the broadcast phase.
		s.fuzzy = false
	}
	c.note(s.id, fmt.Sprintf("%v %v leader=%d epoch=%d recovering=%v",
		s.soft.State, s.soft.Phase, s.soft.Leader, s.soft.Epoch, s.soft.Recovering))
	if err := c.chk.soft(s.id, s.soft); err != nil {
		c.fail(err)
		return
	}
	if s.soft.Established() && c.transferTo != 0 && s.soft.Transferee == 0 {
		if s.id == c.transferTo {
			c.Stats.Handovers++
		}
		c.transferTo = 0
	}
	if s.soft.Epoch > c.Stats.MaxEpoch && s.soft.Established() {
		c.Stats.MaxEpoch = s.soft.Epoch
	}
}

// applied is a server's state machine hook: every entry it applies.
func (c *Cluster) applied(s *server, e zab.Entry, m machine, res linmodel.Result, isOp bool) error {
	if c.err != nil {
		return c.err
	}
	isNew, err := c.chk.applied(s.id, e, m)
	if err != nil {
		c.fail(err)
		return err
	}
	if isNew {
		c.noteZxid(s.id, "commit ", e.Zxid)
		c.configApplied(e)
		if c.opts.Mode != ModeDiskless && !c.opts.OutcomesOnly {
			if err := c.checkDurable(e.Zxid); err != nil {
				c.fail(err)
				return err
			}
		}
	}
	if isOp && c.wl != nil {
		c.wl.applied(s.id, e.Zxid, res)
	}
	if c.marker != nil && bytes.Equal(e.Data, c.marker) {
		c.markerApplied = true
	}
	return nil
}

// checkSnapNeeded (diskless): a leader keeps its log back to the busy
// snapshot before its newest, so a learner whose log reaches there
// (a member restarted from its own last snapshot) catches up by DIFF or
// TRUNC; a SNAP then means the log was cut too far.
func (c *Cluster) checkSnapNeeded(to, from *server) error {
	if !from.up || len(from.busy) < 2 {
		return nil
	}
	// The learner's log end, not its state: after a SNAP whose image was
	// newer than the zxid it named, the state runs ahead of the log, and
	// the log is what the leader decides from.
	prev := from.busy[len(from.busy)-2]
	if last := to.d.LastZxid(); last >= prev && last > 0 {
		return fmt.Errorf("leader %d sent a SNAP to %d, whose log ends (%v) at or after the leader's previous busy snapshot (%v)",
			from.id, to.id, last, prev)
	}
	return nil
}

// checkDurable: a committed entry must be on the disks of a quorum.
func (c *Cluster) checkDurable(z zab.Zxid) error {
	// Of the configuration in force before z (its quorum is needed
	// whatever changes are pending).
	before, _ := c.membershipAt(z - 1)
	voters := before.Voters
	n := 0
	for _, id := range voters {
		if s := c.servers[id]; s.disk.durable(z) {
			n++
		}
	}
	if n < len(voters)/2+1 {
		return fmt.Errorf("%v committed while durable on %d of %d voters", z, n, len(voters))
	}
	return nil
}

// Leader returns an up server that is an established leader (the one of
// the highest epoch if stale ones still believe they are), or 0.
func (c *Cluster) Leader() uint64 {
	var best uint64
	var epoch uint32
	for _, id := range c.ids {
		s := c.servers[id]
		if s.up && s.soft.Established() && (best == 0 || s.soft.Epoch > epoch) {
			best, epoch = id, s.soft.Epoch
		}
	}
	return best
}

// Propose proposes data at the current leader; it reports the zxid or an
// error (no leader, or the leader refused).
func (c *Cluster) Propose(data []byte) (zab.Zxid, error) {
	l := c.Leader()
	if l == 0 {
		return 0, zab.ErrNotLeader
	}
	return c.proposeAt(c.servers[l], data, nil)
}

// proposeAt proposes data at s; proposed, if not nil, learns the zxid
// before the driver runs (which may apply the entry at once).
func (c *Cluster) proposeAt(s *server, data []byte, proposed func(zab.Zxid)) (zab.Zxid, error) {
	z, err := s.d.Propose(data)
	if err != nil {
		return 0, err
	}
	if proposed != nil {
		proposed(z)
	}
	if err := c.noteProposed(s, z, data); err != nil {
		return z, err
	}
	c.process(s)
	return z, nil
}

// noteProposed records the entry s proposed at z with the checker and the
// counts.
func (c *Cluster) noteProposed(s *server, z zab.Zxid, data []byte) error {
	if err := c.chk.appended(s.id, []zab.Entry{{Zxid: z, Data: data}}); err != nil {
		c.fail(err)
		return err
	}
	c.proposed++
	c.Stats.Proposed++
	c.noteZxid(s.id, "propose ", z)
	return nil
}

func (c *Cluster) proposeRandom() {
	var cands []*server
	for _, id := range c.ids {
		s := c.servers[id]
		if s.up && c.now >= s.paused && s.soft.Established() {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		return
	}
	s := cands[c.rng.IntN(len(cands))]
	if c.rng.IntN(4) == 0 {
		c.proposeBatch(s, 2+c.rng.IntN(3))
		return
	}
	if _, err := c.proposeAt(s, c.payload(c.proposed), nil); err != nil && !expectedProposeErr(err) {
		c.fail(fmt.Errorf("server %d: Propose: %w", s.id, err))
	}
}

// payload is the data of the i-th proposal.
func (c *Cluster) payload(i int) []byte {
	if c.opts.Machines != nil {
		return c.opts.Machines.Payload(i)
	}
	data := strconv.AppendUint([]byte("w"), c.opts.Seed, 36)
	data = append(data, '.')
	return strconv.AppendInt(data, int64(i), 10)
}

// proposeBatch proposes n entries at s in one Driver.ProposeAll, as a
// kv leader proposes a MultiPut's puts.
func (c *Cluster) proposeBatch(s *server, n int) {
	datas := make([][]byte, n)
	for i := range datas {
		datas[i] = c.payload(c.proposed + i)
	}
	zs, err := s.d.ProposeAll(datas)
	for i, z := range zs {
		if c.noteProposed(s, z, datas[i]) != nil {
			return
		}
	}
	if len(zs) > 0 {
		c.process(s)
	}
	if err != nil && !expectedProposeErr(err) {
		c.fail(fmt.Errorf("server %d: ProposeAll: %w", s.id, err))
	}
}

// housekeeping lets each running server take the snapshots its
// scheduler asks for.
func (c *Cluster) housekeeping() {
	for _, id := range c.ids {
		s := c.servers[id]
		if c.err != nil || !s.up || c.now < s.paused {
			continue
		}
		if took, err := s.d.MaybeSnapshot(context.Background()); err != nil {
			c.fail(fmt.Errorf("server %d: %w", s.id, err))
		} else if took {
			c.noteZxid(s.id, "snapshot at ", s.sm.m.zxid)
			c.process(s)
		}
	}
}

// checkHistory checks the register workload's history linearizable.
//
// The check holds every seed in every mode to the strict promise that
// no acknowledged write is ever lost, because the fault schedule never
// goes beyond any mode's promise, as checker.go's prefix check (strict in
// every mode) already assumes: in sync mode an entry is acknowledged only
// once fsynced on a quorum (checkDurable) and a crash keeps what was
// fsynced; in async mode the simulator crashes processes, not machines,
// and an entry is acknowledged only once written to the OS on a quorum;
// in diskless mode crashRandom and leaderFault never take down, nor
// leave recovering, more than a minority of the voters at once, the
// bound diskless mode's durability is promised within. A schedule that
// crashed a diskless majority (which may lose acknowledged writes by
// design) would have to leave such seeds out of this check.
func (c *Cluster) checkHistory() {
	c.wl.finish()
	for _, op := range c.wl.history {
		if op.Output.(linmodel.Output).Unknown {
			c.Stats.RegUnknown++
		} else {
			c.Stats.RegOps++
		}
	}
	checked, err := checkLinearizable(c.wl.history)
	if !checked {
		c.Stats.LinUnchecked++
	}
	if err != nil {
		c.fail(fmt.Errorf("linearizability: %w", err))
	}
}

// Close releases what the servers' state machines hold (Machines runs:
// their stores); the cluster is not used afterwards.
func (c *Cluster) Close() {
	for _, id := range c.ids {
		if d := c.servers[id].disk; d.ext != nil {
			d.ext.Close()
			d.ext = nil
		}
	}
}

// checkRandom has a random running server check its state machine's
// contents (Machines runs only: a read of what the run committed).
func (c *Cluster) checkRandom() {
	s := c.servers[c.ids[c.rng.IntN(len(c.ids))]]
	if !s.up || s.sm.ext == nil {
		return
	}
	if err := s.sm.ext.Check(false); err != nil {
		c.fail(fmt.Errorf("server %d: %w", s.id, err))
	}
}
