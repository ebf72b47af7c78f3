package kv

import (
	"context"
	"errors"
	"fmt"
)

// Group is the replica group the service writes through and confirms its
// reads with: a zab ensemble driven by package replica, or LocalGroup.
type Group interface {
	// Propose replicates data as one entry and returns once this member
	// has applied it (the Store then holds its Result). An error means
	// the entry may or may not commit: *NotLeaderError when this member
	// does not lead (the entry was not proposed), another when leadership
	// was lost or ctx ended after it was.
	Propose(ctx context.Context, data []byte) error
	// ProposeAll proposes datas as consecutive entries, together (they
	// reach the followers in the same messages), and returns once every
	// proposed one is applied here: each entry's error is what Propose
	// would have returned for it.
	ProposeAll(ctx context.Context, datas [][]byte) []error
	// Leader reports whether this member leads its group now, and who
	// does as far as it knows.
	Leader() (self bool, l LeaderInfo)
	// ConfirmLeadership returns nil once a quorum has confirmed that this
	// member still led at some moment after the call began, and this
	// member has applied every entry committed before that moment: a read
	// of the Store after it is linearizable. Many concurrent calls may
	// share one confirmation round.
	ConfirmLeadership(ctx context.Context) error
}

// LeaderInfo names a group's leader.
type LeaderInfo struct {
	ID uint64
	// Addr is the leader's API listener (host:port), "" when unknown.
	Addr  string
	Epoch uint32
	// Known is false when no leader is known (an election is running).
	Known bool
}

// NotLeaderError is the error of a member that does not lead its group.
// Group names the RG in a sharded cluster (0 otherwise).
type NotLeaderError struct {
	Leader LeaderInfo
	Group  uint32
}

// WrongRangeError is the answer of a node that hosts no replica of the RG
// that owns a row (or that a request names) under the node's ring.
type WrongRangeError struct {
	Group       uint32
	RingVersion uint64
}

func (e *WrongRangeError) Error() string {
	return fmt.Sprintf("no replica of rg%d here (ring v%d)", e.Group, e.RingVersion)
}

// ErrNoRing: a node of a sharded cluster has not read the ring yet.
var ErrNoRing = errors.New("no ring known yet")

func (e *NotLeaderError) Error() string {
	if !e.Leader.Known {
		return "not the leader; no leader known"
	}
	return fmt.Sprintf("not the leader; the leader is %d at %q (epoch %d)", e.Leader.ID, e.Leader.Addr, e.Leader.Epoch)
}

// ErrRetry wraps errors after which a request may be retried (leadership
// lost while proposing: the entry may or may not have committed).
var ErrRetry = errors.New("retry")
