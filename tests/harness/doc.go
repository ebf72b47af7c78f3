// Package harness runs a real ZooKeeper-compatible server process for the
// end-to-end tests: either corral (built from ./cmd/corral) or Apache
// ZooKeeper 3.9.3 (the reference), chosen by CORRAL_E2E_TARGET. Both are
// started from the same generated zoo.cfg on a free loopback port, so every
// test encodes behaviour that ZooKeeper itself shows and can later be pointed
// at corral unchanged. Processes are started, stopped, paused and probed
// through internal/proc, as bench/launch does. Command starts any other
// process a test needs (a corral subcommand that says on its output when
// it serves) the same way, and waits for the lines it prints.
//
// It also holds a raw-socket mini client (frames + jute) for the operations
// the third-party Go client lacks and for byte-level checks (reply ordering,
// oversized frames, refused handshakes), and a four-letter-word helper.
//
// Records are encoded by hand with wire.Encoder/Decoder primitives so that
// the tests do not depend on the server-side record types in wire/.
package harness
