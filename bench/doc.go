// Package bench measures corral and Apache ZooKeeper side by side: a load
// generator that speaks the ZooKeeper client protocol, launchers for both
// servers from one generated zoo.cfg, and the experiments (compare, run,
// failover, durability, paper, readratio, failures, ycsb, scale,
// factorial), each a Config, its default and a function that runs it and
// returns a report with its Markdown and JSON lines.
//
// Below it: package stats (histograms, USL fit, factorial analysis),
// package load (the load generator) and package launch (starting corral
// and ZooKeeper servers and ensembles). Above it: package plot (the
// figures, the only importer of gonum) and package command (the
// corral-bench command line). Imports point one way:
//
//	stats <- load <- launch <- bench <- plot <- command
//
// internal/fakezk holds the fake servers the tests run against.
//
// # Usage
//
// Compare corral with ZooKeeper 3.9.3 on this machine, in one invocation:
//
//	corral bench compare [--duration 10s] [--warmup 3s] [--conns 32] [--inflight 32]
//	                     [--value 1024] [--seq-duration 5s] [--seq-warmup 1s]
//	                     [--targets corral,zookeeper] [--servers 1] [--out DIR]
//	                     [--tick-time 2000] [--init-limit 10] [--sync-limit 5]
//	                     [--corral-bin PATH] [--zk-lib DIR] [--java java] [--java-heap 2g]
//	                     [--workdir DIR] [--keep] [--repeat 1] [--rate 0]
//	                     [--durability sync|async|diskless] [--client load|gozk]
//	                     [--floor=true] [--floor-rounds 200] [-q]
//
// For each target in turn compare writes zoo.cfg into a fresh temporary
// directory, starts the server, waits until it accepts sessions, runs four
// phases, and stops it by PID (SIGTERM, then SIGKILL after 15s):
//
//   - create: --conns sessions, each with --inflight requests outstanding,
//     create persistent nodes with --value bytes at unique paths;
//   - set: setData over the nodes create made;
//   - get: getData over the same nodes;
//   - seqcreate: one session, one request in flight: the create latency a
//     sequential client sees.
//
// Each phase runs an unmeasured warm-up and then a measured interval; the
// defaults bound a two-target compare to about two minutes. corral is this
// binary (`corral server zoo.cfg`) unless --corral-bin says otherwise;
// ZooKeeper runs as `java -Xmx2g -cp "<lib>/*" ...QuorumPeerMain zoo.cfg`
// with lib from scripts/zookeeper/fetch.sh and logback at INFO. Both read the
// same zoo.cfg (see ServerConfig.ZooCfg): standalone on 127.0.0.1,
// forceSync=yes, snapCount default, maxClientCnxns=0,
// globalOutstandingLimit=100000 (DefaultGlobalOutstandingLimit, far above
// conns × inflight so ZooKeeper's throttle stays out of the measurement),
// admin server off, all four-letter words, dataDir in the temporary directory
// (removed afterwards unless --keep).
//
// With --servers N (N > 1) each target runs as an N-server ensemble on
// 127.0.0.1 instead: free client, quorum and election ports, one directory
// per member with its zoo.cfg (the same but for dataDir) and dataDir/myid,
// server.N=127.0.0.1:Q:E;127.0.0.1:C lines and no clientPort line, the same
// tickTime/initLimit/syncLimit for both targets. compare waits until every
// member answers srvr with Mode leader or follower, exactly one leads and
// each accepts a session; it then spreads the connections round-robin over
// the members, followers first and the leader last (so the split does not
// depend on which member leads, and seqcreate's one connection is on a
// follower, where most clients of an ensemble are). The report names the
// leader (and warns if another led at the end), gives every member's PID,
// and measures each member's CPU: "server CPU s" is their sum, and the
// per-process split follows the table. Members are stopped by PID.
//
// # The floor
//
// Before the targets, compare measures the machine's floor for one
// replicated write in its work directory, where the data directories go
// (package floor; `corral bench floor` runs it alone): N files, one per
// member, preallocated with zeros as a log segment is, each writing its
// next 4 KiB record and fdatasyncing it, all N at once, a round lasting
// until a majority returned; and a loopback TCP ping-pong of 64 bytes. The
// floor for N members is that sync plus RoundTrips(N) loopback round trips
// (1 standalone; 3 for an ensemble, whose sequential client is on a
// follower: client to follower, follower to leader and back, leader to
// follower and back), for N = 1, 3 and --servers. The report gives the
// floor's table and each seqcreate p50 as a multiple of the floor for
// --servers members ("seqcreate p50 = X ms = Y× floor"); the JSON lines
// hold one "floor" object per N and floor_p50_us and p50_floor_multiple
// on each seqcreate line. --floor=false skips it.
//
// # Clients
//
// --client load (the default) drives the phases through the load
// generator below. --client gozk drives them through
// github.com/go-zookeeper/zk, an ordinary third-party client: --conns
// sessions (spread over the members as above) and, since its calls are
// synchronous, --inflight goroutines per session each with one request
// outstanding; the same measured window, CPU meters and fsync counts;
// errors counted and the first named (the unmeasured preload of set and
// get, when no create precedes them, stays the load generator's). Closed
// loop only. Beside every throughput figure the table gives the server's
// CPU µs per op (utime+stime from /proc/PID/stat summed over the members,
// ÷ the phase's completed requests) and the client process's ("loadgen
// CPU µs/op", from getrusage), so a reader sees the client's cost beside
// the server's; results.jsonl carries both (server_cpu_us_per_op,
// loadgen_cpu_us_per_op) and the client's name.
//
// # Failover
//
// Measure how long a client's writes stop when an ensemble loses its
// leader:
//
//	corral bench failover [--target corral|zookeeper] [--servers 3] [--trials 20]
//	                      [--session-timeout 10s] [--value 128] [--pre 1s]
//	                      [--recovery-timeout 60s] [--whole-timeout 2m]
//	                      [--tick-time 2000] [--init-limit 10] [--sync-limit 5]
//	                      [--out DIR] [server flags as for compare] [-q]
//
// failover starts an ensemble as compare does and creates /bench-failover.
// Each trial waits until the ensemble is whole, opens a writer session on a
// follower (the followers in turn) that overwrites /bench-failover in a
// Closed loop, lets it write for at least --pre, SIGKILLs the leader by
// PID, and waits until a write issued after the kill succeeds. The writer
// behaves as a client walking its connect string: a request unanswered for
// 2/3 of the session timeout (the Java client's read timeout) or a closed
// connection sends it to the next server in turn, resuming its session
// (id, password, lastZxidSeen) and starting a new one only if the ensemble
// says it expired; after trying every server in vain it pauses 25ms (the
// Java client sleeps up to a second or two, which would blur what is
// Measured here). The killed server is then restarted from its zoo.cfg and
// data, and the trial ends when the ensemble is whole again.
//
// A trial's gap is measured on the client's clock (harness and writer share
// the process): from the completion of the last successful write that
// completed before the kill to the completion of the first successful
// write issued after it (a write in flight at the kill may still succeed,
// but says nothing about the ensemble after it). The report gives
// nearest-rank p50/p90 and the max and min of the gaps, every trial's gap,
// kill-to-write time, failed writes and reconnects, the new leader and how
// long the killed server took to rejoin, and the timing (tickTime,
// initLimit, syncLimit, session timeout asked and granted); the JSON lines
// Hold one object per trial and a summary with every gap. Every wait is
// bounded: a trial that fails ends the run, with the trials so far
// reported.
//
// Measure one workload against servers that are already running:
//
//	corral bench run --connect HOST:PORT[,HOST:PORT...] [--workload create|set|get|seqcreate]
//	                 [--keys 10000] [--pid PID] [--rate 0] [--client load|gozk]
//	                 [same load flags as compare]
//
// set and get first create --keys nodes (unmeasured). --pid names a local
// server process whose CPU time to report.
//
// # The papers' experiments
//
// Each is a subcommand with defaults sized for a 2-core machine; each
// launches corral, ZooKeeper or both (--launch) or measures running servers
// (--connect), and writes report.md, results.jsonl and PNGs under --out.
// Their flags are in each command function's comment and -h.
//
//   - readratio: the ZooKeeper paper's Fig. 5 and Table 1 (saturated
//     throughput vs read ratio per ensemble size) and, with --leader-only,
//     Fig. 6 (readratio*.go, mixed*.go).
//   - failures: Fig. 8, throughput over time while a schedule kills and
//     restarts followers and leaders; clients reconnect and count what they
//     lost (failures*.go).
//   - ycsb: YCSB workloads A-F and the study's 95/5 over 1 KB records stored
//     as znodes (ycsb*.go).
//   - scale: servers and clients scaled together with a Universal
//     Scalability Law fit (scale*.go, usl.go); factorial: a 2^k r design
//     with each factor's share of the variation (factorial*.go).
//   - kv: corral's key-value store against etcd, YCSB A, B, C, F and
//     100% writes over the ACaZoo paper's records (package bench/kv).
//   - kv-outage: SIGKILL of a replica group's leader under load, the
//     outage split (package bench/kvoutage).
//   - rlog: the ZKRL thesis's Figs. 5.1-5.4 and §5.1.2 for corral's
//     replicated logs through the gRPC API, with the disk and loopback
//     anchors and ZooKeeper in the same run (package bench/rlog).
//   - durability: the diskless thesis's Figs. 5.1-5.6 for corral's three
//     durability modes and ZooKeeper with and without forceSync
//     (durability*.go); paper: the ZooKeeper paper's Tables 2 and 3
//     (paper*.go).
//
// # Output
//
// stdout is a Markdown document: the conditions (machine, load, zoo.cfg,
// server command lines, JVM heap, srvr version) and one table with a row
// per phase and metric (ops/s, p50/p99/p99.9/max latency, error replies,
// server CPU seconds and CPU µs per op, load generator CPU seconds, and the
// busy CPU charged to neither: other processes or kernel threads) and a
// column per target, plus a
// corral/zookeeper ratio column when both ran. Machine-readable results
// follow as JSON lines (one object per target and phase) in a fenced block,
// or, with --out DIR, go to DIR/results.jsonl beside DIR/report.md and each
// server's zoo.cfg and log.
//
// With --repeat N the whole target sequence runs N times, interleaved
// (corral, zookeeper, corral, zookeeper, ...; each start fresh, files
// named corral.r2.log and so on), so drift of the machine hits every
// target alike. The table then gives per phase and metric each target's
// median, min–max and relative standard deviation, and the
// corral/zookeeper ratio of the medians beside the least and greatest
// ratio of the paired runs; the JSON lines hold one object per run
// ("run": i) and then one summary object per phase and metric
// ("summary": true) (compare_repeat.go).
//
// With --out, each phase also gets a PNG of its latency distribution
// (latency-PHASE.png, linked from report.md): a percentile plot in
// HdrHistogram's style, latency on a log x axis and the percentile on a
// "nines" y axis up to 99.99%, one curve per target with its runs merged
// (latcdf.go).
//
// With --rate R the create, set and get phases run open loop (run's
// Measured phase too): R requests per second in total on a fixed schedule,
// connection i of n sending its k-th request at t0 + (i + k·n)/R whatever
// the replies (openloop.go; the schedule is durability_pacer.go's). At
// most --inflight requests are outstanding per connection, so memory stays
// bounded; a request due while its connection's window is full waits and
// leaves when a slot frees, and those still waiting at the end of the
// Measured interval are reported as unsent. Beside the usual latencies
// (from the actual send) the table gives p50/p99/p99.9/max "from
// intended": from the time the schedule meant the request to leave, so a
// stall is charged for every request it delayed (no coordinated
// omission); this includes the generator's own timer lag, typically tens
// of microseconds. seqcreate stays closed loop.
//
// On a terminal (stderr), each phase draws a one-line progress bar
// (target, run, phase, elapsed of warm-up plus measured time, replies per
// second over the last second), redrawn in place, and leaves a line with
// its result; log records are written above it. Elsewhere the log's phase
// Start and end lines are the progress. -q silences both (progress.go).
//
// The command is the binary cmd/corral-bench; `corral bench ARGS` runs it
// with the calling corral binary as the server under test:
//
//	go run ./cmd/corral-bench compare --targets zookeeper
//
// # How the load generator works
//
// Each connection has one writer and one reader goroutine. The writer takes
// as many free window slots as there are (at most --inflight outstanding),
// encodes that many requests into one buffer with the wire primitives and
// Writes them with one syscall; the reader reads replies through a 64 KiB
// buffer, matches each to the oldest outstanding request through a FIFO
// (ZooKeeper answers a connection's requests in order, so a mismatch is an
// error, ErrXidMismatch), frees its slot and records its latency into the
// connection's own HdrHistogram (microseconds, three significant digits).
// The histograms are merged at the end of the phase. A connection idle for
// a third of its session timeout pings; pings are matched out of band
// (xid -2), as the Java client does. At the end each connection sends
// CloseSession behind its last requests, so the reply to it means all
// replies are in, and the session does not linger to expire during the
// next phase.
//
// A connection with one request in flight in closed loop (seqcreate, and
// any --inflight 1 phase) is one goroutine instead, as a synchronous client
// is: it writes a request, reads its reply, writes the next
// (sequential.go). Through the writer and reader pair each such request
// paid two goroutine wake-ups that belong to neither server.
//
// Latency runs from just before the write that carried the request to the
// read of its reply; a phase counts the successful replies that arrive in
// its measured interval, and throughput is that count over the interval.
// Each server's transaction-log fsyncs in the measured interval come from
// mntr's zk_cnt_fsynctime (ZooKeeper 3.9 and corral both report it) and
// are reported per million operations ("fsyncs per 1M ops") and by server.
// Server CPU comes from /proc/<pid>/stat, the generator's from getrusage,
// and the whole machine's from /proc/stat, each read at both ends of the
// Measured interval. Server and generator share the machine's CPUs; the
// report states the generator's share so one can see it is not the
// bottleneck, and warns when much CPU went elsewhere (a busy machine makes
// every number suspect). The generator also logs how many requests each
// write carried (requests_per_write).
//
// Benchmarks report, tests assert: nothing here judges the numbers.
package bench
