// Package zklogs runs the replicated-log API (corral.rlog.v1, through
// rlog/rlogsvc) on the logs kept in a ZooKeeper tree under rlog.root
// (docs/design/rlog.md, "The API on the tree's logs"). Every operation is
// ordinary ZooKeeper requests on one session, so the logs have one state,
// the tree's, visible to any ZooKeeper client, and anything this package
// does a client such as kazoo can do with the same requests:
//
//   - a log is the znode root/<name>; its data is the control record
//     "zkrl1 start=S end=E sealed=B" (empty data reads as start=0 end=0
//     sealed=false);
//   - an append of n bytes at the end E is one multi: setData of the log
//     to end=E+n with the version just read, and create of the entry
//     root/<name>/<E as 20 decimal digits> holding the bytes. The version
//     check makes the end a compare-and-swap, so an expected offset is
//     exact and concurrent writers serialize;
//   - trim to S sets start=S (never down), then deletes the entries that
//     end at or below S; seal sets sealed=true; delete seals, deletes the
//     entries, then the log.
//
// Entries larger than the server's inline size go to each member's data
// log as any append does (a multi's first large create is an append).
package zklogs
