package ensemble

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

var updateJava = flag.Bool("java.update", false,
	"rewrite tests/java/MoveOps.golden from this run (only with CORRAL_E2E_TARGET=zookeeper)")

// javaWait bounds each exchange with the Java client (JVM start included).
const javaWait = 3 * time.Minute

// TestJavaClientMovesWithWatches: Apache ZooKeeper's Java client, on one
// follower, holds data, child, exists, persistent and persistent-recursive
// watches; that follower is frozen while another client changes every
// watched node through the leader, then killed, so the client moves to the
// other follower at once and re-registers its watches there with the last
// zxid it saw. Its transcript (tests/java/MoveOps.java: the session
// survives, the events it missed, its watches working on the new member)
// must equal ZooKeeper 3.9.3's.
func TestJavaClientMovesWithWatches(t *testing.T) {
	t.Parallel()
	j := env.JavaClient(t)
	dir := j.Compile(t, env.Root, "MoveOps", "Events", "Transcript")
	en := start(t, 3)
	leader := en.WaitAll()
	fol := en.Followers(leader)
	transcript := filepath.Join(t.TempDir(), "transcript.txt")
	cmd := j.Command(dir, "MoveOps", en.Server(fol[0]).Addr()+","+en.Server(fol[1]).Addr(), transcript)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
		if stderr.Len() > 0 {
			t.Logf("java client stderr:\n%s", stderr.String())
		}
	}()
	fail := func(format string, args ...any) {
		t.Helper()
		b, _ := os.ReadFile(transcript)
		t.Fatalf("%s; transcript so far:\n%s", fmt.Sprintf(format, args...), b)
	}

	var on int // the follower the client chose
	select {
	case l, ok := <-lines:
		port, err := strconv.Atoi(strings.TrimPrefix(l, "SERVER "))
		if !ok || err != nil {
			fail("expected SERVER <port> from the client, got %q", l)
		}
		on = -1
		for _, i := range fol {
			if en.Server(i).Port == port {
				on = i
			}
		}
		if on < 0 {
			fail("the client is on port %d, not on a follower %v", port, fol)
		}
	case <-time.After(javaWait):
		fail("the client did not report its server within %s", javaWait)
	}

	en.Server(on).Pause()
	c := connect(t, []string{en.Server(leader).Addr()}, 0, "writer")
	for _, step := range []struct {
		op   string
		path string
	}{{"set", "/mv/d"}, {"create", "/mv/new"}, {"set", "/mv/p"}, {"create", "/mv/r/x"}} {
		var err error
		if step.op == "set" {
			_, err = c.Set(step.path, []byte("changed"), -1)
		} else {
			_, err = c.Create(step.path, nil, 0, zk.WorldACL(zk.PermAll))
		}
		if err != nil {
			fail("%s %s through the leader: %v", step.op, step.path, err)
		}
	}
	en.Server(on).Kill()
	if _, err := fmt.Fprintln(stdin, "GO"); err != nil {
		fail("telling the client to go on: %v", err)
	}
	select {
	case err := <-exited:
		if err != nil {
			fail("MoveOps: %v", err)
		}
	case <-time.After(javaWait):
		fail("the client did not finish within %s", javaWait)
	}
	got, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	env.CompareGolden(t, "MoveOps", got, *updateJava)
}

// TestCuratorOnEnsemble runs tests/java/CuratorOps.java against a
// 3-server ensemble, its two clients spread over the members by Curator
// (which also follows /zookeeper/config): the transcript must be the one
// ZooKeeper 3.9.3 gives standalone (CuratorOps.golden), since nothing in
// it depends on where a session is.
func TestCuratorOnEnsemble(t *testing.T) {
	t.Parallel()
	j := env.JavaClient(t)
	dir := j.Compile(t, env.Root, "CuratorOps", "Events", "Transcript")
	en := start(t, 3)
	en.WaitAll()
	got := j.Transcript(t, dir, "CuratorOps", en.ConnectString())
	env.CompareGolden(t, "CuratorOps", got, false)
}
