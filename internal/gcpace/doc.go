// Package gcpace paces the Go collector: garbage proportional to the live
// heap, with a floor, and an optional memory limit from zoo.cfg.
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
// max(live*Proportion/100, headroom): garbage proportional to the live
// heap (Proportion is 50: GOGC=50) once the tree is large, and a floor of
// headroom bytes (64 MiB, or a sixty-fourth of the machine's memory if
// that is less) so that a small tree is not marked over and over. Setting
// GOGC in the environment turns it off, so an operator's choice wins.
//
// The collector keeps a goal's worth of heap resident, and the runtime's
// scavenger returns only what lies above the goal, so a server whose
// write load has stopped would stay at its peak (half as much again as
// its live heap) for as long as it is idle. Run watches the allocation
// as well: once the process has allocated less than 4 MiB in 2 s and
// what a collection would return to the OS (dead objects and free spans)
// exceeds a thirty-second of the live heap (at least 4 MiB), it calls
// debug.FreeOSMemory: one collection, after which resident memory is
// about the live heap. Releases are spaced by a hundred times what the
// last one took (at least 2 s), so they cost at most about a hundredth
// of a CPU. Under a write load resident
// memory is still up to the goal.
//
// SetMemoryLimit applies zoo.cfg's memory.limit as the runtime's soft
// memory limit (GOMEMLIMIT, if set, wins): near it the collector runs as
// often as it must to stay under, whatever the pacing above would do.
//
// History: the floor was 512 MiB (or a sixteenth of memory) with no
// proportion, which bought about 6% less CPU per create for the members
// of a diskless ensemble under 60 synchronous clients (BENCHMARKS.md,
// eleventh session) but left 600-730 MB resident for a 440k-znode tree
// instead of 285-440 MB; issue 27 traded it for memory proportional to
// the tree. A SIGKILLed server's sockets close only after the kernel has
// freed its memory, so a larger heap also delays its peers' noticing
// (about 0.1 s per GB here).
package gcpace
