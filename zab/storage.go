package zab

// Storage is the driver's durable state as zab reads it: a snapshot, the
// log of entries after it, and the hard state. The driver owns and writes
// it (following Ready); zab only reads, and only from inside Node methods,
// so the driver must not change it concurrently with them.
//
// The log holds consecutive entries of one history in increasing zxid
// order, all after the snapshot's zxid. Entries handed out by the Storage
// must not be modified afterwards (zab keeps them in messages).
type Storage interface {
	// HardState returns the last persisted HardState.
	HardState() (HardState, error)
	// Snapshot returns the newest snapshot: the zxid of the last
	// transaction it reflects and, optionally, its bytes. zab puts the
	// value in the SNAP message as is; a driver may leave Data nil and
	// attach the bytes when it transmits the message.
	Snapshot() (Snapshot, error)
	// LastZxid returns the zxid of the last log entry, or the snapshot's
	// zxid when the log is empty (0 for an empty server).
	LastZxid() (Zxid, error)
	// Floor returns the largest zxid held that is <= z: a log entry, or the
	// snapshot's zxid. It returns ErrCompacted when z is below the
	// snapshot's zxid.
	Floor(z Zxid) (Zxid, error)
	// Entries returns the entries with after < zxid <= upTo, in order,
	// stopping once their payloads exceed maxBytes (at least one entry is
	// returned when any is in range). It returns ErrCompacted when after is
	// below the snapshot's zxid.
	Entries(after, upTo Zxid, maxBytes uint64) ([]Entry, error)
}

// Snapshot identifies a state machine snapshot. zab treats Data as opaque
// and never reads it.
type Snapshot struct {
	// Zxid is the last transaction the snapshot reflects.
	Zxid Zxid
	Data []byte
	// Learner, in a SNAP the leader sends, is the learner's last zxid as
	// its ACKEPOCH reported it: every entry of the leader's history up to
	// it is in the learner's log (sync.go). A driver may leave out of the
	// image what the learner holds already. It is not sent.
	Learner Zxid
}
