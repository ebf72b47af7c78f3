package e2e

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateJava = flag.Bool("java.update", false,
	"rewrite tests/java/ClientOps.golden from this run (only with CORRAL_E2E_TARGET=zookeeper)")

// TestJavaClient drives the server with Apache ZooKeeper's own Java
// client (tests/java/ClientOps.java: every create mode, watches of every
// kind and their order, multi and multiRead, ACLs and digest auth,
// whoAmI, persistent and recursive watches and their removal, async
// callback order, a chrooted session, ephemerals at close) and compares
// its transcript, line by line, with the one ZooKeeper 3.9.3 gave
// (tests/java/ClientOps.golden, written by this test with -java.update
// against the reference).
func TestJavaClient(t *testing.T) {
	j := env.JavaClient(t)
	dir := j.Compile(t, env.Root, "ClientOps", "Events")
	srv := env.Start(t)
	transcript := filepath.Join(t.TempDir(), "transcript.txt")
	out, err := j.Run(dir, "ClientOps", srv.Addr(), transcript)
	if len(out) > 0 {
		t.Logf("java client output:\n%s", out)
	}
	got, rerr := os.ReadFile(transcript)
	if err != nil {
		t.Fatalf("ClientOps: %v; transcript so far:\n%s", err, got)
	}
	if rerr != nil {
		t.Fatal(rerr)
	}
	env.CompareGolden(t, "ClientOps", got, *updateJava)
}
