// Package datatree is the znode tree of a ZooKeeper-compatible server: the
// replicated state that committed transactions change.
//
// It owns the nodes and their stats, ACLs (interned, as ZooKeeper's
// ReferenceCountedACLCache), the ephemeral, container and TTL indexes, the
// replicated session table, an incrementally maintained digest for
// comparing replicas, and fuzzy snapshot serialization. It also holds the
// pure rules the request pipeline needs before a transaction exists: path
// validation, ACL checks and fixup, digest ids, sequential suffixes.
//
// Each node keeps its base name and its parent, not its path; a parent
// indexes its children by name in a table that grows one bucket at a time
// (children.go), and a path is found by walking its segments. Nodes are
// allocated in slabs (slab.go), which the snapshot walks, and refer to
// each other by slab and slot; a node's name and data are one record in an
// arena of chunks (arena.go); node.go says how a node is kept small. Apply follows ZooKeeper 3.9's DataTree.processTxn, including the
// stat quirks clients can observe: the stored cversion is a child-create
// counter and clients see 2*counter - numChildren; the ephemeralOwner of
// container and TTL nodes is stored with ZooKeeper's markers and shown as 0.
//
// With a pack root (SetPackRoot), the entries of the logs under it are
// packed: an entry nobody changed since its create is a dozen bytes in
// its log's run (run.go, pack.go) instead of a node, read back as the
// node it stands for, unpacked into one by the first write that changes
// it, and written to snapshots as a node.
//
// # Replay over a fuzzy snapshot
//
// WriteSnapshot does not stop writes: it records LastZxid first, then each
// node as it is when reached. Loading the snapshot and applying every logged
// transaction with zxid > LastZxid must give the tree the live server had.
// Transactions are therefore applied with ZooKeeper's idempotence rules,
// and two more where ZooKeeper can diverge:
//
//   - create of an existing node changes nothing but the node's ACL (set to
//     the txn's, as ZooKeeper does) and reports NodeExists; the parent's
//     create counter and pzxid are raised to the txn's if that is higher
//     (ZooKeeper does this for OpCreate only; we do it for every create
//     type, since a session's ephemerals are usually created with create2).
//   - a create moves the parent's counter and pzxid only forward: an older
//     create replayed over a newer parent leaves it alone.
//   - delete moves the parent's pzxid forward (never back) even when the
//     node is already gone, and reports NoNode then.
//   - setData and setACL write absolute values (data, version, aversion,
//     mzxid, mtime), so replaying them in order ends at the final value.
//   - closeSession deletes the paths the txn names (txn.Txn.Paths, as
//     ZooKeeper 3.9's CloseSessionTxn.paths2Delete) whoever owns them at
//     replay time — advancing their parents' pzxid even if the snapshot
//     missed them — then whatever ephemerals the session still owns. The
//     leader must fill Paths for this to hold: a snapshot that missed an
//     ephemeral deleted by the close otherwise leaves its parent's pzxid
//     behind.
//   - (beyond ZooKeeper) delete removes the node's whole subtree: if the
//     node still has children during replay, the snapshot caught them from
//     a later incarnation of the node, and later txns re-create them.
//     ZooKeeper would leave them orphaned.
//   - (beyond ZooKeeper) ReadSnapshot drops nodes whose parent is not in the
//     snapshot. A node caught before its parent was deleted is deleted by a
//     logged txn anyway; one caught after its parent was created is
//     re-created by one. ZooKeeper's depth-first writer cannot produce such
//     nodes; our slab-order writer can.
//
// Each path's state in the snapshot is its state at some moment after
// LastZxid, every later change to it is in the log, and each rule above
// converges from any such state; the fuzzy-snapshot test checks the
// resulting digest against the live tree.
package datatree
