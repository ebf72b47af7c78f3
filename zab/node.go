package zab

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
)

// Node is one server's Zab state machine. It is not safe for concurrent
// use: the driver calls its methods from one goroutine (or under a lock).
// It does no I/O; see the package documentation for the driver's loop.
type Node struct {
	id    uint64
	cfg   Config
	peers []uint64 // every other server, sorted: the order of all iteration
	// cfgs are the configurations in force (membership.go): cfgs[0] the
	// active one, the others in the log past the commit point. voter,
	// observer, peers and quorum are derived from them.
	cfgs     []cfgPoint
	voter    map[uint64]bool
	observer map[uint64]bool
	quorum   int
	// roleCheck: a configuration was committed; afterEvent checks this
	// server's role.
	roleCheck bool
	rand      *rand.Rand
	logger    *slog.Logger
	log       *zlog
	hs        HardState
	prevHS    HardState
	persisted Zxid
	// early holds FOLLOWERINFO received while looking, by sender.
	early      map[uint64]Message
	commit     Zxid
	applying   Zxid // last zxid handed out in Ready.Committed
	applied    Zxid // last zxid the driver applied (Advance)
	recovering bool

	state  StateType
	phase  Phase
	leader uint64
	epoch  uint32
	// pending are the epochs to adopt as currentEpoch once the log is
	// durable up to their zxid (NEWLEADER, on leader and learners alike).
	pending []epochPoint
	now     int // ticks since start

	elect election
	lead  *leaderState
	learn *learnerState

	msgs      []Message
	lastMsg   map[uint64]int // index in msgs of the last message to a peer
	mergeable []mergeState   // whether msgs[i] may absorb later proposals/acks
	// ackBuf is scratch for the acknowledgements a commit is computed
	// from (maybeCommit, followerCommit), reused: both run once per
	// acknowledgement received.
	ackBuf   []Zxid
	prevSoft SoftState
	inflight bool // a Ready is out and not yet advanced
	session  uint64
}

type epochPoint struct {
	epoch uint32
	zxid  Zxid
}

// NewNode returns a node that starts looking for a leader. Its log,
// snapshot and hard state come from cfg.Storage.
func NewNode(cfg Config) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	hs, err := cfg.Storage.HardState()
	if err != nil {
		return nil, fmt.Errorf("zab: storage: %w", err)
	}
	if hs.CurrentEpoch > hs.AcceptedEpoch {
		return nil, fmt.Errorf("%w: currentEpoch %d above acceptedEpoch %d", ErrInvalidConfig, hs.CurrentEpoch, hs.AcceptedEpoch)
	}
	snap, err := cfg.Storage.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("zab: storage: %w", err)
	}
	lg, err := newLog(cfg.Storage)
	if err != nil {
		return nil, err
	}
	applied := cfg.Applied
	if applied == 0 {
		applied = snap.Zxid
	}
	if applied < snap.Zxid || applied > lg.lastZxid() {
		return nil, fmt.Errorf("%w: Applied %v outside [%v, %v]", ErrInvalidConfig, applied, snap.Zxid, lg.lastZxid())
	}
	n := &Node{
		id:        cfg.ID,
		cfg:       cfg,
		voter:     map[uint64]bool{},
		observer:  map[uint64]bool{},
		rand:      cfg.Rand,
		logger:    cfg.Logger.With("zab", cfg.ID),
		log:       lg,
		hs:        hs,
		prevHS:    hs,
		persisted: lg.lastZxid(),
		commit:    applied,
		applying:  applied,
		applied:   applied,
		lastMsg:   map[uint64]int{},
		session:   cfg.Rand.Uint64() >> 1,
		prevSoft:  SoftState{State: StateType(255)},
	}
	n.cfgs = []cfgPoint{{zxid: cfg.MembershipZxid, m: Membership{Voters: cfg.Voters, Observers: cfg.Observers}}}
	// The configuration changes in the log after Applied.
	for after, last := applied, lg.lastZxid(); after < last; {
		ents, err := lg.entries(after, last, cfg.MaxBatchBytes)
		if err != nil {
			return nil, fmt.Errorf("zab: storage: %w", err)
		}
		if len(ents) == 0 {
			return nil, fmt.Errorf("zab: storage has no entries in (%v, %v]", after, last)
		}
		prev := after
		for _, e := range ents {
			if m, ok := n.membershipOf(e); ok {
				n.addConfig(cfgPoint{zxid: e.Zxid, prev: prev, m: m})
			}
			prev = e.Zxid
		}
		after = prev
	}
	n.rebuildMembership()
	// Any server, not only a voter of the configuration it starts with:
	// a change it has not seen may make it one.
	n.recovering = cfg.Recovering
	n.becomeLooking()
	return n, nil
}

