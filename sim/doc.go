// Package sim is a deterministic simulator for the replication driver
// as it ships: each of N servers is a replica.Driver (the same code the
// server runs: Ready loop, group commit, snapshots and log cut, SNAP and
// TRUNC install, diskless checkpoints, the recovering flag) over a zab
// node, with a simulated network (FIFO links with delay, loss by breaking
// a link as a TCP connection breaks, partitions, heals), simulated disks
// (fsync latency; a crash loses what was not fsynced except a random
// prefix of it, a torn tail; in diskless mode it loses the log and keeps
// the last snapshot or complete checkpoint) and a simulated clock that
// drives ticks and the snapshot scheduler. Modes sync, async and
// diskless. Faults: crashes, partitions, link breaks, pauses, slow links,
// faults aimed at the leader, and leadership transfers to random members
// (zab TransferLeadership) while the others go on. In half of the seeds
// the leader is also asked to add or remove voters and observers
// (reconfig.go). A register workload (workload.go) of clients reading
// (through the log, or after a leadership confirmation), setting and
// CASing versioned registers at the server they believe leads runs beside
// the background proposals. Invariants are checked after every step:
//
//   - committed prefixes agree: every server applies the same entries in
//     the same order, and none is ever lost or reordered;
//   - a zxid names one transaction everywhere;
//   - at most one leader is established per epoch;
//   - equal state digests at equal zxid (the state machine is a hash
//     chain, so a skipped, repeated or reordered entry shows);
//   - in sync and async modes, an entry is first applied only once a
//     quorum of voters holds it durably (Persisted before ACK);
//   - a voter restarted from a partial state (diskless) never offers its
//     vote before a leader has synchronized it (the recovering rule);
//   - diskless: a leader never sends a SNAP to a member whose state is at
//     or after its previous busy snapshot (the log cut);
//   - epochs persisted only grow, acceptedEpoch >= currentEpoch;
//   - at the end, with faults healed, the ensemble elects a leader and
//     every server applies every committed entry (liveness);
//   - at the end, the workload's history is linearizable (porcupine,
//     linearizable.go); a write whose outcome the client cannot know is
//     open-ended. The fault schedule stays within every mode's promise,
//     so no acknowledged write may be lost in any seed of any mode
//     (Cluster.checkHistory says why).
//
// With -sm=kv every server runs the key-value store instead of the hash
// chain (kv.go): kv.Store on pebble's crashable in-memory file system,
// a workload of puts, deletes and conditional writes, and checks against
// a model of the committed history (results, contents at equal zxids,
// reads, replay after restart); the register workload and its
// linearizability check run with the hash chain only (NewCluster says
// why), the faults (transfers and reconfigurations too) with both.
//
// In three seeds of four every SNAP is streamed as deployed members
// stream it (stream.go, replica/snapstream): its image in pieces paced
// over time ahead of a SNAP that carries a header, spooled by the
// learner, which refuses a stream with a gap.
//
// Everything random comes from one seed, so a seed reproduces a run; a
// failure reports its seed, the options, the command that replays it and
// the last events. TestSeeds runs seeds in parallel (-workers, default
// GOMAXPROCS) and reports the lowest failing one.
//
//	go test ./sim/ -seeds=300          # what CI runs (the default)
//	go test ./sim/ -seeds=3000 -mode=diskless   # one mode: sync, async, diskless
//	go test ./sim/ -run 'TestSeeds$' -seeds=100000 -mode=sync -timeout=6h
//	go test ./sim/ -run 'TestSeeds$' -seed=1234 -mode=sync -v   # replay one seed
//	go test ./sim/ -run 'TestSeeds$' -seeds=1000 -sm=kv -mode=diskless   # the key-value store
package sim
