package replica

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/corral-db/corral/zab"
)

// Driver runs one member of a replica group: it feeds a zab.Node with
// ticks, messages and proposals, and does what each Ready asks through
// its Env, applying committed entries to its StateMachine.
//
// Goroutines. Step, Tick, Propose, ProposeWith and ReportUnreachable may
// be called from any goroutine. Process is called by one goroutine at a
// time (the node loop); SyncLog by one at a time (the log goroutine, or
// the simulator); MaybeSnapshot by one at a time (the snapshot
// goroutine). Run starts all three.
//
// Lock order: pmu (Process; Drive, Kick and a group of one's log
// goroutine take it only if free, the log goroutine after releasing
// wmu) → wmu (the log writer) → mu → lq.mu,
// sched.mu, progMu; wmu is never taken while holding mu, and mu may be taken
// while holding wmu (persisted).
type Driver struct {
	cfg      Config
	log      *slog.Logger
	sm       StateMachine
	env      Env
	diskless bool
	// solo: the only member of its group (one voter, no observer), as a
	// standalone server runs: no learner ever reads the in-memory log,
	// which is cut at every applied entry (processLocked).
	solo  bool
	sched *scheduler
	lq    logQueue

	// pmu serialises Process: the node loop's and Drive's (which takes
	// it only if free).
	pmu sync.Mutex
	// inDrive: Drive holds pmu (written and read under pmu).
	inDrive bool

	// wmu serialises the log writer (SyncLog): appends, syncs and
	// truncations reach the LogStore in queue order.
	wmu sync.Mutex

	// mu guards the node and everything that changes with it.
	mu   sync.Mutex
	node *zab.Node
	// ms is the in-memory log; written under mu only. zs is ms as zab
	// reads it: ms itself, or a slimLog when the log store is a Slimmer
	// (slim.go).
	ms *zab.MemoryStorage
	zs zab.Storage
	// weigher is the log store as a Weigher (nil: entries weigh their
	// data).
	weigher Weigher
	// slimmer is the log store as a Slimmer (nil: entries stay whole).
	// durable is the last zxid the store holds durably in the current
	// generation (persisted); slimmed is the last zxid slim went through.
	// Both under mu.
	slimmer Slimmer
	durable zab.Zxid
	slimmed zab.Zxid
	// gen counts the Readys that truncated the log or installed a
	// snapshot: a Persisted report for entries appended before is stale.
	gen uint64
	// soft is the last soft state the node reported.
	soft zab.SoftState
	// prevSnap (diskless) is the zxid of the newest busy snapshot, the one
	// the log is cut at when the next is taken (cutLog).
	prevSnap zab.Zxid
	// snapInstalls counts the leader's snapshots installed (SNAP).
	snapInstalls int
	// wake is signalled when the node may have a Ready (Run's node loop).
	wake chan struct{}

	// progMu guards progress, the peers the transport reported transfer
	// progress with since the node last heard (ReportProgress). It is
	// never held with mu's callers waiting: ReportProgress runs on
	// transport goroutines, which must not wait for a node loop busy
	// building or installing a snapshot. Lock order: mu before progMu.
	progMu   sync.Mutex
	progress map[uint64]struct{}
}

