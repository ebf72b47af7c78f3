package zab

// Transfer progress. A join's steps are bounded by InitLimit ticks each
// (tickLearner, tickLeader), but one step may carry a large state: a SNAP
// of tens of megabytes, or a long DIFF, takes longer than InitLimit to
// build, send, receive and install on a slow or loaded machine, and a
// bound on the whole step would end every such join before it completed
// (the learner looking again every InitLimit, for good). ZooKeeper bounds
// each socket read of a streamed snapshot by initLimit instead
// (Learner.syncWithLeader, LearnerHandler), so a transfer that keeps
// moving bytes is never cut and one that stalls is.
//
// zab counts progress the same way, from four sources:
//   - the driver's transport reports that bytes of a message to or from a
//     peer keep moving (ReportProgress), every chunk of a large frame;
//   - the peer's driver says that it is building the SNAP image (the
//     leader, before a byte of it leaves) or installing it (the learner,
//     after the last byte arrived) with MsgSyncProgress, every chunk of
//     the image it writes or reads;
//   - the DIFF's entries, each PROPOSAL between the sync header and
//     NEWLEADER (stepLearner);
//   - the learner's own durable install of a SNAP (Advance of the Ready
//     that carried it), after which the rest of the step gets InitLimit.
//
// Progress restarts the learner's current step while it waits for its
// sync (stages lsEpoch and lsSyncing), and refreshes the leader's view
// of a learner it has not synchronized yet (peer.lastHeard, whose
// InitLimit bound forgets a silent one), and the leader's own wait for
// NEWLEADER acknowledgements while one of those learners is mid-sync.
// Pings, and proposals after NEWLEADER, are not progress: they flow
// forever, and a step lost on a link that broke unnoticed (an
// ACKNEWLEADER, simulator seed 38110) would then never end. A stalled
// transfer reports nothing, so its step ends after InitLimit ticks.

// ReportProgress tells the node that bytes of a message between it and
// server id are moving (a chunk of a large frame was read from, or
// written to, the link with id). The transport cannot tell sessions or
// message types apart; zab decides what a report extends. A report that
// matches no join in progress is ignored.
func (n *Node) ReportProgress(id uint64) {
	defer n.afterEvent()
	n.reportProgress(id)
}

func (n *Node) reportProgress(id uint64) {
	switch {
	case (n.state == StateFollowing || n.state == StateObserving) && n.learn != nil && n.leader == id:
		n.learnerProgress()
	case n.state == StateLeading && n.lead != nil:
		n.leaderProgress(id)
	}
}

// learnerProgress restarts the step of a join that waits for its sync.
// Later steps (the wait for UPTODATE) carry no bulk data, and must end if
// their message was lost.
func (n *Node) learnerProgress() {
	if ls := n.learn; ls.stage == lsEpoch || ls.stage == lsSyncing {
		ls.stepStart = n.now
	}
}

// leaderProgress keeps the session of learner id, whose sync is moving,
// from being forgotten, and the leader's wait for a quorum to acknowledge
// NEWLEADER from running out while that learner takes it.
func (n *Node) leaderProgress(id uint64) {
	l := n.lead
	p := l.peers[id]
	if p == nil || p.stage >= stageSynced {
		return
	}
	p.lastHeard = n.now
	if p.stage == stageSyncSent && !l.established && n.phase == PhaseSync && n.eligible(p) {
		l.start = n.now
	}
}

// snapshotInstalled restarts a learner's step once the driver has made a
// SNAP durable: the rest of the step (NEWLEADER, the durable log after
// the snapshot) gets InitLimit from the end of the install, as ZooKeeper
// bounds the leader's wait for the NEWLEADER acknowledgement from the end
// of the transfer.
func (n *Node) snapshotInstalled() {
	if n.learn != nil && (n.state == StateFollowing || n.state == StateObserving) && n.learn.stage < lsBroadcast {
		n.learn.stepStart = n.now
	}
}
