// Package testutil holds what the test suites share: waiting for a
// condition instead of sleeping (Eventually) and free loopback ports
// (FreePort, FreeAddr; see internal/testport for why they come from below
// the ephemeral range). Starting servers and ensembles for tests is
// tests/harness; the raw protocol client for malformed frames is
// harness.Raw; the fake ZooKeeper server for tests that need no real
// one is internal/fakezk.
package testutil
