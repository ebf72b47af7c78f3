package proc

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T, argv ...string) *Process {
	t.Helper()
	dir := t.TempDir()
	p, err := Start("test "+argv[0], argv, dir, filepath.Join(dir, "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(10 * time.Second) })
	return p
}

func TestStopEndsAPausedProcess(t *testing.T) {
	p := start(t, "sleep", "60")
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	if !p.Paused() {
		t.Fatal("Paused() false after Pause")
	}
	killed, err := p.Stop(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if killed {
		t.Error("sleep needed SIGKILL after SIGTERM")
	}
	if !p.Exited() || p.Err() == nil {
		t.Fatalf("after Stop: exited %v, err %v", p.Exited(), p.Err())
	}
	if err := p.Signal(15); err != nil {
		t.Errorf("signal to an exited process: %v", err)
	}
}

func TestLogGetsOutputAfterStartLine(t *testing.T) {
	p := start(t, "sh", "-c", "echo hello")
	<-p.Done()
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "starting test sh") || lines[1] != "hello" {
		t.Fatalf("log:\n%s", b)
	}
}

func TestWaitUntilReportsExit(t *testing.T) {
	p := start(t, "sh", "-c", "exit 3")
	err := WaitUntil(context.Background(), p, 10*time.Millisecond, func(context.Context) error {
		return errors.New("not yet")
	})
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("WaitUntil: %v", err)
	}
}

func TestWaitUntilReturnsWhenReady(t *testing.T) {
	p := start(t, "sleep", "60")
	n := 0
	err := WaitUntil(context.Background(), p, time.Millisecond, func(context.Context) error {
		if n++; n < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("WaitUntil: %v after %d calls", err, n)
	}
}

func TestFourLetterReadsUntilClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req := make([]byte, 4)
		if _, err := io.ReadFull(c, req); err != nil {
			return
		}
		io.WriteString(c, "Zookeeper version: x\nMode: follower\nNode count: 4\n"+string(req))
	}()
	out, err := FourLetter(context.Background(), ln.Addr().String(), []byte("srvr"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if SrvrMode(out) != "follower" || !strings.HasSuffix(out, "srvr") {
		t.Fatalf("answer %q, mode %q", out, SrvrMode(out))
	}
	if SrvrMode("This ZooKeeper instance is not currently serving requests\n") != "" {
		t.Error("a mode for a server that is not serving")
	}
}

func TestZooKeeperArgv(t *testing.T) {
	got := strings.Join(ZooKeeperArgv("", []string{"-Xmx2g"}, "lb.xml", LibClasspath("lib"), "zoo.cfg"), " ")
	want := "java -Xmx2g -Dlogback.configurationFile=lb.xml -cp lib/* " + ZooKeeperMain + " zoo.cfg"
	if got != want {
		t.Fatalf("argv %q\nwant %q", got, want)
	}
}

func TestModuleRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "corral")); err != nil {
		t.Errorf("root %s has no cmd/corral: %v", root, err)
	}
	if _, err := ModuleRoot(t.TempDir()); err == nil {
		t.Error("a module root above a temporary directory")
	}
}
