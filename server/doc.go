// Package server is a corral server: it accepts ZooKeeper clients, runs
// their requests through the pipeline (prep → log → apply → reply), owns
// sessions and watches, answers four-letter words, and keeps the data tree
// durable with the transaction log and snapshots.
//
// Threads (goroutines) and what they own:
//
//   - accept loops, one per client port (clientPort, secureClientPort):
//     new connections, per-IP limits, four-letter words; on a TLS or
//     unified port each connection's handshake (tls.go) runs on its own
//     goroutine before it is registered;
//   - per connection: a reader (decodes frames, runs reads inline, hands
//     writes to the log) and a writer (flushes the bounded output buffer);
//   - prep: not a goroutine — the submitting goroutine decides its write
//     and assigns its zxid under prepMu, against the tree plus the changes
//     still in flight;
//   - log: appends transactions to the WAL and fsyncs them in groups (a
//     write that finds the pipeline empty is instead logged, applied and
//     answered by its connection's reader: runToCompletion);
//   - apply: applies durable transactions to the tree under its write lock,
//     fires watches, completes replies in each connection's order;
//   - session expirer, container reaper, snapshotter, purger.
//
// Counters and summaries under ZooKeeper's ServerMetrics names
// (readlatency, fsynctime, election_time, commit_count, ...) are fed where
// the events happen into Options.Metrics (metrics.go); mntr prints them
// and the admin package exports them to Prometheus, with Gauges (mntr's
// other figures).
//
// See docs/design/architecture.md for why the pipeline is shaped this way.
package server
