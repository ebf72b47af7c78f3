// Package gcpace keeps the Go collector's heap goal at least a fixed
// headroom above the live heap.
//
// With GOGC=100 the collector runs each time the heap doubles, so a
// server whose live heap is a small tree collects very often: each cycle
// marks the whole tree, and the number of cycles is the allocation rate
// divided by the live heap. Under a write load that was 13-20% of each
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
// if that is less. Setting GOGC in the environment turns it off, so an
// operator's choice wins; GOMEMLIMIT, if set, still caps the heap as
// usual.
//
// What it buys and costs, measured (BENCHMARKS.md, eleventh session):
// about 6% less CPU per create for the members of a diskless ensemble
// under 60 synchronous clients, with 1-2 collections instead of about 20
// while a member grows its tree to 440k znodes, and a resident size of
// 600-730 MB there instead of 285-440 MB. A SIGKILLed server's sockets
// close only after the kernel has freed its memory, so a larger heap
// also delays its peers' noticing (about 0.1 s per GB here).
package gcpace
