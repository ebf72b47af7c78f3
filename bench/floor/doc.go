// Package floor is `corral-bench floor`: the machine's floor for one
// replicated write, measured on the disk and loopback the servers use.
//
// A write acknowledged by an ensemble of N members cannot complete faster
// than its two unavoidable costs: the log record reaching the disk on a
// majority of the members, whose fdatasyncs run at the same time on one
// disk here, and the network round trips that carry it (client to the
// server it is connected to, that server to the leader, the leader to the
// followers and back). The probe measures each:
//
//   - sync: N goroutines, one file each in the data directory (one log per
//     member, preallocated with zeros as corral's and ZooKeeper's log
//     segments are, so that a sync writes data and no metadata), each
//     writing its next record (4 KiB by default) and fdatasyncing it, all
//     at once; a round's latency is the time until a majority of them
//     returned (the commit point; all N for N <= 2).
//   - loopback: one TCP connection on 127.0.0.1 bouncing a small message
//     (64 bytes by default) back and forth; each round trip is one sample.
//
// The floor for N members is sync(N) + RoundTrips(N) × loopback, at the
// p50 and (as a sum of tails, an upper estimate) at the p99. compare runs
// the probe before its targets and states each sequential create p50 as a
// multiple of the floor for its number of servers (Multiple).
//
// Benchmarks report, tests assert: nothing here judges the numbers.
package floor
