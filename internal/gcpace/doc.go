// Package gcpace keeps the Go collector's heap goal at least a fixed
// headroom above the live heap.
//
// With GOGC=100 the collector runs each time the heap doubles, so a
// server whose live heap is a small tree collects very often: each cycle
// marks the whole tree, and the number of cycles is the allocation rate
// divided by the live heap. Under a write load that is a sixth of each
// member's CPU (pprof of a 3-server diskless ensemble under the thesis's
// create benchmark), on a machine where the members and their clients
// share the cores. ZooKeeper's JVM, for comparison, is given a heap of
// 1000 MB by its own start script (ZK_SERVER_HEAP) and collects young
// garbage without marking the old.
//
// Run raises GOGC after each cycle so that the next goal is live +
// max(live, headroom): GOGC=100 once the live heap exceeds the headroom,
// fewer cycles below it, at the cost of at most headroom bytes of garbage
// more. The headroom is 512 MiB, or a sixteenth of the machine's memory
// if that is less. Setting GOGC in the environment turns it off, so an operator's
// choice wins; GOMEMLIMIT, if set, still caps the heap as usual.
package gcpace
