package zab

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Membership changes, as ZooKeeper 3.5+ reconfigures an ensemble
// (zookeeperReconfig): a new configuration travels in the log as an entry
// of its own, proposed by the leader. From the moment it is in a server's
// log until it is committed, every quorum that server forms or counts
// (election, discovery, the acknowledgements that commit an entry at or
// after it, the leader's liveness check) must be a majority of the voters
// of the last committed configuration AND of each configuration in the log
// past the commit point: ZooKeeper's Proposal with two QuorumVerifiers,
// the "joint consensus" of Raft's first membership scheme. The new
// configuration becomes the active one when it is committed.
//
// A leader accepts one change at a time (ErrReconfigInProgress) and only
// when a quorum of the new voters is connected to it and synchronized as
// followers (ErrNewConfigNoQuorum, ZooKeeper's NEWCONFIGNOQUORUM). A new
// server joins before the change that names it: started with the current
// ensemble as its configuration and itself outside it, it finds the leader
// through the members' election answers and follows it as a non-voting
// follower (one to become an observer lists itself as an observer and
// observes); its acknowledgements count once a configuration in the log
// names it a voter. A learner whose role the committed change turns from
// observer to voter or back rejoins in its new role. A leader that the
// committed change leaves out of the voters designates a new voter that
// acknowledged the change as the leader of the next epoch (ZooKeeper's
// designated leader): it leads and the others follow it without an
// election round.
//
// Votes carry the sender's committed configuration and its version (the
// zxid of its entry); a looking server adopts a newer one, as ZooKeeper's
// FastLeaderElection does with its notifications' configuration, so a
// server that was away during changes finds the current voters.
//
// zab cannot read entries: Config.DecodeMembership tells it which entries
// are configuration changes. The default reads the encoding of
// EncodeMembership.
//
// The driver persists the configuration a restarted node starts from
// (Config.Voters and Observers as of Config.Applied, ZooKeeper's dynamic
// configuration file); NewNode reads the changes in the log after it.

// Membership is one configuration of the ensemble.
type Membership struct {
	Voters    []uint64
	Observers []uint64
}

// Clone returns a deep copy.
func (m Membership) Clone() Membership {
	return Membership{Voters: slices.Clone(m.Voters), Observers: slices.Clone(m.Observers)}
}

func (m Membership) String() string {
	return fmt.Sprintf("voters=%v observers=%v", m.Voters, m.Observers)
}

// IsVoter reports whether id is a voter of m.
func (m Membership) IsVoter(id uint64) bool { return slices.Contains(m.Voters, id) }

// IsObserver reports whether id is an observer of m.
func (m Membership) IsObserver(id uint64) bool { return slices.Contains(m.Observers, id) }

// Validate checks that m has voters and lists no server twice or as 0.
func (m Membership) Validate() error {
	if len(m.Voters) == 0 {
		return fmt.Errorf("%w: no voters", ErrInvalidMembership)
	}
	seen := map[uint64]bool{}
	for _, ids := range [][]uint64{m.Voters, m.Observers} {
		for _, id := range ids {
			if id == 0 {
				return fmt.Errorf("%w: server id 0", ErrInvalidMembership)
			}
			if seen[id] {
				return fmt.Errorf("%w: server %d listed twice", ErrInvalidMembership, id)
			}
			seen[id] = true
		}
	}
	return nil
}

func (m Membership) sorted() Membership {
	m = m.Clone()
	slices.Sort(m.Voters)
	slices.Sort(m.Observers)
	return m
}

// membershipMagic starts every entry EncodeMembership writes.
var membershipMagic = []byte("\xffzabcfg\x01")

// EncodeMembership returns the entry data of a configuration change in the
// encoding the default Config.DecodeMembership reads.
func EncodeMembership(m Membership) []byte {
	b := slices.Clone(membershipMagic)
	b = binary.AppendUvarint(b, uint64(len(m.Voters)))
	for _, id := range m.Voters {
		b = binary.AppendUvarint(b, id)
	}
	b = binary.AppendUvarint(b, uint64(len(m.Observers)))
	for _, id := range m.Observers {
		b = binary.AppendUvarint(b, id)
	}
	return b
}

