// Package sim is a deterministic simulator for the zab core: N servers
// driven over a simulated network (FIFO links with delay, loss by breaking
// a link as a TCP connection breaks, partitions, heals) and simulated
// disks (a crash loses what was not fsynced; in diskless mode it loses the
// log and keeps the last snapshot), with invariant checks after every
// step:
//
//   - committed prefixes agree: every server applies the same entries in
//     the same order, and none is ever lost or reordered;
//   - a zxid names one transaction everywhere;
//   - at most one leader is established per epoch;
//   - equal state digests at equal zxid (the state machine is a hash
//     chain, so a skipped, repeated or reordered entry shows);
//   - in sync mode, an entry is first applied only once a quorum of voters
//     holds it durably;
//   - epochs persisted only grow, acceptedEpoch >= currentEpoch;
//   - at the end, with faults healed, the ensemble elects a leader and
//     every server applies every committed entry (liveness).
//
// Everything random comes from one seed, so a seed reproduces a run; a
// failure reports its seed, the options and the last events.
//
//	go test ./sim/ -seeds=300          # what CI runs (the default)
//	go test ./sim/ -seeds=10000 -timeout=2h
//	go test ./sim/ -seed=1234 -v       # replay one seed
package sim
