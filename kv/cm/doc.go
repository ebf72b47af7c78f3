// Package cm is the configuration manager of the sharded KV store (ACaZoo,
// part 2): the ring, the replica groups' members and each group's leader,
// kept in znodes of an ordinary corral (or ZooKeeper) ensemble.
//
// Layout under a root (DefaultRoot unless configured); see
// docs/design/kv-sharding.md:
//
//	<root>/ring               ring.Encode of the current ring
//	<root>/rgs/<g>            GroupInfo (JSON): the group's members
//	<root>/rgs/<g>/leader     Leader (JSON): epoch, id, address
//	<root>/move               Move (JSON): the pending range move, if any
//
// Store writes it: Init, UpdateRing (a compare-and-set on the ring znode's
// version that also checks every group on the new ring is registered),
// RegisterGroup, DeregisterGroup, and RecordLeader, the conditional update
// a newly elected group leader makes: it succeeds only if the stored epoch
// is lower than the caller's, so a deposed leader cannot overwrite a newer
// one. Announcer wraps it for a storage node: the node reports each epoch
// in which it becomes leader, and the Announcer records it, retrying lost
// writes, until it succeeds or is refused as stale.
//
// A range move is recorded (BeginMove) before it starts, committed by
// SwitchRing and forgotten by EndMove; NextStep, a pure function of the
// record and the ring, says what a recorded move still has to do, so a
// move is resumable (moveplan.go).
//
// View reads it once and keeps a copy current through one persistent
// recursive watch on the root (addWatch PERSISTENT_RECURSIVE), re-reading
// only the znodes the events name, and everything after a reconnect
// (persistent watches do not replay what changed while disconnected).
package cm
