// Package zabtest runs scripted interactions with an ensemble of zab
// nodes, in the style of etcd-io/raft's rafttest: an InteractionEnv holds
// the nodes, their in-memory storage and the messages in flight, and a
// small command language (add-nodes, tick, process-ready, deliver-msgs,
// stabilize, propose, persist, crash, restart, report-unreachable,
// isolate, heal, compact,
// confirm, transfer-leadership, status, log, log-level) drives it from
// github.com/cockroachdb/datadriven scripts. Every step prints what the
// nodes asked for and received with zab's Describe functions, so the
// scripts under zab/testdata read as protocol traces, and a change of
// protocol shows as a diff of them (go test ./zab -run Interaction
// -rewrite regenerates the expected output).
//
// Nothing here is random beyond each node's Config.Rand, seeded from its
// id, so a script always produces the same trace.
package zabtest
