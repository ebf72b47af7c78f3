// Package rlog measures corral's replicated logs (ZKRL, issue 24) as the
// thesis's chapter 5 does, in one run, with the machine's anchors and
// Apache ZooKeeper measured beside them (`corral bench rlog`; the flags
// are in bench/command/rlog_cli.go):
//
//   - Anchors: this disk's sequential write + fdatasync bandwidth at
//     each append size (a preallocated file in the work directory, dd
//     with oflag=dsync as a log segment is written) and one loopback TCP
//     stream's bandwidth. The three members of an ensemble on one machine
//     write every byte to the same disk, so the ceiling of replicated
//     appends is the disk's bandwidth at that size ÷ members (Ceiling); every
//     throughput is also reported as a fraction of its ceiling
//     (PointCeiling: loopback ÷ members for diskless, loopback for the
//     read).
//   - Fig. 5.1: MB/s and appends/s against the append size (-sizes).
//   - Figs. 5.2/5.3: p50/p99 latency against appends in flight
//     (-latency), in the disk configuration (-durability, sync) and the
//     memory one (-memory-durability, diskless or async).
//   - Fig. 5.4: ensemble sizes (-quorums) and decoupled against coupled
//     group commit (zoo.cfg rlog.groupCommit, docs/design/rlog.md).
//   - §5.1.2: one reader scanning the Fig. 5.4 log in 1 MiB reads.
//   - ZooKeeper 3.9.3 (bench/launch), the same payloads as sequential
//     znodes from as many go-zookeeper sessions.
//   - Resident memory: one log grown to -grow-bytes, every member's VmRSS
//     sampled -grow-samples times (the 1 GiB → 8 GiB is a long
//     run; the default is small). It runs on the main ensemble after its
//     other phases, whose logs stay on its members' disks (a deleted
//     entry's record is kept until autopurge covers the delete): the work
//     directory needs room for those (tens of GB at the default phase
//     bounds) and for three copies of the growth.
//
// Each configuration is a corral ensemble of `corral server` processes on
// 127.0.0.1 (cluster.go: rlog.root, apiPort, standaloneEnabled=false so
// one member is an ensemble too), launched in turn and stopped by PID;
// appends go through the gRPC API (rlog/rlogclient), one writer goroutine
// per append in flight, each phase on a new log, bounded by -duration and
// -phase-bytes. The report states the targets beside the figures
// (Report.Targets); nothing here asserts them.
package rlog
