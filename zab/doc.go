// Package zab is corral's replication core: ZooKeeper's atomic broadcast
// protocol (Zab) as a deterministic state machine, in the style of
// etcd-io/raft's RawNode. It owns leader election (FastLeaderElection-like
// rounds), discovery (a new epoch above every accepted epoch), synchronization
// (DIFF, TRUNC or SNAP) and broadcast (pipelined PROPOSAL, ACK, COMMIT in
// zxid order, plus acknowledgements among the voters that let a follower
// commit without waiting for the COMMIT: peer_ack.go), heartbeats and the initLimit/syncLimit deadlines, observers,
// the "recovering" state of servers restarted from partial state, an
// in-place epoch change when a zxid counter runs out, leadership
// transfer (transfer.go) and membership change by a configuration entry
// in the log with joint quorums (membership.go).
//
// The package does no I/O, starts no goroutine, reads no clock and imports
// nothing of corral: entries are opaque bytes with a zxid, so any state
// machine (the znode tree, a key-value store, replicated logs) can drive
// it. Time enters as Tick, randomness through Config.Rand, and everything
// the node wants done comes out of Ready. One driver loop:
//
//	for {
//		select {
//		case <-ticker:  node.Tick()
//		case m := <-in: node.Step(m)
//		case req := <-writes: zxid, err := node.Propose(req.data)
//		case z := <-synced: node.Persisted(z) // fsync done (sync mode)
//		}
//		for node.HasReady() {
//			rd := node.Ready()
//			// snapshot, truncate, append, hard state, send, apply:
//			// the order and the durability each needs are on Ready.
//			node.Advance(rd)
//		}
//	}
//
// Durability is the driver's: the node acknowledges a proposal (and a
// leader counts itself) only up to the zxid the driver reports with
// Persisted. A sync-mode driver reports after fsync, an async-mode driver
// after write, a diskless driver at once; nothing else differs.
//
// See docs/design/zab.md for the protocol, its divergences from ZooKeeper
// and from the Zab paper, and what is not done yet.
package zab
