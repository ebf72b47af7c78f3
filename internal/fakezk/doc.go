// Package fakezk is the one fake ZooKeeper server of the test suites.
// One connection loop (loop.go: listener, four-letter words, a strict
// handshake, request framing, reply release by Mode, problem reporting)
// serves every fake; they differ only in how they answer:
//
//   - Server answers the load generator's requests from an in-memory map
//     under modes that reorder, hold, drop or fail replies, and can run
//     as a process in place of a server (ServeMain);
//   - Tree serves the durability experiment's creates (sequential too),
//     reads, deletes and queue;
//   - YCSB stores versioned records as the ycsb experiment lays them out;
//   - FourLetter answers only four-letter words (a member's srvr).
//
// They check every request strictly and report what they found wrong
// through the test. A test that needs to script each frame itself (the
// client's connection machinery) keeps its own scripted fake.
package fakezk
