package zab

import "fmt"

// MsgType names a protocol message. The names follow ZooKeeper's packets
// (FastLeaderElection notifications, FOLLOWERINFO, LEADERINFO, ACKEPOCH,
// DIFF/TRUNC/SNAP, PROPOSAL, NEWLEADER, UPTODATE, ACK, COMMIT, INFORM,
// PING) plus the two of the in-place epoch roll, the peer acknowledgement
// and the leadership transfer's TIMEOUTNOW.
type MsgType uint8

const (
	// MsgVote is an election notification: Vote, State, NonVoting.
	// A non-zero Epoch marks a handover vote: its candidate was named by
	// the leader of that epoch in a leadership transfer (transfer.go).
	MsgVote MsgType = iota + 1
	// MsgFollowerInfo (learner to leader) opens a session: Session, Epoch =
	// the learner's acceptedEpoch, NonVoting = recovering, State =
	// StateObserving for an observer (ZooKeeper's OBSERVERINFO).
	MsgFollowerInfo
	// MsgLeaderInfo (leader to learner) proposes the new epoch: Epoch, and
	// State, how the session is served (StateFollowing asks an observer
	// that a configuration change makes a voter to follow). With Reject
	// set, the recipient is not leading and the learner must look again.
	MsgLeaderInfo
	// MsgAckEpoch (learner to leader) accepts Epoch and reports the
	// learner's history: CurrentEpoch and Zxid (its last zxid).
	MsgAckEpoch
	// MsgSync (leader to learner) starts synchronization: Sync says how,
	// Zxid is the learner's last zxid (DIFF), the truncation point (TRUNC)
	// or the snapshot's zxid (SNAP, with Snapshot). MsgProposal messages
	// with the missing entries follow, then MsgNewLeader.
	MsgSync
	// MsgProposal (leader to follower) carries Entries; Prev is the zxid
	// just before Entries[0], so a learner detects a gap in its stream.
	MsgProposal
	// MsgNewLeader (leader to learner) ends synchronization (or switches
	// epoch in place): the learner's log must end at Zxid; once that is
	// durable it sets currentEpoch to Epoch and answers MsgAckNewLeader.
	MsgNewLeader
	// MsgAckNewLeader (learner to leader): Epoch and Zxid of the
	// MsgNewLeader acknowledged.
	MsgAckNewLeader
	// MsgUpToDate (leader to learner): synchronization is over and the
	// leader is established; Commit is its commit zxid.
	MsgUpToDate
	// MsgAck (follower to leader): the follower's log up to Zxid is durable
	// (cumulative). Learners also send it in reply to MsgPing.
	MsgAck
	// MsgCommit (leader to follower): everything up to Commit is committed
	// (cumulative).
	MsgCommit
	// MsgInform (leader to observer): committed Entries after Prev, and
	// Commit.
	MsgInform
	// MsgPing (leader to learner): heartbeat carrying Commit.
	MsgPing
	// MsgEpochRoll (leader to follower) asks the follower to accept Epoch
	// for the same leader, without an election.
	MsgEpochRoll
	// MsgAckEpochRoll (follower to leader): Epoch accepted.
	MsgAckEpochRoll
	// MsgDriver carries the driver's own traffic between servers (request
	// forwarding, session touches, sync) over the same links, in
	// Entries[0].Data. zab never sends one and Step ignores it, so a
	// transport needs only one message type.
	MsgDriver
	// MsgPeerAck (voter to voter, in broadcast): the sender's log up to
	// Zxid is durable under currentEpoch Epoch, as in its MsgAck. Followers
	// count them toward a quorum and so learn a commit without waiting for
	// the leader's MsgCommit (peer_ack.go).
	MsgPeerAck
	// MsgTimeoutNow (leader to follower, in broadcast) hands leadership
	// over (transfer.go): the follower, whose log ends at Zxid like the
	// leader's, starts an election at once with a handover vote for
	// itself, marked with the leader's Epoch. With Vote.Leader set it is a
	// designation instead (leader to every learner, at the commit of a
	// change that removes the leader; membership.go): Vote.Leader leads
	// the next epoch and the learners follow it without an election.
	MsgTimeoutNow
	// MsgSyncProgress (leader to learner while it builds the learner's
	// SNAP image; learner to leader while it installs one) says that the
	// sync between the two is moving although no bytes of it cross the
	// link yet or any more. Drivers send it, never the node, and it has
	// no session: Step treats it as ReportProgress(From) (progress.go).
	MsgSyncProgress
)

var msgNames = [...]string{
	MsgVote:         "VOTE",
	MsgFollowerInfo: "FOLLOWERINFO",
	MsgLeaderInfo:   "LEADERINFO",
	MsgAckEpoch:     "ACKEPOCH",
	MsgSync:         "SYNC",
	MsgProposal:     "PROPOSAL",
	MsgNewLeader:    "NEWLEADER",
	MsgAckNewLeader: "ACKNEWLEADER",
	MsgUpToDate:     "UPTODATE",
	MsgAck:          "ACK",
	MsgCommit:       "COMMIT",
	MsgInform:       "INFORM",
	MsgPing:         "PING",
	MsgEpochRoll:    "EPOCHROLL",
	MsgAckEpochRoll: "ACKEPOCHROLL",
	MsgDriver:       "DRIVER",
	MsgPeerAck:      "PEERACK",
	MsgTimeoutNow:   "TIMEOUTNOW",
	MsgSyncProgress: "SYNCPROGRESS",
}

