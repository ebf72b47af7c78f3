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
//     (64 bytes by default) back and forth to an echo goroutine of this
//     process, round trips back to back; each round trip is one sample.
//   - idle loopback: the same to an echo in another process (EchoPeer;
//     `corral bench` starts itself as `corral-bench floor-echo SIZE`),
//     each round trip after a pause (200 µs by default, a busy wait). A
//     server's hops cross between processes, each asleep since its last
//     message, and what that wake-up costs is the machine's, not the
//     server's (on a small virtual machine, several back-to-back round
//     trips; docs/design/bench-floor.md).
//
// The floor for N members is sync(N) + RoundTrips(N) × loopback, at the
// p50 and (as a sum of tails, an upper estimate) at the p99; the idle
// floor the same with the idle loopback. compare runs the probe before
// its targets and states each sequential create p50 as a multiple of both
// for its number of servers (Multiple, IdleMultiple).
//
// Benchmarks report, tests assert: nothing here judges the numbers.
package floor
