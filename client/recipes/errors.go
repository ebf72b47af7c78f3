package recipes

import "errors"

var (
	// ErrReleased is a Held's Err after Release.
	ErrReleased = errors.New("recipes: released")
	// ErrNodeDeleted is a Held's Err when its node disappeared although
	// the session lives (someone deleted it).
	ErrNodeDeleted = errors.New("recipes: node deleted")
	// ErrBadKey: a configuration key that cannot be a znode name.
	ErrBadKey = errors.New("recipes: bad configuration key")
	// ErrEmptyInfo: Rendezvous.Publish with nothing to publish (an empty
	// rendezvous node means "not filled in yet").
	ErrEmptyInfo = errors.New("recipes: empty rendezvous information")
	// ErrBadCounter: the counter node holds something other than a
	// decimal integer.
	ErrBadCounter = errors.New("recipes: counter node does not hold an integer")
	// ErrNoLeader: no candidate is in the election.
	ErrNoLeader = errors.New("recipes: no leader")
	// ErrGaveUp: a recipe retried a bounded number of times (its node
	// kept disappearing) and stopped.
	ErrGaveUp = errors.New("recipes: gave up after repeated retries")
)

// Causes a Held's Err may also report, from package client:
// client.ErrConnectionLoss (the connection dropped; the session may still
// expire, so the lock is treated as lost), client.ErrSessionExpired and
// client.ErrClosed.

// errNotConnected is internal: the handle could not be armed because the
// connection is down; the caller waits for it and checks again.
var errNotConnected = errors.New("recipes: not connected")