// DecodeMembership reads an entry EncodeMembership wrote; ok is false for
// any other data.
func DecodeMembership(data []byte) (m Membership, ok bool) {
	if len(data) < len(membershipMagic) || string(data[:len(membershipMagic)]) != string(membershipMagic) {
		return Membership{}, false
	}
	b := data[len(membershipMagic):]
	read := func() ([]uint64, bool) {
		k, n := binary.Uvarint(b)
		if n <= 0 || k > uint64(len(b)) {
			return nil, false
		}
		b = b[n:]
		out := make([]uint64, 0, k)
		for range k {
			id, n := binary.Uvarint(b)
			if n <= 0 {
				return nil, false
			}
			b = b[n:]
			out = append(out, id)
		}
		return out, true
	}
	if m.Voters, ok = read(); !ok {
		return Membership{}, false
	}
	if m.Observers, ok = read(); !ok || len(b) != 0 {
		return Membership{}, false
	}
	return m, true
}

// cfgPoint is a configuration and the zxid of the entry that carries it
// (for the configuration a node started from, the zxid it started at);
// prev is the zxid before that entry.
type cfgPoint struct {
	zxid, prev Zxid
	m          Membership
}

// membershipOf decodes a configuration-change entry.
func (n *Node) membershipOf(e Entry) (Membership, bool) {
	m, ok := n.cfg.DecodeMembership(e.Data)
	if !ok || m.Validate() != nil {
		return Membership{}, false
	}
	return m.sorted(), true
}

// appendLog appends entries to the log, recording the configuration
// changes among them. prev is the log's last zxid before them.
func (n *Node) appendLog(ents ...Entry) {
	prev := n.log.lastZxid()
	n.log.append(ents...)
	changed := false
	for _, e := range ents {
		if m, ok := n.membershipOf(e); ok {
			n.addConfig(cfgPoint{zxid: e.Zxid, prev: prev, m: m})
			changed = true
		}
		prev = e.Zxid
	}
	if changed {
		n.logger.Info("configuration in the log", "zxid", n.cfgs[len(n.cfgs)-1].zxid, "config", n.cfgs[len(n.cfgs)-1].m)
		n.rebuildMembership()
	}
}

// addConfig records a configuration entry of the log. A change in the
// log behind it is committed, wherever this node's commit point is: a
// leader proposes a change only once the one before is committed (its
// own commit, or its establishment, committed it). So at most two
// configurations are in force, as in ZooKeeper (the last committed and
// the last proposed), and a server that restarts or rejoins with changes
// in its log it has not seen committed does not wait for quorums of
// configurations long replaced.
func (n *Node) addConfig(c cfgPoint) {
	if len(n.cfgs) > 1 {
		n.cfgs = n.cfgs[len(n.cfgs)-1:]
		n.roleCheck = true
	}
	n.cfgs = append(n.cfgs, c)
}

// truncateConfigs forgets the configurations of entries after t.
func (n *Node) truncateConfigs(t Zxid) {
	k := len(n.cfgs)
	for k > 1 && n.cfgs[k-1].zxid > t {
		k--
	}
	if k != len(n.cfgs) {
		n.cfgs = n.cfgs[:k]
		n.rebuildMembership()
	}
}

// resetConfigs replaces every configuration with m, made by the entry at
// z (a snapshot installed from the leader).
func (n *Node) resetConfigs(m Membership, z Zxid) {
	n.cfgs = []cfgPoint{{zxid: z, m: m.sorted()}}
	n.rebuildMembership()
	n.roleCheck = true
}

// configAt returns the configuration in force at z as far as this node
// knows (the oldest it holds when z is older) and its zxid.
func (n *Node) configAt(z Zxid) cfgPoint {
	p := n.cfgs[0]
	for _, c := range n.cfgs[1:] {
		if c.zxid <= z {
			p = c
		}
	}
	return p
}

// learnMembership adopts, while looking, a committed configuration newer
// than the one this node has as active, from another server's vote, as
// ZooKeeper's FastLeaderElection does with the configuration its
// notifications carry: a server that was away while the ensemble changed
// would otherwise count votes, and send its own, by a configuration that
// may share no quorum with the current one.
func (n *Node) learnMembership(m Message) {
	if m.Membership == nil || m.MembershipZxid <= n.cfgs[0].zxid || m.Membership.Validate() != nil {
		return
	}
	c := cfgPoint{zxid: m.MembershipZxid, m: m.Membership.sorted()}
	switch {
	case len(n.cfgs) > 1 && n.cfgs[1].zxid > c.zxid:
		// Our pending change came after it: keep it pending on top.
		n.cfgs = []cfgPoint{c, n.cfgs[1]}
	default:
		n.cfgs = []cfgPoint{c}
	}
	n.logger.Info("configuration learned from a vote", "from", m.From, "zxid", c.zxid, "config", c.m)
	n.rebuildMembership()
	// Vote again among the voters of the configuration learned.
	n.becomeLooking()
}