// New creates a Driver from the state the caller loaded (Config.SM's
// Applied, Config.HardState, Config.Log).
func New(cfg Config) (*Driver, error) {
	if cfg.SM == nil || cfg.Env.Send == nil || cfg.Env.HardState == nil {
		return nil, fmt.Errorf("%w: SM, Env.Send and Env.HardState are required", errConfig)
	}
	diskless := cfg.Mode == Diskless
	if !diskless && cfg.Env.Log == nil {
		return nil, fmt.Errorf("%w: mode %v needs Env.Log", errConfig, cfg.Mode)
	}
	if diskless && cfg.Env.Checkpoints == nil {
		return nil, fmt.Errorf("%w: diskless mode needs Env.Checkpoints", errConfig)
	}
	if cfg.Env.Clock == nil {
		cfg.Env.Clock = SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(cfg.ID, uint64(time.Now().UnixNano())))
	}
	d := &Driver{
		cfg:      cfg,
		log:      cfg.Logger,
		sm:       cfg.SM,
		env:      cfg.Env,
		diskless: diskless,
		solo:     len(cfg.Voters) == 1 && cfg.Voters[0] == cfg.ID && len(cfg.Observers) == 0,
		ms:       zab.NewMemoryStorage(),
		wake:     make(chan struct{}, 1),
	}
	d.sched = newScheduler(cfg.Schedule, diskless, rand.New(rand.NewPCG(cfg.Rand.Uint64(), cfg.ID)))
	d.lq.init()
	applied := cfg.SM.Applied()
	d.ms.SetHardState(cfg.HardState)
	d.ms.ApplySnapshot(zab.Snapshot{Zxid: applied})
	var ents []zab.Entry
	for _, e := range cfg.Log {
		if e.Zxid > applied {
			ents = append(ents, e)
		}
	}
	if err := d.ms.Append(ents); err != nil {
		return nil, fmt.Errorf("replica: the log loaded at start: %w", err)
	}
	d.zs = d.ms
	d.weigher, _ = cfg.Env.Log.(Weigher)
	if sl, ok := cfg.Env.Log.(Slimmer); ok && !diskless {
		d.slimmer = sl
		d.zs = &slimLog{ms: d.ms, sl: sl, sendSlim: cfg.Breaks.SendSlim}
		// The log loaded at start is the store's: durable.
		d.durable, _ = d.ms.LastZxid()
		d.slimmed = applied
	}
	hs := cfg.HardState
	// A diskless member restarted from a busy (fuzzy) snapshot holds an
	// unknown prefix of what it acknowledged: it must not vote or count
	// until a leader has synchronized it. One that never took part in an
	// epoch acknowledged nothing.
	recovering := diskless && !cfg.Complete && (hs.AcceptedEpoch > 0 || hs.CurrentEpoch > 0)
	if cfg.Breaks.IgnoreRecovering {
		recovering = false
	}
	node, err := zab.NewNode(zab.Config{
		ID:               cfg.ID,
		Voters:           cfg.Voters,
		Observers:        cfg.Observers,
		MembershipZxid:   cfg.MembershipZxid,
		DecodeMembership: cfg.DecodeMembership,
		ElectionTick:     cfg.ElectionTick,
		HeartbeatTick:    cfg.HeartbeatTick,
		InitLimit:        cfg.InitLimit,
		SyncLimit:        cfg.SyncLimit,
		MaxBatchBytes:    cfg.MaxBatchBytes,
		MaxCounter:       cfg.MaxCounter,
		KeepEpoch:        cfg.KeepEpoch,
		Storage:          d.zs,
		Applied:          applied,
		Recovering:       recovering,
		// A diskless member acknowledges at once and is CPU-bound under
		// load: there peer acknowledgements cost throughput for a latency
		// that no disk holds up (server measurements in
		// docs/design/replication.md).
		DisablePeerAcks: diskless,
		Rand:            cfg.Rand,
		Logger:          cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	d.node = node
	// A restarted member's log begins at its snapshot; its first busy
	// snapshot keeps the log back to there (cutLog).
	d.prevSnap = applied
	return d, nil
}

// Step hands the node a message from a peer; MsgDriver messages go to
// Config.OnDriverMessage instead.
func (d *Driver) Step(m zab.Message) error {
	if d.cfg.Intercept != nil && !d.cfg.Intercept(&m) {
		return nil
	}
	if m.Type == zab.MsgDriver {
		if d.cfg.OnDriverMessage != nil {
			d.cfg.OnDriverMessage(m)
		}
		return nil
	}
	d.mu.Lock()
	before := d.node.Confirmed()
	err := d.node.Step(m)
	after := d.node.Confirmed()
	d.mu.Unlock()
	d.signal()
	if after > before && d.cfg.OnConfirmed != nil {
		d.cfg.OnConfirmed(after)
	}
	return err
}

// Tick advances the node's clock by one tick.
func (d *Driver) Tick() {
	d.mu.Lock()
	d.flushProgressLocked()
	if d.cfg.Breaks.ProgressForever {
		if st := d.node.Status(); st.Leader != 0 && st.Leader != d.cfg.ID {
			d.node.ReportProgress(st.Leader)
		}
	}
	d.node.Tick()
	d.mu.Unlock()
	d.signal()
}

// ReportProgress tells the node that bytes of a message to or from peer
// are moving (zab.Node.ReportProgress). It never waits for the node:
// the report is handed over at the next tick or Process. A transport
// calls it for every chunk of a large frame it reads or writes.
func (d *Driver) ReportProgress(peer uint64) {
	if d.cfg.Breaks.IgnoreProgress {
		return
	}
	d.progMu.Lock()
	if d.progress == nil {
		d.progress = map[uint64]struct{}{}
	}
	d.progress[peer] = struct{}{}
	d.progMu.Unlock()
	d.signal()
}

// flushProgressLocked hands the progress reports to the node, before a
// tick could end the step they extend.
func (d *Driver) flushProgressLocked() {
	d.progMu.Lock()
	if len(d.progress) == 0 {
		d.progMu.Unlock()
		return
	}
	peers := make([]uint64, 0, len(d.progress))
	for p := range d.progress {
		peers = append(peers, p)
	}
	clear(d.progress)
	d.progMu.Unlock()
	slices.Sort(peers)
	for _, p := range peers {
		d.node.ReportProgress(p)
	}
}

// ReportUnreachable tells the node that the link to peer broke.
func (d *Driver) ReportUnreachable(peer uint64) {
	d.mu.Lock()
	d.node.ReportUnreachable(peer)
	d.mu.Unlock()
	d.signal()
}

// Propose proposes data on the established leader and returns its zxid;
// it fails with zab.ErrNotLeader elsewhere. The entry reaches the state
// machine's Apply once committed, on every member.
func (d *Driver) Propose(data []byte) (zab.Zxid, error) {
	d.mu.Lock()
	z, err := d.node.Propose(data)
	d.mu.Unlock()
	d.signal()
	return z, err
}

// ProposeAll proposes each of datas as one entry, in order, under one
// hold of the driver's lock, and wakes the node loop once: the entries
// of a batch of writes leave in the same messages to the followers, as
// separate Proposes each woken the loop (which ran before the next
// proposer). It returns the zxids of the entries proposed; if the node
// refuses one, the rest are not proposed and err says why.
func (d *Driver) ProposeAll(datas [][]byte) ([]zab.Zxid, error) {
	d.mu.Lock()
	zs := make([]zab.Zxid, 0, len(datas))
	var err error
	for _, data := range datas {
		var z zab.Zxid
		if z, err = d.node.Propose(data); err != nil {
			break
		}
		zs = append(zs, z)
	}
	d.mu.Unlock()
	if len(zs) > 0 {
		d.signal()
	}
	return zs, err
}

// ProposeWith proposes the data build returns for the zxid the entry
// will get, atomically: a state machine whose entries name their own
// zxid (the znode tree's transactions do) builds them here. build runs
// under the driver's lock and must not call the Driver.
func (d *Driver) ProposeWith(build func(z zab.Zxid) ([]byte, error)) (zab.Zxid, error) {
	defer d.signal()
	return d.ProposeWithQuiet(build)
}

// ProposeWithQuiet is ProposeWith without waking the node loop: the
// caller calls Drive next, which processes the proposal on its goroutine
// or wakes the node loop.
func (d *Driver) ProposeWithQuiet(build func(z zab.Zxid) ([]byte, error)) (zab.Zxid, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	z, err := d.node.NextZxid()
	if err != nil {
		return 0, err
	}
	data, err := build(z)
	if err != nil {
		return 0, err
	}
	got, err := d.node.Propose(data)
	if err != nil {
		return 0, err
	}
	if got != z {
		return 0, fmt.Errorf("replica: proposal got zxid %v, assigned %v", got, z)
	}
	return z, nil
}

// CheckMembershipLocked is zab.Node.CheckMembershipChange for a build
// function of ProposeWith, which runs with the driver's lock held: a
// driver whose transaction is a configuration change checks it there and
// turns a refusal into its own answer instead of proposing it.
func (d *Driver) CheckMembershipLocked(m zab.Membership) error {
	return d.node.CheckMembershipChange(m)
}

// TransferLeadership asks this leader to hand leadership to member to
// (zab/transfer.go): proposals fail with zab.ErrTransferring until the
// target leads, or until the transfer times out and this leader resumes.
// It fails with zab.ErrNotLeader on a member that does not lead and with
// zab.ErrTransferTarget for an observer, an unknown or a recovering
// member.
func (d *Driver) TransferLeadership(to uint64) error {
	d.mu.Lock()
	defer d.signal()
	defer d.mu.Unlock()
	return d.node.TransferLeadership(to)
}

// ConfirmLeadership starts a leadership confirmation round (zab/confirm.go)
// and returns its number; Confirmed reports the last round a quorum
// confirmed.
func (d *Driver) ConfirmLeadership() (uint64, error) {
	d.mu.Lock()
	defer d.signal()
	defer d.mu.Unlock()
	return d.node.ConfirmLeadership()
}

// Confirmed returns the last confirmation round a quorum confirmed.
func (d *Driver) Confirmed() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.node.Confirmed()
}

// Status returns the node's status.
func (d *Driver) Status() zab.Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.node.Status()
}

// SoftState returns the soft state the last Ready reported.
func (d *Driver) SoftState() zab.SoftState {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.soft
}

// LogFloor returns the zxid the in-memory log begins after (its cut): a
// learner behind it is sent a snapshot.
func (d *Driver) LogFloor() zab.Zxid {
	d.mu.Lock()
	defer d.mu.Unlock()
	sn, _ := d.ms.Snapshot()
	return sn.Zxid
}

// SnapInstalls counts the leader's snapshots this member installed.
func (d *Driver) SnapInstalls() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.snapInstalls
}

// Entry returns the log entry z if the in-memory log holds it (its slim
// form, if the log store slimmed it).
func (d *Driver) Entry(z zab.Zxid) (zab.Entry, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ms.Entry(z)
}

// LastZxid returns the zxid of the last entry in the log.
func (d *Driver) LastZxid() zab.Zxid {
	d.mu.Lock()
	defer d.mu.Unlock()
	z, _ := d.ms.LastZxid()
	return z
}

func (d *Driver) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}
