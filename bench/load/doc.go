// Package load is the benchmark's load generator: sessions speaking just
// enough of the ZooKeeper client protocol (Conn, the request encoders and
// the reply reader), pipelined closed-loop and open-loop phases with a
// window of requests in flight per connection (RunPhase, PhaseConfig,
// PhaseResult), synchronous callers for the experiments that need one
// request at a time, the workloads (create, set, get, seqcreate and the
// paper's read/write mix), the progress bar, and what a phase reads of
// the servers it measures (CPU from /proc, fsync counts and mntr through
// the four-letter words).
//
// Many fields and helpers are exported only because the experiments in
// package bench drive connections directly (durability, ycsb, failover);
// narrowing that surface is the next step of the split.
package load