// setCommit advances the commit zxid and activates the configurations it
// commits.
func (n *Node) setCommit(c Zxid) {
	if c <= n.commit {
		return
	}
	n.commit = c
	n.activateConfigs()
}

// activateConfigs makes the last configuration at or below the commit
// zxid the active one. Reactions to a change of this server's own role
// wait until the event being handled is done (afterEvent).
func (n *Node) activateConfigs() {
	c := n.commit
	k := 0
	for i := 1; i < len(n.cfgs); i++ {
		if n.cfgs[i].zxid <= c {
			k = i
		}
	}
	if k == 0 {
		return
	}
	n.cfgs = n.cfgs[k:]
	n.logger.Info("configuration committed", "zxid", n.cfgs[0].zxid, "config", n.cfgs[0].m)
	n.rebuildMembership()
	n.roleCheck = true
}

// afterEvent runs at the end of every call that changes the node's state
// (Step, Tick, Persisted, Propose...): a committed configuration may have
// changed this server's role, and the reaction (stepping down, rejoining)
// must not pull the role state from under the handler that committed it.
func (n *Node) afterEvent() {
	if !n.roleCheck {
		return
	}
	n.roleCheck = false
	switch n.state {
	case StateLeading:
		if !n.voter[n.id] && n.lead != nil && n.lead.established {
			n.reconfigStepDown()
		}
	case StateFollowing, StateObserving:
		if n.learn != nil && n.learn.asFollower && n.state == StateFollowing {
			// Following at the leader's request: the change that makes
			// it a voter is on its way in the log.
			return
		}
		if (n.state == StateObserving) != n.observer[n.id] {
			// The session streams proposals to followers and committed
			// entries to observers: rejoin in the new role.
			n.logger.Info("role changed by reconfiguration", "voter", n.voter[n.id], "observer", n.observer[n.id])
			n.becomeLooking()
		}
	}
}

// reconfigStepDown: the committed configuration leaves this leader out of
// the voters. As ZooKeeper's leader does at the commit of such a change
// (Leader.tryToCommit, getDesignatedLeader, COMMITANDACTIVATE), it names a
// designated leader, a new voter that acknowledged the change, and tells
// every learner in MsgTimeoutNow with the designated leader in Vote; the
// designated one leads at once, the others follow it at once, and this
// server follows it as a non-voting follower: no election round. With no
// such voter it just steps down.
//
// Why it is safe: discovery, not the election, makes a leader (discovery.go
// checks the epoch and that no server of the quorum has a more recent
// history); a designation only picks who tries. Why it is live: the
// designated voter acknowledged everything committed (its acknowledgement
// reaches the commit point, which passed the change), and every proposal
// went to it before the designation on the same FIFO session, as to every
// other follower, so no follower it synchronizes holds more of this
// leader's history than it does.
func (n *Node) reconfigStepDown() {
	l := n.lead
	d := n.designatedLeader()
	if d == nil {
		n.stepDown("removed from the voters by reconfiguration")
		return
	}
	last := n.log.lastZxid()
	n.logger.Info("removed by reconfiguration: designating a leader", "to", d.id, "epoch", l.epoch, "zxid", last)
	v := Vote{Leader: d.id, Zxid: last, Epoch: n.hs.CurrentEpoch}
	// The designated leader first, so that it leads before the others'
	// FOLLOWERINFO reach it where links deliver in sending order.
	n.send(Message{Type: MsgTimeoutNow, To: d.id, Session: d.session, Epoch: l.epoch, Zxid: last, Vote: v})
	for _, id := range n.peers {
		if p := l.peers[id]; p != nil && p != d && p.stage >= stageEpochSent {
			n.send(Message{Type: MsgTimeoutNow, To: id, Session: p.session, Epoch: l.epoch, Zxid: last, Vote: v})
		}
	}
	n.followDesignated(v)
}

