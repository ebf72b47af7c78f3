// Package kv is the `corral bench kv` experiment: corral's key-value store
// (ACaZoo, issue 23) against etcd in the same run, over the ACaZoo paper's
// records, with YCSB's A, B, C and F and 100% writes.
//
//	corral bench kv [-workload A,B,C,F,W (of A-F, W)] [-records 10000] [-threads 16]
//	                [-warmup 2s] [-duration 10s] [-seed 1] [-systems corral,etcd]
//	                [-members 3] [-durability sync,async,diskless] [-tick-time 500]
//	                [-leader-policy fixed,random,roundrobin,coolest] [-server-opt key=value]...
//	                [-groups 1,2,4] [-routing routed,forwarded] [-compaction-sample 100ms]
//	                [-no-coalesce]
//	                [-cpu-budget=true] [-cpu-quota 1] [-taskset=true] [-corral-bin PATH] [-etcd-bin etcd]
//	                [-workdir DIR] [-keep] [-out DIR] [-q]
//
// A smoke run that shows it works (not a measurement):
//
//	make build etcd
//	bin/corral-bench kv -duration 2s -warmup 1s -records 1000 -threads 4 -out /tmp/kv
//
// # What runs
//
// For each system in turn (corral once per -durability value, per
// -leader-policy value and per -groups count, then etcd), in a fresh
// directory under -workdir:
//
//   - corral: -members `corral server zoo.cfg` processes, one replica
//     group with store=kv, apiPort/apiAddress.N and server.N lines on
//     127.0.0.1 (the zoo.cfg `corral kv ensemble` writes, with
//     durability=-durability and tickTime=-tick-time), driven through
//     the Go client (client/kvclient), which sends every call to the
//     leader and sends concurrent reads together as one MultiGet
//     (-no-coalesce: each alone). -leader-policy P adds the line kv.leaderPolicy=P (the
//     compaction-aware leader change's policy; fixed never moves the
//     leader for a compaction); -server-opt key=value adds any other
//     line. A key the server does not know is logged and ignored by it.
//   - etcd: -members etcd processes (Debian's etcd-server, `make etcd`)
//     as one cluster on 127.0.0.1 with their data directories on the
//     same disk, driven through go.etcd.io/etcd/client/v3 (which only
//     cmd/corral-bench links; the server binary does not). etcd syncs
//     its WAL on every commit whatever -durability says, so compare it
//     with corral's sync.
//
// With -groups G,... corral runs once per count (per policy); a count
// above 1 launches `corral kv cluster -groups G -replicas -members -spawn`
// instead: a configuration manager in that process and -members storage
// node processes each hosting one member of every RG, the client routing
// each row to its RG's leader through the ring. Threads and records are
// scaled by G (etcd keeps the unscaled load), and with three or more
// counts the report fits the Universal Scalability Law (N = G) per
// workload. -leader-policy and -server-opt do not reach a cluster's
// members (it writes their configuration itself). Node processes inherit
// GOMAXPROCS=1 and are pinned (taskset -a) or moved into their cgroup
// after they start; server CPU includes the configuration manager's.
//
// With -routing routed,forwarded each sharded run (G > 1) runs once per
// entry: routed, the client sends each row request to its RG's leader
// through the ring; forwarded, it sends row requests to the endpoints
// and the node that receives one forwards it to the owning RG's leader
// (the paper's Table II baseline), named corral[forwarded,g=G].
//
// Each member gets its own CPU budget, to model the paper's separate
// machines (budget.go): GOMAXPROCS=1, and the first of a cgroup v2 child
// cgroup with cpu.max = -cpu-quota CPUs, or taskset to one CPU (members
// spread over the CPUs in turn); the report says which was applied per
// member. -cpu-budget=false lets members share the machine.
//
// On a machine with fewer CPUs than members, taskset puts two members on
// one CPU and leaves another alone on its own: where the group's leader
// runs then decides whether it has a whole core or half of one, and a
// leader change moves it between the two. -taskset=false leaves
// GOMAXPROCS=1 as the only cap (no member runs more than one core's
// worth of Go code; the kernel shares the CPUs among all of them).
//
// # Records and operations
//
// A record is 10 columns of 100 bytes (workload.go): for corral one row
// of table usertable with qualifiers field0..field9 in family f; for etcd
// one key usertable/<row> holding the ten values end to end (1000 bytes).
// Row names and key popularity are YCSB's ("user" and a hash, scrambled
// zipfian). -records records are loaded first, unmeasured. A read reads
// the whole record (corral: Get of the row; etcd: a linearizable Get),
// an update overwrites it whole (corral: one Put of ten cells), a
// read-modify-write (F) reads and then writes, timed as one operation.
// W is 100% updates, the paper's write load. D (95% read, 5% insert,
// YCSB's "latest" keys) and E (95% scan of 1..100 records, 5% insert)
// can be named too: an insert writes the next record of a sequence the
// threads share, reads never choose a record whose insert is unfinished,
// and a scan is corral's Scan from the row or etcd's range Get with a
// limit.
//
// Each workload runs -threads closed-loop threads, one operation in flight
// each, for -warmup and then -duration; an operation counts when it starts
// and completes inside the measured interval.
//
// # Report
//
// report.md: the conditions, each member's PID, address and CPU budget,
// and per workload a table of throughput, mean/p50/p99 latency, errors,
// server CPU µs per op (the members' utime+stime from /proc over the
// measured interval ÷ completed operations) and client CPU µs per op (the
// benchmark process's own, the same way: its client library's cost) with
// a column per system and corral/etcd ratios. results.jsonl: one object
// per system and workload, with per-operation latencies and the
// throughput-over-time series
// (series_ops_per_100ms). series.csv: system,workload,t_ms,ops per 100 ms;
// kv-throughput-WORKLOAD.png plots it, a line per system (bench/plot).
// Without -out the report and the JSON lines go to stdout.
//
// Summary tables follow, each only when the run has its data
// (report_tables.go): corral ÷ etcd per workload with issue 23's targets;
// the leader policies against the fixed leader per durability (the
// paper's Figs. 8, 9, 12 and Table I); the share of time a minority or a
// quorum of members compacts (Figs. 13-15); routed against forwarded
// sharded runs (Table II); and the USL fit.
//
// Every run counts completions in 1 ms buckets: the longest window
// without one is reported per system and workload. A one-RG corral run
// also reads its members' logs for the moments a member took the lead
// during the measured interval (the handovers; handover.go), each with
// the longest window without a completion within HandoverSlack of it, and,
// unless -compaction-sample is 0, serves each member's Prometheus
// endpoint (metricsProvider.* lines in its zoo.cfg) and reads every
// member's corral_kv_compactions_running and corral_kv_is_leader at that
// period (compaction.go).
//
// The kv-outage experiment (package bench/kvoutage) starts its sharded
// cluster and drives it through LaunchCluster, LoadRecords and DoOp.
package kv
