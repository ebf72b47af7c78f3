package route

import (
	"errors"
	"fmt"

	"github.com/corral-db/corral/kv/ring"
)

// NotLeader is what a member that does not lead its group answers: the
// leader it knows of (LeaderAddr empty when it knows none) in Epoch.
type NotLeader struct {
	Group      ring.GroupID
	Epoch      uint64
	LeaderID   uint64
	LeaderAddr string
}

func (e *NotLeader) Error() string {
	if e.LeaderAddr == "" {
		return fmt.Sprintf("route: %v: not the leader, none known in epoch %d", e.Group, e.Epoch)
	}
	return fmt.Sprintf("route: %v: not the leader; leader is %d at %s in epoch %d", e.Group, e.LeaderID, e.LeaderAddr, e.Epoch)
}

// WrongRange is what a group answers for a row it does not own under its
// ring, RingVersion.
type WrongRange struct {
	Group       ring.GroupID
	RingVersion uint64
}

func (e *WrongRange) Error() string {
	return fmt.Sprintf("route: %v does not own the row under ring v%d", e.Group, e.RingVersion)
}

// Errors of Route.
var (
	// ErrNoRing: no State with a ring has been given yet.
	ErrNoRing = errors.New("route: no ring known")
	// ErrNoLeader: the owning group has no known leader; wait for the
	// configuration to change (or send to any member for forwarding).
	ErrNoLeader = errors.New("route: group has no known leader")
	// ErrRingBehind: a server reported a newer ring than the one held;
	// wait for the configuration to catch up.
	ErrRingBehind = errors.New("route: ring older than a server's")
	// ErrUnknownGroup: the ring names a group the State does not list.
	ErrUnknownGroup = errors.New("route: group not registered")
)
