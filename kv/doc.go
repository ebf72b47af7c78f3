// Package kv is corral's key-value state machine (ACaZoo): tables of
// column families on one pebble database per replica, fed by committed zab
// entries through the replica.StateMachine interface.
//
// The model is BigTable's: a cell is (row, family, qualifier, version).
// Tables and their families are created and dropped by replicated admin
// mutations; a family keeps at most MaxVersions versions of each cell. A
// cell's version is the zxid of the entry that wrote it, so every replica
// applies identical bytes without reading a clock, and versions grow with
// the replica group's total order.
//
// The zab log is the only write-ahead log: pebble runs without its own WAL
// and every applied batch records the applied zxid in the same pebble
// batch, so what pebble holds after a crash is a prefix of the applied
// entries labelled with the zxid it ends at. Durable reports what pebble
// has flushed, and the driver cuts its log no lower.
//
// Files: keys.go (the pebble key encoding), mutation.go (the entries' wire
// form), schema.go (table descriptors), store.go (opening, closing,
// durability), apply.go (the state machine), read.go (get, scan,
// multi-get), snapshot.go (checkpoint streams), group.go (what the service
// writes through), service.go (the gRPC service), temperature.go (how
// near a member is to compacting), compactgate.go (the compaction
// scheduler a leader holds), leaderpolicy.go (the compaction-aware leader
// change's decision), movefence.go, movemutation.go, moveapply.go and
// moveexport.go (the fence, ingest, seal and drop steps of a range move
// between RGs, docs/design/kv-sharding.md). See docs/design/kv.md.
package kv
