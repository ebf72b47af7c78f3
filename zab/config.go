package zab

import (
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
)

// Config configures a Node. Time is counted in ticks (calls to Node.Tick);
// the driver chooses how long a tick is.
type Config struct {
	// ID identifies this server (ZooKeeper's myid); it must be non-zero. A
	// server outside Voters and Observers is joining the ensemble: it
	// follows the leader as a non-voting follower until a configuration
	// change names it (membership.go).
	ID uint64
	// Voters are the servers whose acknowledgements form quorums (a
	// majority of them). Observers receive committed transactions only.
	// They are the configuration in force at Applied; the changes in the
	// log after Applied are read at start.
	Voters    []uint64
	Observers []uint64
	// MembershipZxid is the zxid of the entry that made that
	// configuration (0 for the initial one): its version, ZooKeeper's
	// config version. Servers compare it to adopt a newer configuration
	// from the votes of others.
	MembershipZxid Zxid
	// DecodeMembership reports whether an entry's data is a configuration
	// change and which. Nil means the package's DecodeMembership; a driver
	// whose entries could begin like EncodeMembership's, or that carries
	// changes in its own format, supplies its own.
	DecodeMembership func(data []byte) (Membership, bool)

	// ElectionTick is how often, in ticks, a looking server resends its
	// vote (a random extra of up to ElectionTick ticks spreads the
	// resends). Default 2.
	ElectionTick int
	// HeartbeatTick is how often the leader pings its learners. Default 1.
	HeartbeatTick int
	// InitLimit bounds, in ticks, each of a new leader's waits for a
	// quorum (to fix the epoch, to acknowledge it, to acknowledge
	// NEWLEADER) and each step of a learner's join (LEADERINFO, the
	// sync, UPTODATE), as ZooKeeper's initLimit does. A step carrying a
	// large sync is restarted while its bytes keep moving (progress.go),
	// as ZooKeeper bounds each socket read of a snapshot. Default 10.
	InitLimit int
	// SyncLimit is how long, in ticks, a leader and a synchronized learner
	// may go without hearing from each other (ZooKeeper's syncLimit). A
	// leader that does not hear a quorum within it steps down. Default 5;
	// it must exceed HeartbeatTick.
	SyncLimit int

	// TransferTicks bounds a leadership transfer (TransferLeadership): a
	// leader whose target has not taken over within it aborts the transfer
	// and accepts proposals again. Default InitLimit.
	TransferTicks int

	// MaxBatchBytes bounds the payload of one synchronization message and
	// of Ready.Committed (at least one entry is always sent). Default 1 MiB.
	MaxBatchBytes uint64
	// MaxCounter is the last zxid counter a leader uses in an epoch. Past
	// three quarters of it the leader moves the ensemble to a new epoch in
	// place, without an election. Default math.MaxUint32; tests lower it.
	MaxCounter uint32

	// Storage is the driver's log, snapshot and hard state, read-only to
	// zab. Every entry in it must be durable when NewNode is called.
	Storage Storage
	// Applied is the zxid of the state the driver's state machine holds at
	// start (it must be known committed). Zero means the zxid of
	// Storage.Snapshot(). Entries after it are delivered in Ready.Committed
	// once known committed.
	Applied Zxid
	// Recovering marks a server restarted from a partial state (diskless
	// mode, a fuzzy snapshot and no log): it neither votes nor counts toward
	// any quorum until an established leader has synchronized it.
	Recovering bool

	// KeepEpoch (a group of one: ID the only voter, no observers) makes
	// the leader keep its accepted epoch instead of moving to a new one
	// each time it is elected, and continue that epoch's zxid counter
	// after its log: a standalone ZooKeeper server's zxids stay in epoch 0
	// across restarts (0x1, 0x2, ...), and a standalone server run as a
	// group of one answers the same. Safe only alone: no other server
	// ever holds a history of the same epoch. The in-place epoch roll
	// (roll.go) still moves it on when the counter runs out.
	KeepEpoch bool

	// DisablePeerAcks turns off the acknowledgements voters send one
	// another (peer_ack.go): followers then learn commits from the
	// leader's COMMIT alone, as in ZooKeeper. For A/B measurements and
	// tests.
	DisablePeerAcks bool

	// Rand is the only source of randomness (vote resend jitter, session
	// ids). Nil means a source seeded from ID.
	Rand *rand.Rand
	// Logger receives protocol events; nil discards them.
	Logger *slog.Logger
}

func (c *Config) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	if c.ID == 0 {
		return bad("ID must be non-zero")
	}
	if len(c.Voters) == 0 {
		return bad("no voters")
	}
	seen := map[uint64]bool{}
	for _, ids := range [][]uint64{c.Voters, c.Observers} {
		for _, id := range ids {
			if id == 0 {
				return bad("server id 0")
			}
			if seen[id] {
				return bad("server %d listed twice", id)
			}
			seen[id] = true
		}
	}
	if c.KeepEpoch && (len(c.Voters) != 1 || c.Voters[0] != c.ID || len(c.Observers) != 0) {
		return bad("KeepEpoch needs a group of one: ID the only voter and no observers")
	}
	if c.DecodeMembership == nil {
		c.DecodeMembership = DecodeMembership
	}
	if c.Storage == nil {
		return bad("no Storage")
	}
	if c.ElectionTick == 0 {
		c.ElectionTick = 2
	}
	if c.HeartbeatTick == 0 {
		c.HeartbeatTick = 1
	}
	if c.InitLimit == 0 {
		c.InitLimit = 10
	}
	if c.SyncLimit == 0 {
		c.SyncLimit = 5
	}
	if c.TransferTicks == 0 {
		c.TransferTicks = c.InitLimit
	}
	if c.ElectionTick < 0 || c.HeartbeatTick < 0 || c.InitLimit < 0 || c.SyncLimit < 0 || c.TransferTicks < 0 {
		return bad("negative tick setting")
	}
	if c.SyncLimit <= c.HeartbeatTick {
		return bad("SyncLimit (%d) must exceed HeartbeatTick (%d)", c.SyncLimit, c.HeartbeatTick)
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = 1 << 20
	}
	if c.MaxCounter == 0 {
		c.MaxCounter = math.MaxUint32
	}
	if c.Rand == nil {
		c.Rand = rand.New(rand.NewPCG(c.ID, 0x7a6162))
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Voters = slices.Clone(c.Voters)
	c.Observers = slices.Clone(c.Observers)
	slices.Sort(c.Voters)
	slices.Sort(c.Observers)
	return nil
}

// rollAt is the counter past which an established leader starts moving to
// a new epoch: a quarter of the counter space is left for the proposals
// made while a quorum acknowledges the new epoch.
func (c *Config) rollAt() uint32 {
	return c.MaxCounter - c.MaxCounter/4
}
