package zab

import "fmt"

// StateType is a server's role, as ZooKeeper's ServerState names it.
type StateType uint8

const (
	// StateLooking: in leader election.
	StateLooking StateType = iota
	// StateFollowing: a voter that follows a leader.
	StateFollowing
	// StateLeading: the leader (established or still recovering).
	StateLeading
	// StateObserving: a non-voting learner that follows a leader.
	StateObserving
)

func (s StateType) String() string {
	switch s {
	case StateLooking:
		return "looking"
	case StateFollowing:
		return "following"
	case StateLeading:
		return "leading"
	case StateObserving:
		return "observing"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Phase is the Zab phase a server is in. A server serves reads and, on the
// leader, accepts proposals only in PhaseBroadcast.
type Phase uint8

const (
	// PhaseElection: looking for a leader.
	PhaseElection Phase = iota
	// PhaseDiscovery: agreeing on a new epoch with a quorum.
	PhaseDiscovery
	// PhaseSync: bringing the quorum's histories in line with the leader's.
	PhaseSync
	// PhaseBroadcast: the leader is established and the server is up to date.
	PhaseBroadcast
)

func (p Phase) String() string {
	switch p {
	case PhaseElection:
		return "election"
	case PhaseDiscovery:
		return "discovery"
	case PhaseSync:
		return "sync"
	case PhaseBroadcast:
		return "broadcast"
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// SoftState is the volatile state a driver reacts to: whom to forward
// writes to, whether to serve, what `srvr` reports. It is not persisted.
type SoftState struct {
	State StateType
	Phase Phase
	// Leader is the server this one leads (itself) or follows; 0 while
	// looking.
	Leader uint64
	// Epoch is the epoch of that leader: proposed while in discovery,
	// established in PhaseBroadcast.
	Epoch uint32
	// Recovering is true until an established leader has synchronized this
	// server (see Config.Recovering).
	Recovering bool
	// Transferee is, on a leader handing leadership over, the server it
	// hands it to (transfer.go); 0 otherwise. While it is set, Propose
	// fails with ErrTransferring: a driver answers new and in-flight
	// requests with a retriable error.
	Transferee uint64
}

// Established reports whether this server is the established leader of
// its epoch: the only state in which Propose succeeds.
func (s SoftState) Established() bool {
	return s.State == StateLeading && s.Phase == PhaseBroadcast
}

// HardState is what must survive a crash in every durability mode: the
// last epoch this server promised to follow (acceptedEpoch) and the epoch
// of the leader whose history its log holds (currentEpoch). The driver
// writes it durably before it sends the messages of the same Ready.
type HardState struct {
	AcceptedEpoch uint32
	CurrentEpoch  uint32
}

// Status is a snapshot of a node's state for drivers, tests and
// monitoring.
type Status struct {
	ID uint64
	SoftState
	HardState
	// LastZxid is the last entry of the log (appended, durable or not).
	LastZxid Zxid
	// Persisted is the highest zxid the driver reported durable.
	Persisted Zxid
	// Commit is the highest zxid known committed.
	Commit Zxid
	// Applied is the highest zxid the driver applied (Advance).
	Applied Zxid
	// Round is the election round (ZooKeeper's logical clock).
	Round uint64
	// Membership is the active configuration; PendingMembership the one
	// in the log past the commit point, if any (membership.go).
	Membership        Membership
	PendingMembership *Membership
	// Learners is, on a leader, one entry per learner session, in id
	// order (ZooKeeper's zk_followers, zk_synced_followers and
	// zk_pending_syncs come from it).
	Learners []LearnerStatus
}

// LearnerStatus is a leader's view of one learner.
type LearnerStatus struct {
	ID       uint64
	Observer bool
	// Synced: the learner acknowledged NEWLEADER and receives the
	// broadcast; otherwise it is still joining.
	Synced bool
	// Ack is the highest zxid it acknowledged durable (followers).
	Ack Zxid
	// LastHeard is how many ticks ago the leader last heard from it.
	LastHeard int
}
