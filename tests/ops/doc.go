// Package ops holds the end-to-end tests of what operators rely on: the
// security keys corral refuses, the Prometheus endpoint under load, and
// the AdminServer compared with Apache ZooKeeper 3.9.3's. They start real
// processes through tests/harness.
package ops
