// Package fakezk holds in-process fake ZooKeeper servers for the
// benchmark's tests: Server answers the load generator's requests
// from an in-memory tree under modes that reorder, hold, drop or fail
// replies; the YCSB fake stores records as the ycsb experiment lays them
// out; the tree fake serves the durability experiment's creates, reads,
// deletes and queue. They check every request strictly and report what
// they found wrong through the test.
//
// Tree and YCSB share one connection loop (loop.go: listener, handshake,
// request framing, problem reporting) and differ only in how they answer;
// Server, with its reply-release modes, still has its own.
package fakezk
