package replica

import (
	"context"
	"io"

	"github.com/corral-db/corral/zab"
)

// StateMachine is the replicated state a driver feeds with committed
// entries. Every replica applies the same entries in the same order, so
// Apply must be deterministic: whatever an entry's content, every replica
// reaches the same state (a request that fails, say a write to a missing
// table, is a result recorded the same way everywhere, not an error).
//
// Concurrency: Apply and InstallSnapshot are called from one goroutine
// (the one that calls Driver.Process: Run's node loop). Applied and
// Durable may be called from any goroutine. Snapshot and WriteSnapshot may run
// concurrently with Apply; each implementation says how it stays
// consistent (the znode tree writes a fuzzy snapshot that replaying the
// log from its zxid repairs; pebble flushes and checkpoints are
// consistent by themselves).
type StateMachine interface {
	// Apply applies committed entries in zxid order. The driver never
	// hands an entry at or below Applied(): a restarted replica replays
	// its log from there, so apply is idempotent across restarts. A
	// returned error means the replica cannot go on (a failed disk); the
	// driver stops the server.
	Apply(ents []zab.Entry) error
	// Applied returns the zxid of the last entry applied (0 when none).
	Applied() zab.Zxid
	// Durable returns the newest zxid whose effects survive a crash of
	// this process without the replication log: the newest complete
	// snapshot for the znode tree, what pebble has flushed for the
	// key-value store. The driver never cuts its log above it.
	Durable() zab.Zxid
	// Snapshot makes the applied state durable without the log (a
	// snapshot file, a pebble flush) and returns the zxid it covers, which
	// Durable reports from then on.
	Snapshot(ctx context.Context) (zab.Zxid, error)
	// WriteSnapshot writes a self-contained image of the state, for a
	// learner that the log cannot bring up to date (SNAP), and returns the
	// zxid it reflects: at least the log's cut (a state the driver asked
	// Snapshot for), possibly later (the driver calls it on the leader's
	// node loop, so it should be quick or read a file Snapshot wrote).
	WriteSnapshot(ctx context.Context, w io.Writer) (zab.Zxid, error)
	// InstallSnapshot replaces the whole state with an image written by
	// WriteSnapshot (of any replica), durably (Durable reports at least
	// the returned zxid), and returns the zxid it reflects; the driver
	// then skips the committed entries at or below it. A fuzzy image
	// returns the zxid it started at, from which replay repairs it.
	InstallSnapshot(ctx context.Context, r io.Reader) (zab.Zxid, error)
}