// ID returns this server's id.
func (n *Node) ID() uint64 { return n.id }

// Tick advances the node's clock by one tick: election resends,
// heartbeats, and the InitLimit/SyncLimit deadlines.
func (n *Node) Tick() {
	defer n.afterEvent()
	n.now++
	switch n.state {
	case StateLooking:
		n.tickElection()
	case StateLeading:
		n.tickLeader()
	case StateFollowing, StateObserving:
		n.tickLearner()
	}
}

// Step processes one message from another server. Stale messages (an old
// session, a finished phase) are dropped without error; an error means the
// message was not for this node (ErrWrongRecipient) or
// that the ensemble's history is broken (ErrDiverged).
func (n *Node) Step(m Message) error {
	if m.To != n.id {
		return fmt.Errorf("%w: %d, this is %d", ErrWrongRecipient, m.To, n.id)
	}
	if m.From == n.id {
		return nil
	}
	defer n.afterEvent()
	// Any server may send: one outside every configuration this node
	// knows may be joining, or a member of a configuration this node has
	// not learned yet, or a removed one that has not (membership.go). Each
	// handler checks the sender's role where it matters.
	switch m.Type {
	case MsgSyncProgress:
		n.reportProgress(m.From)
	case MsgVote:
		if n.state == StateLooking {
			n.learnMembership(m)
		}
		m.Vote.handover = m.Epoch
		n.stepVote(m)
	case MsgFollowerInfo:
		switch n.state {
		case StateLeading:
			n.leaderFollowerInfo(m)
		case StateFollowing, StateObserving:
			if n.awaitsDesignation() {
				// Our leader is about to name the next one, maybe us
				// (membership.go): keep it for becomeLeader.
				n.keepEarly(m)
				return nil
			}
			// Not leading, and not about to: tell the learner at once
			// rather than let it wait out initLimit.
			n.sendReject(m)
		case StateLooking:
			if n.elect.vote.Leader != n.id {
				// It votes for another server: it will not lead in
				// this round. Without this answer a learner that
				// decided for it on votes of an earlier view waited
				// out initLimit, and could decide for it again: with
				// a configuration change in this server's log and not
				// in the learner's, the simulator found elections
				// that never ended that way. The answer carries this
				// server's vote and round: the learner joins that round
				// (learner.go) rather than start one of its own.
				n.sendReject(m)
				return nil
			}
			// The learner decided first; this server may be about to
			// lead. Keep the latest per learner for becomeLeader.
			n.keepEarly(m)
		}
	case MsgAckEpoch, MsgAckNewLeader, MsgAck, MsgAckEpochRoll:
		if n.state == StateLeading {
			n.stepLeader(m)
		}
	case MsgPeerAck:
		n.stepPeerAck(m)
	case MsgLeaderInfo, MsgSync, MsgProposal, MsgNewLeader, MsgUpToDate,
		MsgCommit, MsgInform, MsgPing, MsgEpochRoll, MsgTimeoutNow:
		if n.learn != nil && m.From == n.leader && m.Session == n.learn.session {
			return n.stepLearner(m)
		}
	}
	return nil
}

// keepEarly keeps a learner's FOLLOWERINFO, the latest per learner, for
// becomeLeader.
func (n *Node) keepEarly(m Message) {
	if n.early == nil {
		n.early = map[uint64]Message{}
	}
	n.early[m.From] = m
}

// Persisted tells the node that its log is durable up to z (in the sense
// of the driver's durability mode: fsynced, written, or held in memory).
// Followers acknowledge proposals, and leaders count their own vote, only
// up to the persisted zxid.
func (n *Node) Persisted(z Zxid) {
	z = min(z, n.log.lastZxid())
	if z <= n.persisted {
		return
	}
	defer n.afterEvent()
	n.persisted = z
	n.completeEpochs()
	switch n.state {
	case StateLeading:
		n.maybeCommit()
		n.leaderPeerAck()
	case StateFollowing:
		n.maybeAck()
	}
}

// ReportUnreachable tells the node that the driver's link to server id
// broke (its TCP connection closed). A learner whose leader it is looks
// for a leader again at once, as ZooKeeper's learner does when its socket
// to the leader closes, instead of waiting out SyncLimit; a leader drops
// that learner's session and steps down if it no longer hears a quorum
// (leaderLostLink). A link that
// breaks while the leader lives costs an election; zab's safety does not
// depend on the report.
func (n *Node) ReportUnreachable(id uint64) {
	defer n.afterEvent()
	switch {
	case (n.state == StateFollowing || n.state == StateObserving) && n.leader == id:
		n.logger.Debug("link to the leader broke", "leader", id)
		n.becomeLooking()
	case n.state == StateLeading && n.lead != nil:
		n.leaderLostLink(id)
	}
}

