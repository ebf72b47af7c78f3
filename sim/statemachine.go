package sim

import (
	"io"

	"github.com/corral-db/corral/zab"
)

// Machines makes the state machine each server of a run applies entries
// to, and the run's proposals (Options.Machines). Nil runs the hash chain
// of machine, whose digest is the state itself.
type Machines interface {
	// Name names the variant (the -sm flag that replays a run).
	Name() string
	// Open (re)starts server id's state machine from what its storage
	// kept (nothing, the first time) and returns the state it resumes
	// from: its applied zxid and the hash-chain digest of the history up
	// to it.
	Open(id uint64) (Machine, machine, error)
	// Payload returns the content of the run's nth proposal.
	Payload(n int) []byte
}

// Machine is one incarnation of a server's state machine as the
// simulator drives it. The states it returns carry the hash-chain digest
// of the applied history, which the checker compares across servers; the
// machine checks its own contents besides.
type Machine interface {
	// Apply applies committed entries and returns the state after each.
	Apply(ents []zab.Entry) ([]machine, error)
	// Persist makes the applied state durable (a snapshot, a flush) and
	// returns it.
	Persist() (machine, error)
	WriteSnapshot(w io.Writer) (zab.Zxid, error)
	// InstallSnapshot replaces the state, durably.
	InstallSnapshot(r io.Reader) (machine, error)
	// Crash loses what the machine had not made durable; the incarnation
	// is over.
	Crash()
	// Close ends the incarnation at the end of a run.
	Close()
	// Check reads the state and compares it with what the run committed
	// (one random part of it, or all).
	Check(all bool) error
}
