// Package replica is the driver between zab and a replicated state
// machine: it takes Ready from a zab.Node, appends entries to the log
// store and group-fsyncs them, reports Persisted, sends messages, hands
// committed entries to the state machine, installs SNAPs and TRUNCs, cuts
// the log below what the state machine has made durable, schedules
// snapshots (busy, idle, spacing) and diskless checkpoints, and tracks the
// recovering flag. Its dependencies come in through an Env (log store,
// hard state, snapshot store, send, clock and timers), so the same code
// runs in a server process and under the deterministic simulator (sim/).
//
// The state machine is the StateMachine interface: the znode tree is its
// first implementation; the key-value store (kv/) and the replicated logs
// (rlog/) are the next.
package replica