// Status reports the node's state.
func (n *Node) Status() Status {
	st := Status{
		ID:        n.id,
		SoftState: n.softState(),
		HardState: n.hs,
		LastZxid:  n.log.lastZxid(),
		Persisted: n.persisted,
		Commit:    n.commit,
		Applied:   n.applied,
		Round:     n.elect.round,
	}
	st.Membership, st.PendingMembership = n.Membership()
	if n.lead != nil {
		for _, id := range n.peers {
			if p := n.lead.peers[id]; p != nil {
				st.Learners = append(st.Learners, LearnerStatus{
					ID:        id,
					Observer:  p.observer,
					Synced:    p.stage >= stageSynced,
					Ack:       p.ack,
					LastHeard: n.now - p.lastHeard,
				})
			}
		}
	}
	return st
}

func (n *Node) softState() SoftState {
	s := SoftState{State: n.state, Phase: n.phase, Leader: n.leader, Epoch: n.epoch, Recovering: n.recovering}
	if n.lead != nil && n.lead.transfer != nil {
		s.Transferee = n.lead.transfer.to
	}
	return s
}

// ackable is the highest zxid this node may count as its acknowledgement:
// durable, and not beyond the start of an epoch whose currentEpoch is not
// yet persisted (acknowledging a later entry while the hard state still
// names an older epoch could let that entry be committed by servers an
// election would rank below ones lacking it).
func (n *Node) ackable() Zxid {
	a := n.persisted
	if len(n.pending) > 0 {
		a = min(a, n.pending[0].zxid)
	}
	return a
}

// completeEpochs adopts each pending epoch whose history is now durable.
func (n *Node) completeEpochs() {
	for len(n.pending) > 0 && n.persisted >= n.pending[0].zxid {
		p := n.pending[0]
		n.pending = n.pending[1:]
		if p.epoch > n.hs.CurrentEpoch {
			n.hs.CurrentEpoch = p.epoch
		}
		switch n.state {
		case StateLeading:
			n.maybeEstablish()
		case StateFollowing, StateObserving:
			n.learnerEpochDone(p)
		}
	}
	if n.state == StateLeading {
		n.maybeCommit()
	}
}

// resetRole forgets everything tied to the current role.
func (n *Node) resetRole() {
	n.early = nil
	n.lead = nil
	n.learn = nil
	n.pending = nil
	n.epoch = 0
	n.leader = 0
}

func (n *Node) nextSession() uint64 {
	n.session++
	return n.session
}

// send queues a message.
func (n *Node) send(m Message) {
	m.From = n.id
	n.lastMsg[m.To] = len(n.msgs)
	n.msgs = append(n.msgs, m)
	n.mergeable = append(n.mergeable, notMergeable)
}

// mergeState says whether a queued message may absorb later ones and
// whether its Entries slice is its own to append to.
type mergeState uint8

const (
	notMergeable mergeState = iota
	// mergeShared: Entries may share a backing array with the log or the
	// caller, so the first merge copies it.
	mergeShared
	// mergeOwned: Entries was allocated by a merge; later merges append in
	// place. Copying on every merge instead made a burst of k proposals
	// cost O(k^2) (a fifth of the leader's CPU under 1000 pipelined
	// creates).
	mergeOwned
)

// sendMergeable queues a proposal, commit or ack, folding it into the
// previous message to the same peer when that is of the same kind, so a
// burst of proposals travels as one message.
func (n *Node) sendMergeable(m Message) {
	if i, ok := n.lastMsg[m.To]; ok && n.mergeable[i] != notMergeable {
		last := &n.msgs[i]
		if last.Type == m.Type && last.Session == m.Session {
			switch m.Type {
			case MsgProposal:
				if k := len(last.Entries); k > 0 && last.Entries[k-1].Zxid == m.Prev {
					if n.mergeable[i] == mergeShared {
						own := make([]Entry, k, 2*(k+len(m.Entries)))
						copy(own, last.Entries)
						last.Entries = own
						n.mergeable[i] = mergeOwned
					}
					last.Entries = append(last.Entries, m.Entries...)
					return
				}
			case MsgCommit:
				last.Commit = max(last.Commit, m.Commit)
				return
			case MsgAck:
				last.Zxid = max(last.Zxid, m.Zxid)
				last.Vote.Round = max(last.Vote.Round, m.Vote.Round)
				return
			case MsgPeerAck:
				if last.Epoch == m.Epoch {
					last.Zxid = max(last.Zxid, m.Zxid)
					return
				}
			}
		}
	}
	n.send(m)
	n.mergeable[len(n.mergeable)-1] = mergeShared
}