func (t MsgType) String() string {
	if int(t) < len(msgNames) && msgNames[t] != "" {
		return msgNames[t]
	}
	return fmt.Sprintf("msg(%d)", uint8(t))
}

// SyncMode is how a leader brings a learner's history in line with its
// own, as in ZooKeeper's LearnerHandler.syncFollower.
type SyncMode uint8

const (
	// SyncDiff: the learner's last zxid is in the leader's history; the
	// entries after it follow.
	SyncDiff SyncMode = iota + 1
	// SyncTrunc: the learner has entries the leader's history lacks; it
	// drops every entry after Zxid, then the leader's entries follow.
	SyncTrunc
	// SyncSnap: the leader no longer has the entries the learner lacks; the
	// learner installs Snapshot, then the entries after it follow.
	SyncSnap
)

func (s SyncMode) String() string {
	switch s {
	case SyncDiff:
		return "DIFF"
	case SyncTrunc:
		return "TRUNC"
	case SyncSnap:
		return "SNAP"
	}
	return fmt.Sprintf("sync(%d)", uint8(s))
}

// Vote is a FastLeaderElection vote: the proposed leader, its history
// (Epoch is its currentEpoch, Zxid its last zxid) and the election round
// of the voter. Votes compare by (Epoch, Zxid, handover, Leader).
type Vote struct {
	Leader uint64
	Zxid   Zxid
	Epoch  uint32
	Round  uint64
	// handover is the epoch of the leader that named this candidate in a
	// leadership transfer, 0 for an ordinary vote. It travels in the
	// MsgVote's Epoch (send sets it, Step reads it back), so the wire
	// format of a Vote does not change.
	handover uint32
}

// betterThan orders votes: the more recent history first; among equal
// histories a handover vote, so the transfer's target wins over servers
// as up to date as it with a higher id; then the higher id. A handover
// never outranks a more recent history: election stays a choice among the
// most up-to-date servers, and discovery checks it anyway.
func (v Vote) betterThan(o Vote) bool {
	if v.Epoch != o.Epoch {
		return v.Epoch > o.Epoch
	}
	if v.Zxid != o.Zxid {
		return v.Zxid > o.Zxid
	}
	if v.handover != o.handover {
		return v.handover > o.handover
	}
	return v.Leader > o.Leader
}

func (v Vote) sameCandidate(o Vote) bool {
	return v.Leader == o.Leader && v.Zxid == o.Zxid && v.Epoch == o.Epoch
}

// Message is one protocol message. Which fields are meaningful depends on
// Type (see the MsgType constants). Between a learner and its leader,
// every message carries the Session the learner opened with
// MsgFollowerInfo; both sides drop messages of other sessions, so a
// session behaves like one TCP connection of ZooKeeper's.
type Message struct {
	Type     MsgType
	From, To uint64
	Session  uint64

	Epoch        uint32
	CurrentEpoch uint32
	Zxid         Zxid
	Prev         Zxid
	Commit       Zxid
	Entries      []Entry
	Snapshot     *Snapshot
	Sync         SyncMode
	// Membership is, in a SNAP MsgSync, the configuration in force at the
	// snapshot's zxid, and in a MsgVote the sender's active (committed)
	// configuration; MembershipZxid is the zxid of the entry that made it
	// (0: the initial configuration). See membership.go.
	Membership     *Membership
	MembershipZxid Zxid

	Vote      Vote
	State     StateType
	NonVoting bool
	Reject    bool

	// Group tags the message with its replica group when one transport
	// carries the messages of several (a storage node of the sharded KV
	// store). zab neither sets nor reads it; 0 means untagged.
	Group uint64
}

func (m Message) String() string {
	s := fmt.Sprintf("%v %d->%d", m.Type, m.From, m.To)
	switch m.Type {
	case MsgVote:
		s += fmt.Sprintf(" %v vote=%d/%v/e%d/r%d", m.State, m.Vote.Leader, m.Vote.Zxid, m.Vote.Epoch, m.Vote.Round)
		if m.Epoch != 0 {
			s += fmt.Sprintf(" handover=%d", m.Epoch)
		}
		if m.NonVoting {
			s += " nonvoting"
		}
	case MsgSync:
		s += fmt.Sprintf(" %v %v", m.Sync, m.Zxid)
	case MsgProposal, MsgInform:
		s += fmt.Sprintf(" prev=%v n=%d", m.Prev, len(m.Entries))
		if len(m.Entries) > 0 {
			s += fmt.Sprintf(" last=%v", m.Entries[len(m.Entries)-1].Zxid)
		}
	default:
		s += fmt.Sprintf(" e%d z=%v c=%v", m.Epoch, m.Zxid, m.Commit)
	}
	return s
}
