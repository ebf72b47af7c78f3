package replica

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/corral-db/corral/zab"
)

// Mode is a durability mode (README's table): when a member acknowledges
// a proposal.
type Mode uint8

const (
	// Sync: after its log record is fsynced (group commit).
	Sync Mode = iota
	// Async: after its log record is written to the OS.
	Async
	// Diskless: once the proposal is in memory; no log on disk.
	Diskless
)

func (m Mode) String() string {
	switch m {
	case Async:
		return "async"
	case Diskless:
		return "diskless"
	}
	return "sync"
}

// Config configures a Driver.
type Config struct {
	ID        uint64
	Voters    []uint64
	Observers []uint64
	// MembershipZxid and DecodeMembership are zab.Config's: the version
	// of the configuration Voters and Observers give, and how to tell a
	// configuration-change entry (nil: zab's encoding).
	MembershipZxid   zab.Zxid
	DecodeMembership func([]byte) (zab.Membership, bool)
	Mode             Mode
	Env              Env
	SM               StateMachine

	// HardState is the epochs persisted at start.
	HardState zab.HardState
	// Log is what the log store holds after the state machine's Applied()
	// at start (sync, async), or what a diskless checkpoint saved beside
	// the snapshot it loaded. Every entry must be durable.
	Log []zab.Entry
	// Complete (diskless) says the state loaded at start is a complete
	// checkpoint. A diskless member that took part in an epoch and
	// restarts from anything else is recovering: it neither votes nor
	// counts toward a quorum until a leader has synchronized it.
	Complete bool

	// Zab timing in ticks, as zab.Config (0: zab's defaults).
	ElectionTick, HeartbeatTick, InitLimit, SyncLimit int
	MaxBatchBytes                                     uint64
	MaxCounter                                        uint32

	// KeepEpoch: a group of one keeps its epoch across elections and
	// restarts (zab.Config.KeepEpoch), as a standalone ZooKeeper server's
	// zxids stay in epoch 0.
	KeepEpoch bool

	// Schedule sets when snapshots are taken.
	Schedule Schedule

	// OnSoftState, if set, learns every change of role, leader, epoch,
	// phase or recovering flag, on the goroutine that calls Process,
	// before the Ready's committed entries are applied.
	OnSoftState func(prev, cur zab.SoftState)
	// OnAppend, if set, learns the entries the node is about to append
	// to its log (proposals it accepts, a sync's entries), on the
	// goroutine that calls Process, before they are written and so
	// before they are acknowledged.
	OnAppend func(ents []zab.Entry)
	// OnSnapshot, if set, learns each snapshot MaybeSnapshot took: its
	// zxid and whether it was a busy one (those move the log cut).
	OnSnapshot func(z zab.Zxid, busy bool)
	// Released, if set, learns on a group of one in sync or async mode
	// (a standalone server) that every entry up to z is applied and cut
	// from the in-memory log: neither the driver nor zab reads their Data
	// again (the log store copied it when it appended), so the owner may
	// reuse the buffers it proposed them in. It is called on the goroutine
	// that processed the commit, without the driver's locks, and must not
	// block. Other groups keep their entries for learners and never call
	// it.
	Released func(z zab.Zxid)
	// OnDriverMessage, if set, receives the MsgDriver messages peers send
	// (request forwarding and the like), on the goroutine that calls Step.
	OnDriverMessage func(m zab.Message)
	// Intercept, if set, sees every message Step is given first, on the
	// goroutine that calls Step, and may change it; false drops it (the
	// owner took it). Streamed snapshots (replica/snapstream) store their
	// pieces and vet the SNAP here, in the order the messages came.
	Intercept func(m *zab.Message) bool
	// OnConfirmed, if set, learns each advance of Confirmed (a quorum
	// answered a leadership confirmation round), on the goroutine that
	// calls Step, after the driver's lock is released: readers waiting
	// for a round wake on it instead of polling.
	OnConfirmed func(round uint64)

	// Rand is the only randomness (zab's and the snapshot points'); nil
	// seeds one from ID and the time.
	Rand   *rand.Rand
	Logger *slog.Logger

	// SyncProgressEvery is how often a member building a SNAP image for
	// a learner, or installing one from its leader, tells the other end
	// that the sync is moving (zab.MsgSyncProgress): neither moves bytes
	// over the link, and either can take longer than InitLimit for a
	// large state. 0: never (a driver whose steps take no time, the
	// simulator). A tick's duration or a few suits a real server.
	SyncProgressEvery time.Duration
	// Breaks deliberately violates one of the driver's rules. The
	// simulator's self-test (sim/bite_test.go) sets them to show that it
	// catches each violation; nothing else may.
	Breaks Breaks
}

