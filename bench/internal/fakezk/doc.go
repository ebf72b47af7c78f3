// Package fakezk holds in-process fake ZooKeeper servers for the
// benchmark's tests: Server answers the load generator's requests
// from an in-memory tree under modes that reorder, hold, drop or fail
// replies; the YCSB fake stores records as the ycsb experiment lays them
// out; the tree fake serves the durability experiment's creates, reads,
// deletes and queue. They check every request strictly and report what
// they found wrong through the test.
//
// They are three because each was written beside one experiment; making
// them one server with options is the next step.
package fakezk
