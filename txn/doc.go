// Package txn defines the transactions the request pipeline produces and the
// data tree applies, and their binary encoding in the log and in
// replication messages.
//
// A transaction is idempotent in the ZooKeeper sense: it carries the
// outcome decided at the leader (final sequential path, parent cversion,
// time, ephemeral owner), so replaying it over a fuzzy snapshot converges
// to the same tree on every replica.
package txn