// Breaks name the rules the simulator must be able to catch a driver
// breaking.
type Breaks struct {
	// AckBeforeDurable reports log entries Persisted as soon as they are
	// appended, before the log store syncs them.
	AckBeforeDurable bool
	// IgnoreRecovering starts a diskless member restarted from a partial
	// snapshot as a voter.
	IgnoreRecovering bool
	// CutAtNewest cuts a diskless member's log at its newest snapshot
	// instead of the one before, so a member restarted from its own last
	// snapshot needs a SNAP.
	CutAtNewest bool
	// ProgressForever reports transfer progress from the leader on every
	// tick, as a transport would that counted pings as progress: a
	// learner's join step then never runs out, so one whose message was
	// lost waits for good.
	ProgressForever bool
	// IgnoreProgress drops the transport's progress reports: a learner
	// then gets InitLimit ticks for a SNAP however large, and one that
	// takes longer never completes.
	IgnoreProgress bool
	// SendSlim hands zab the in-memory log's slim entries (Slimmer) as
	// they are, without rebuilding them: learners brought up by DIFF get
	// the small forms.
	SendSlim bool
}

// Schedule is the snapshot policy.
type Schedule struct {
	// SnapCount: a snapshot starts after a random count of writes between
	// SnapCount/2 and SnapCount (log records in sync and async modes,
	// applied entries in diskless mode: the thesis's busy snapshots).
	// Default 100000, ZooKeeper's.
	SnapCount int
	// Spacing: after a snapshot that took d, the next waits until
	// Spacing*d has passed, so snapshots take at most 1/(1+Spacing) of a
	// core. Default 4. Diskless busy snapshots are not spaced.
	Spacing int
	// IdleQuiet (diskless): once no write has come for this long and at
	// least IdleMin writes came since the newest snapshot started, an idle
	// snapshot is taken, spacing permitting. Default 100 ms; negative
	// turns idle snapshots off.
	IdleQuiet time.Duration
	// IdleMin defaults to SnapCount/100 (at least 1).
	IdleMin int
	// MaxExposure (diskless) bounds how long a write stays out of every
	// snapshot at low and moderate write rates (below IdleMin writes per
	// IdleQuiet, 10,000/s by default): once the oldest such write is
	// max(MaxExposure, 5 x the last snapshot's duration) old, a snapshot
	// starts, spacing permitting (so snapshots still take at most a
	// fifth of a core). Above that rate the SnapCount cadence rules.
	// Default 1 s; negative turns it off.
	MaxExposure time.Duration
	// SnapBytes: a busy snapshot also starts once the entries written
	// since the newest snapshot started hold a random number of bytes
	// between SnapBytes/2 and SnapBytes (the log store's records of
	// them, as ZooKeeper's snapSizeLimitInKb counts its log files: the
	// entries' data, or their Weight with a Weigher store). The driver
	// keeps the entries since the snapshot before last in memory (zab
	// reads them for DIFF), so this bounds that log by bytes as
	// SnapCount does by count: with large entries SnapCount alone let it
	// grow to gigabytes. Entries a Slimmer log store slimmed still count
	// their record whole: the bound is also on what a DIFF or a restart
	// may have to read back (ZooKeeper's counts its log files, which
	// hold the whole transactions). A payload a Weigher keeps out of
	// its records (the logs' data log) does not count: a member reads it
	// back only for a learner, and its own store bounds it. 0 (the
	// default): no byte trigger.
	SnapBytes int64
}

func (s *Schedule) setDefaults() {
	if s.SnapCount <= 0 {
		s.SnapCount = 100000
	}
	if s.Spacing <= 0 {
		s.Spacing = 4
	}
	if s.IdleQuiet == 0 {
		s.IdleQuiet = 100 * time.Millisecond
	}
	if s.IdleMin <= 0 {
		s.IdleMin = max(s.SnapCount/100, 1)
	}
	if s.MaxExposure == 0 {
		s.MaxExposure = time.Second
	}
}

var errConfig = errors.New("replica: invalid config")
