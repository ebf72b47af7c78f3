// Package kvoutage is `corral bench kv-outage`, the ACaZoo paper's
// Figs. 16-17: SIGKILL of one replica group's leader under a read-only
// Zipf load, successful operations per 100 ms over time, and the outage
// split into election, configuration-manager propagation and client
// reconnect (docs/design/kv-sharding.md, Benchmarks).
//
// outage.go runs the trials on a cluster bench/kv launches (kv.LaunchCluster);
// outage_window.go holds the pure arithmetic on completion times (the
// longest gap, the low-throughput window, the split); outage_report.go
// writes the report. A smoke run:
//
//	bin/corral-bench kv-outage -records 500 -threads 8 -warmup 1500ms -after 3s -kills 2 -settle 1s -tick-time 100
//
// Its test starts real processes and runs only with -kv.procs.
package kvoutage
