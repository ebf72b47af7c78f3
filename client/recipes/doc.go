// Package recipes implements the coordination primitives of the ZooKeeper
// paper (Hunt et al., USENIX ATC 2010, §2.3-2.4) on package client, and
// nothing else: any ZooKeeper 3.6+ server (corral or Apache ZooKeeper)
// serves them.
//
//	Config        configuration with the ready znode (§2.3)
//	Rendezvous    rendezvous
//	Group         group membership
//	SimpleLock    lock file (herd effect)
//	Mutex         lock without herd effect
//	RWMutex       read/write lock
//	DoubleBarrier double barrier
//	Election      leader election
//	Queue         the message queue of the diskless-ZooKeeper thesis
//	Counter       shared counter (compare-and-set on the version)
//
// Each type's doc comment gives its algorithm.
//
// # Failures
//
// Every blocking call takes a context; when it ends the call returns
// ctx.Err() and leaves nothing behind (a queued lock request is deleted,
// in the background if the connection is down).
//
// Connection loss is handled inside: reads are retried, and a write whose
// reply was lost is resolved before it is retried: an ephemeral
// sequential node is found again by the GUID in its name (Curator's
// protected mode), an ephemeral by its owner and content, a queue put, a
// queue claim or a counter increment by a marker node created in the same
// multi. This relies
// on the server executing one session's requests in order, even across
// connections, as ZooKeeper does.
//
// Session expiry ends everything: calls fail with an error wrapping
// client.ErrSessionExpired and the application must Connect again.
//
// Locks, leadership and memberships are returned as a *Held, whose Lost
// channel closes when the hold ends: the node was deleted, the session
// expired, or (locks and leadership, by default) the connection dropped,
// since the server may then expire the session and let someone else in
// before this client hears of it. A holder must stop acting as one when
// Lost closes. See Held and KeepOnDisconnect.
//
// Files: one per recipe; held.go (Held and its watch), queueing.go (the
// sequential-node queue shared by Mutex, RWMutex and Election), nodes.go
// (naming, protected creates, cleanup), retry.go, options.go, errors.go.
package recipes
