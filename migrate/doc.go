// Package migrate converts between an Apache ZooKeeper dataDir and a
// corral dataDir, both ways: Import reads ZooKeeper's newest valid
// snapshot and the transaction logs after it and writes a corral snapshot
// of the resulting tree; Export writes corral's tree (its newest snapshot
// plus its log) as a ZooKeeper snapshot that ZooKeeper 3.9 loads.
//
// Paths, data, stored stats (czxid, mzxid, pzxid, ctime, mtime, version,
// the child-create counter ZooKeeper stores as cversion, aversion,
// ephemeralOwner including the container and TTL markers), ACLs, the
// session table and the last zxid carry over unchanged: corral stores the
// same fields ZooKeeper does. Both directions write the epochs
// (acceptedEpoch, currentEpoch) so that an ensemble member started on the
// result does not go back in epoch. Neither ever writes into a directory
// that already holds snapshots or logs.
//
// The formats are in package zkfmt (ZooKeeper's) and in packages snap,
// wal and datatree (corral's); the design is docs/design/migration.md.
package migrate