// designatedLeader picks the successor of a leader that a committed change
// removed: a voter of the configuration in force, in broadcast, whose
// acknowledgement reaches the commit point (so it acknowledged the change
// and everything committed). Among those, the one that acknowledged the
// most (ZooKeeper keeps the candidate that acknowledged the most of the
// outstanding proposals), then the highest id: the one an election among
// them would pick, so a learner that misses the designation (its
// FOLLOWERINFO reached the designated server first and was refused) and
// looks votes for no better candidate, and the designated leader, in
// discovery, does not step down for its vote (election.go).
func (n *Node) designatedLeader() *peer {
	var d *peer
	for _, id := range n.peers {
		p := n.lead.peers[id]
		if p == nil || !n.eligible(p) || p.stage != stageUpToDate || p.ack < n.commit {
			continue
		}
		if d == nil || p.ack >= d.ack {
			d = p
		}
	}
	return d
}

// learnerDesignated: this learner's leader, removed by a committed change,
// names its successor in m.Vote (reconfigStepDown). The successor leads;
// every other learner follows it (or observes), as ZooKeeper's learners
// take the designated leader of COMMITANDACTIVATE as their vote and
// leave the election out (QuorumPeer.processReconfig, updateServerState).
// A successor that cannot lead in its own view looks for a leader.
func (n *Node) learnerDesignated(m Message) {
	if m.Epoch != n.learn.epoch {
		n.logger.Debug("designation of another epoch ignored", "epoch", m.Epoch, "session epoch", n.learn.epoch)
		return
	}
	n.logger.Info("leader removed by reconfiguration designates a successor", "from", n.leader, "to", m.Vote.Leader)
	if m.Vote.Leader == n.id {
		if !n.canVote() {
			n.becomeLooking()
			return
		}
		n.elect.vote = n.selfVote()
		n.becomeLeader()
		return
	}
	n.followDesignated(m.Vote)
}

// awaitsDesignation: this server follows, as a voter, a leader that the
// newest configuration in its log leaves out of the voters, and is a
// voter of that configuration. Once the change commits the leader names
// its successor (reconfigStepDown) in a message that follows the COMMIT,
// and this server may be the one: a FOLLOWERINFO that reaches it before
// then comes from a learner that already has the designation (on
// another link). It is kept for becomeLeader rather than refused: a
// refused learner would look for a leader, and a vote of its for itself
// could outrank the designated leader's and make it step down in
// discovery. A learner kept waiting in vain (the change never commits,
// or names another server) asks again and gives up after initLimit, as
// with any leader that does not answer; if this server stops following,
// what it kept is dropped.
func (n *Node) awaitsDesignation() bool {
	if n.state != StateFollowing || n.learn == nil || n.learn.stage != lsBroadcast || !n.canVote() {
		return false
	}
	newest := n.cfgs[len(n.cfgs)-1].m
	return newest.IsVoter(n.id) && !newest.IsVoter(n.leader)
}

// followDesignated makes v's candidate, named by a removed leader, this
// server's vote and leader. The decision rests on no vote of a round, so
// the learner has not seen it leading (learner.go's rules for a
// candidate that looks again apply).
func (n *Node) followDesignated(v Vote) {
	v.Round = n.elect.round
	n.elect.vote = v
	n.becomeLearner(v.Leader)
}

// rebuildMembership derives the voter and observer sets and the peer list
// from the configurations in force: a server is a voter if any of them
// names it one (it may count toward some quorum), an observer if one names
// it an observer and none a voter.
func (n *Node) rebuildMembership() {
	clear(n.voter)
	clear(n.observer)
	for _, c := range n.cfgs {
		for _, id := range c.m.Voters {
			n.voter[id] = true
		}
	}
	for _, c := range n.cfgs {
		for _, id := range c.m.Observers {
			if !n.voter[id] {
				n.observer[id] = true
			}
		}
	}
	peers := n.peers[:0]
	seen := map[uint64]bool{}
	add := func(id uint64) {
		if id != n.id && !seen[id] {
			seen[id] = true
			peers = append(peers, id)
		}
	}
	for id := range n.voter {
		add(id)
	}
	for id := range n.observer {
		add(id)
	}
	if n.lead != nil {
		for id := range n.lead.peers {
			add(id)
		}
	}
	if n.leader != 0 {
		add(n.leader)
	}
	slices.Sort(peers)
	n.peers = peers
	if len(n.cfgs) == 1 {
		n.quorum = len(n.cfgs[0].m.Voters)/2 + 1
	}
}

