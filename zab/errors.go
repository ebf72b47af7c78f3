package zab

import "errors"

var (
	// ErrNotLeader is returned by Propose on a node that is not an
	// established leader. The driver forwards the request to Status().Leader
	// or retries after the next election.
	ErrNotLeader = errors.New("zab: not an established leader")
	// ErrEpochExhausted is returned by Propose when the leader has used every
	// counter of its epoch and the in-place move to the next epoch (see
	// docs/design/zab.md, "Counter rollover") has not yet been acknowledged
	// by a quorum. It is transient: the driver retries, as it would when
	// throttled.
	ErrEpochExhausted = errors.New("zab: zxid counter exhausted, epoch roll pending")
	// ErrTransferring is returned by Propose and NextZxid while the leader
	// hands leadership over (TransferLeadership). It is transient: the
	// driver retries, after the transfer at the new leader or, if it was
	// aborted, here.
	ErrTransferring = errors.New("zab: leadership transfer in progress")
	// ErrTransferTarget is returned by TransferLeadership for a server that
	// cannot lead: not a voter of the configuration (an observer or an
	// unknown id), or a voter that is still recovering.
	ErrTransferTarget = errors.New("zab: transfer target cannot lead")
	// ErrReconfigInProgress is returned by Propose for a configuration
	// change while another is in the log and not yet committed
	// (ZooKeeper's RECONFIGINPROGRESS).
	ErrReconfigInProgress = errors.New("zab: a reconfiguration is in progress")
	// ErrNewConfigNoQuorum is returned by Propose for a configuration
	// change whose voters do not include a quorum connected to the leader
	// and synchronized as followers (ZooKeeper's NEWCONFIGNOQUORUM).
	ErrNewConfigNoQuorum = errors.New("zab: no quorum of the new configuration is synchronized with the leader")
	// ErrInvalidMembership wraps the errors of Membership.Validate.
	ErrInvalidMembership = errors.New("zab: invalid membership")
	// ErrWrongRecipient is returned by Step for a message addressed to
	// another server.
	ErrWrongRecipient = errors.New("zab: message addressed to another server")
	// ErrCompacted is returned by a Storage asked for entries at or below
	// its snapshot.
	ErrCompacted = errors.New("zab: entries compacted into a snapshot")
	// ErrInvalidConfig wraps every configuration error of NewNode.
	ErrInvalidConfig = errors.New("zab: invalid config")
	// ErrDiverged is returned by Step when a leader asks this server to drop
	// transactions it already knows to be committed. It means the ensemble
	// broke Zab's safety (for example a quorum of disks was lost); the node
	// refuses the sync and returns to election.
	ErrDiverged = errors.New("zab: leader history lacks committed transactions")
)
