// Package rlog is the replicated logs' state machine (ZKRL): named,
// append-only byte logs whose metadata is replicated through zab and whose
// payloads live in each member's data log (rlog/datalog).
//
// A log has a name, an id (the zxid of its create), a start (trim moves
// it up, never down), an end (the offset the next append gets), a sealed
// flag (seal fixes the final length) and, on each member, a committed end:
// the end of the applied appends whose bytes this member's data log has
// synced. Reads return committed bytes only.
//
// Mutation is what a zab entry carries: create, append, trim, seal,
// delete. An append's replicated part is logical (log id, offset, length,
// CRC32C); its payload travels in the proposal and is stored once, in the
// data log; a member's WAL record names where (the store hook Persist,
// and AttachPayload to send it to a learner). Positions in the data log
// are each member's own.
//
// State applies mutations deterministically; Prepare is the leader's
// step that assigns offsets and answers wrong offsets, sealed logs and
// retried appends before anything is proposed. The index of a log is
// sparse (index.go): memory grows with the bytes of a log, about 24 bytes
// per MiB, not with its appends. Local runs a State as one unreplicated
// member with a WAL and the thesis's decoupled group commit, for the
// service until the state machine runs on the replication driver; see
// docs/design/rlog.md.
//
// Locking: State.mu guards all of State's maps and logs; the data log has
// its own locks and is called under State.mu only to append or release
// (its flusher needs nothing of State). Local.mu guards the proposal queue
// and orders Prepare, zxid assignment and Persist.
package rlog
