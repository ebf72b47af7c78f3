package replica

import (
	"time"

	"github.com/corral-db/corral/zab"
)

// Env is everything a Driver does I/O through, in the way pebble's commit
// pipeline takes a commitEnv: the server passes files and sockets, the
// simulator (sim/) passes a simulated disk, network and clock, and unit
// tests pass fakes. Log is nil in diskless mode; Checkpoints is used in
// diskless mode only.
type Env struct {
	// Log is the replication log on disk (sync and async modes).
	Log LogStore
	// HardState persists zab's epochs; always durable, in every mode.
	HardState HardStateStore
	// Checkpoints writes diskless mode's complete checkpoints.
	Checkpoints Checkpointer
	// Send hands messages to the network. It must not block and must not
	// keep msgs (it may keep the messages' Entries and Snapshot bytes):
	// transport.Transport.Send has this contract.
	Send func(msgs []zab.Message)
	// Clock reads time for snapshot scheduling (spacing, idle lulls).
	Clock Clock
	// SnapshotImage, if set, returns the bytes of the snapshot at z that a
	// SNAP names (the log's cut), for owners that keep snapshot files (the
	// znode tree); otherwise the driver asks StateMachine.WriteSnapshot.
	// The SNAP message keeps zab.Snapshot.Learner, for an Env.Send that
	// sends less to a learner that holds more (the server's streamed
	// images).
	SnapshotImage func(z zab.Zxid) ([]byte, error)
}

// LogStore is the on-disk replication log. The driver calls it from one
// goroutine at a time (the log goroutine in Run, or whoever calls
// SyncLog), never concurrently.
type LogStore interface {
	// Append buffers entries after the last one; they need not be durable
	// yet.
	Append(ents []zab.Entry) error
	// Sync makes every appended entry as durable as the mode promises
	// (fsync in sync mode; written to the OS in async mode, with a
	// periodic fsync the store schedules itself). The driver calls it once
	// per group of appends (group commit) and reports the entries
	// Persisted after it returns.
	Sync() error
	// TruncateAfter drops every entry after z, durably (TRUNC, SNAP).
	TruncateAfter(z zab.Zxid) error
}

// Slimmer is implemented by a LogStore that can rebuild an entry it holds
// durably from a smaller form of it. The driver keeps every entry since the
// log's cut in memory for learners (DIFF); with a Slimmer it keeps the small
// form of each entry that is both durable in the store and applied, and
// rebuilds the entry when zab reads it. The logs' data log (server,
// rlog.root) keeps a reference there in place of a 64 KiB payload, so the
// in-memory log does not hold every payload until the cut (issue 24, §4).
type Slimmer interface {
	// Slim returns the form of e to keep in memory; ok false keeps e whole.
	// The driver calls it only for entries the store has made durable (Sync
	// returned after their Append) and not truncated since.
	Slim(e zab.Entry) (data []byte, ok bool)
	// Expand returns e's data as proposed from what Slim returned; an
	// entry Slim left whole comes back as it is. An error means the store
	// lost what it made durable (a damaged disk).
	Expand(e zab.Entry) ([]byte, error)
}

// Weigher is implemented by a LogStore whose record of an entry can be
// much smaller than the entry: the logs' data log (server, rlog.root)
// takes an append's payload out of the record it writes. The snapshot
// byte trigger (Schedule.SnapBytes) then counts Weight(e), the bytes of
// e's record, in place of len(e.Data).
type Weigher interface {
	Weight(e zab.Entry) int64
}

// HardStateStore persists zab's epochs.
type HardStateStore interface {
	// SaveHardState writes hs durably before it returns.
	SaveHardState(hs zab.HardState) error
}

// Checkpointer writes diskless mode's complete checkpoint: a durable
// image of the state machine plus every log entry after the zxid it
// reflects, accepted but uncommitted ones included, so a restart from it
// holds everything this server acknowledged (docs/design/diskless.md).
type Checkpointer interface {
	// Checkpoint writes the state machine's state and entries(z), where z
	// is the zxid the written state reflects; entries returns every log
	// entry after z.
	Checkpoint(entries func(after zab.Zxid) ([]zab.Entry, error)) error
	// Invalidate durably marks the last checkpoint as no longer complete:
	// the member is about to acknowledge entries it does not hold. A
	// restart from it is then recovering.
	Invalidate() error
}

// Clock reads the time. Timers are the caller's business: Run ticks with
// a time.Ticker, the simulator by its own clock.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }
