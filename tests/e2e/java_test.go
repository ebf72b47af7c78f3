package e2e

import (
	"flag"
	"testing"
)

var updateJava = flag.Bool("java.update", false,
	"rewrite tests/java/*.golden from this run (only with CORRAL_E2E_TARGET=zookeeper)")

// TestJavaClient drives the server with Apache ZooKeeper's own Java
// client (tests/java/ClientOps.java: every create mode, watches of every
// kind and their order, multi and multiRead, ACLs and digest auth,
// whoAmI, persistent and recursive watches and their removal, async
// callback order, a chrooted session, ephemerals at close) and compares
// its transcript, line by line, with the one ZooKeeper 3.9.3 gave
// (tests/java/ClientOps.golden, written by this test with -java.update
// against the reference).
func TestJavaClient(t *testing.T) {
	runJava(t, "ClientOps")
}

// TestCurator drives the server with Apache Curator 5.9.0 on the Java
// client (tests/java/CuratorOps.java): the framework's builders (parents,
// container parents and their reaping, TTL, orSetData, protected
// sequential names, transactions, persistent recursive watches) and its
// recipes (mutex, semaphore, leader latch, atomic long, shared count,
// queue, barrier, persistent ephemeral node, CuratorCache), compared with
// ZooKeeper 3.9.3's transcript (CuratorOps.golden).
func TestCurator(t *testing.T) {
	runJava(t, "CuratorOps")
}

// runJava runs tests/java/NAME.java against a fresh server and compares
// its transcript with NAME.golden.
func runJava(t *testing.T, name string) {
	t.Parallel()
	j := env.JavaClient(t)
	dir := j.Compile(t, env.Root, name, "Events", "Transcript")
	srv := env.Start(t)
	got := j.Transcript(t, dir, name, srv.Addr())
	env.CompareGolden(t, name, got, *updateJava)
}