// addPeer makes id, a server outside every configuration that opened a
// session (a joining server), part of the iteration order.
func (n *Node) addPeer(id uint64) {
	if i, found := slices.BinarySearch(n.peers, id); !found && id != n.id {
		n.peers = slices.Insert(n.peers, i, id)
	}
}

// joint reports whether configurations other than the active one are in
// force (a change is in the log and not yet committed).
func (n *Node) joint() bool { return len(n.cfgs) > 1 }

// hasQuorum reports whether the servers in is true of form a majority of
// the voters of every configuration in force.
func (n *Node) hasQuorum(in func(id uint64) bool) bool {
	for _, c := range n.cfgs {
		if !n.hasQuorumOf(c.m, in) {
			return false
		}
	}
	return true
}

// anyQuorum reports whether the servers in is true of form a majority of
// the voters of some configuration in force.
func (n *Node) anyQuorum(in func(id uint64) bool) bool {
	for _, c := range n.cfgs {
		if n.hasQuorumOf(c.m, in) {
			return true
		}
	}
	return false
}

// leaderHasQuorum reports whether this leader and the learner sessions
// that count and satisfy pred form a quorum of every configuration.
func (n *Node) leaderHasQuorum(pred func(p *peer) bool) bool {
	return n.hasQuorum(func(id uint64) bool {
		if id == n.id {
			return true
		}
		p := n.lead.peers[id]
		return p != nil && n.eligible(p) && pred(p)
	})
}

// jointCommit returns the highest zxid the acknowledgements make
// committed when a change is in force: entries before a configuration's
// entry need the quorums of the configurations before it, entries from it
// on need its quorum too. ack reports a server's acknowledgement and
// whether it counts.
func (n *Node) jointCommit(ack func(id uint64) (Zxid, bool)) Zxid {
	quorumOf := func(m Membership) Zxid {
		acks := n.ackBuf[:0]
		for _, id := range m.Voters {
			if a, ok := ack(id); ok {
				acks = append(acks, a)
			}
		}
		n.ackBuf = acks
		return quorumZxid(acks, len(m.Voters)/2+1)
	}
	c := quorumOf(n.cfgs[0].m)
	for _, p := range n.cfgs[1:] {
		if c < p.zxid {
			break
		}
		c = max(p.prev, min(c, quorumOf(p.m)))
	}
	return c
}

// Membership returns the active (last committed) configuration and the
// configuration in the log past the commit point, if any.
func (n *Node) Membership() (active Membership, pending *Membership) {
	active = n.cfgs[0].m.Clone()
	if len(n.cfgs) > 1 {
		p := n.cfgs[len(n.cfgs)-1].m.Clone()
		pending = &p
	}
	return active, pending
}

// CheckMembershipChange reports whether this node, leading, would accept
// a proposal of m now (Propose's checks: ErrNotLeader,
// ErrReconfigInProgress, ErrNewConfigNoQuorum, ErrInvalidMembership), so
// that a driver can answer a refused request without proposing it.
func (n *Node) CheckMembershipChange(m Membership) error {
	if n.state != StateLeading || !n.lead.established {
		return ErrNotLeader
	}
	if err := m.Validate(); err != nil {
		return err
	}
	return n.checkMembershipChange(m.sorted())
}

// checkMembershipChange checks a configuration change before the leader
// proposes it.
func (n *Node) checkMembershipChange(m Membership) error {
	if n.joint() {
		return ErrReconfigInProgress
	}
	synced := n.hasQuorumOf(m, func(id uint64) bool {
		if id == n.id {
			return true
		}
		p := n.lead.peers[id]
		return p != nil && !p.observer && !p.recovering && p.stage == stageUpToDate
	})
	if !synced {
		return ErrNewConfigNoQuorum
	}
	return nil
}

func (n *Node) hasQuorumOf(m Membership, in func(id uint64) bool) bool {
	k := 0
	for _, id := range m.Voters {
		if in(id) {
			k++
		}
	}
	return k >= len(m.Voters)/2+1
}
