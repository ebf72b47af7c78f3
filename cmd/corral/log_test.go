package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildCorral returns the real binary: $CORRAL_BIN if set (make e2e
// builds one), else one built once per test run.
func buildCorral(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("CORRAL_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "corral-log-test")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "corral")
		cmd := exec.Command("go", "build", "-o", builtBin, ".")
		cmd.Stderr = os.Stderr
		buildErr = cmd.Run()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// TestLogCommands runs `corral log serve-local` and every `corral log`
// subcommand against it as separate processes, checking the output
// contract: offsets printed by append, bytes written by read and follow,
// the stat line, typed failures on stderr with exit status 1.
func TestLogCommands(t *testing.T) {
	bin := buildCorral(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "log", "serve-local", "-dir", t.TempDir(), "-listen", "127.0.0.1:0")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	ep, ok := strings.CutPrefix(strings.TrimSpace(line), "api endpoints: ")
	if !ok {
		t.Fatalf("server printed %q", line)
	}
	logScript(t, ctx, bin, ep)
}

// logScript runs every `corral log` subcommand against the API at ep as
// a script would and checks the output contract: offsets printed by
// append, bytes written by read and follow, the stat line, typed failures
// on stderr with exit status 1. It leaves a log "kept" behind: offsets
// 0-5 "hello\n", then 3000 bytes of 'x' at 6 (an entry above the inline
// size), start 0, end 3006, not sealed.
func logScript(t *testing.T, ctx context.Context, bin, ep string) {
	run := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, append([]string{"log"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	ok0 := func(stdin string, args ...string) string {
		t.Helper()
		o, e, code := run(stdin, args...)
		if code != 0 {
			t.Fatalf("corral log %v: exit %d: %s", args, code, e)
		}
		return o
	}
	ok0("", "create", "-endpoints", ep, "events")
	if o := ok0("first payload", "append", "-endpoints", ep, "events"); o != "0\n" {
		t.Fatalf("append printed %q", o)
	}
	if o := ok0("a\nbb\nccc\n", "append", "-endpoints", ep, "events", "-lines"); o != "13\n15\n18\n" {
		t.Fatalf("append -lines printed %q", o)
	}
	if o := ok0("", "stat", "-endpoints", ep, "events"); o != "start=0 end=22 committed=22 sealed=false\n" {
		t.Fatalf("stat printed %q", o)
	}
	if o := ok0("", "read", "-endpoints", ep, "events", "-offset", "6"); o != "payloada\nbb\nccc\n" {
		t.Fatalf("read printed %q", o)
	}
	if o := ok0("", "read", "-endpoints", ep, "events", "-offset", "13", "-max", "4"); o != "a\nbb" {
		t.Fatalf("read -max printed %q", o)
	}
	// A wrong expected offset fails with the log's end in the message.
	if _, e, code := run("x", "append", "-endpoints", ep, "-expect", "3", "events"); code != 1 || !strings.Contains(e, "wrong offset") || !strings.Contains(e, "22") {
		t.Fatalf("append -expect 3: exit %d, stderr %q", code, e)
	}

	// follow writes what commits after it starts and ends at a seal.
	fol := exec.CommandContext(ctx, bin, "log", "follow", "-endpoints", ep, "events", "-offset", "18")
	var fo bytes.Buffer
	fol.Stdout, fol.Stderr = &fo, os.Stderr
	if err := fol.Start(); err != nil {
		t.Fatal(err)
	}
	ok0("tail\n", "append", "-endpoints", ep, "events")
	if o := ok0("", "seal", "-endpoints", ep, "events"); o != "end=27\n" {
		t.Fatalf("seal printed %q", o)
	}
	if err := fol.Wait(); err != nil {
		t.Fatalf("follow: %v", err)
	}
	if fo.String() != "ccc\ntail\n" {
		t.Fatalf("follow wrote %q", fo.String())
	}
	if _, e, code := run("more", "append", "-endpoints", ep, "events"); code != 1 || !strings.Contains(e, "sealed") {
		t.Fatalf("append to sealed: exit %d, stderr %q", code, e)
	}
	if o := ok0("", "trim", "-endpoints", ep, "events", "10"); o != "start=10\n" {
		t.Fatalf("trim printed %q", o)
	}
	if _, e, code := run("", "read", "-endpoints", ep, "events", "-offset", "0"); code != 1 || !strings.Contains(e, "truncated") {
		t.Fatalf("read below start: exit %d, stderr %q", code, e)
	}
	if o := ok0("", "stat", "-endpoints", ep, "events"); o != "start=10 end=27 committed=27 sealed=true\n" {
		t.Fatalf("stat printed %q", o)
	}
	ok0("", "delete", "-endpoints", ep, "events")
	if _, e, code := run("", "stat", "-endpoints", ep, "events"); code != 1 || !strings.Contains(e, "not found") {
		t.Fatalf("stat after delete: exit %d, stderr %q", code, e)
	}
	if _, _, code := run("", "stat", "events"); code != 2 {
		t.Fatalf("stat without -endpoints: exit %d, want 2", code)
	}
	ok0("", "create", "-endpoints", ep, "kept")
	if _, e, code := run("", "create", "-endpoints", ep, "kept"); code != 1 || !strings.Contains(e, "exists") {
		t.Fatalf("second create: exit %d, stderr %q", code, e)
	}
	if o := ok0("hello\n", "append", "-endpoints", ep, "-expect", "0", "kept"); o != "0\n" {
		t.Fatalf("append -expect 0 printed %q", o)
	}
	// A retry of an append that committed gets its offset, no second copy.
	if o := ok0("hello\n", "append", "-endpoints", ep, "-expect", "0", "kept"); o != "0\n" {
		t.Fatalf("retried append printed %q", o)
	}
	big := strings.Repeat("x", 3000)
	if o := ok0(big, "append", "-endpoints", ep, "kept"); o != "6\n" {
		t.Fatalf("append of 3000 bytes printed %q", o)
	}
	if o := ok0("", "read", "-endpoints", ep, "-offset", "3", "-max", "6", "kept"); o != "lo\nxxx" {
		t.Fatalf("read across entries printed %q", o)
	}
	if o := ok0("", "read", "-endpoints", ep, "-offset", "0", "kept"); o != "hello\n"+big {
		t.Fatalf("read of kept: %d bytes", len(o))
	}
	if _, e, code := run("", "read", "-endpoints", ep, "-offset", "3007", "kept"); code != 1 || !strings.Contains(e, "out of range") || !strings.Contains(e, "3006") {
		t.Fatalf("read past the end: exit %d, stderr %q", code, e)
	}
	if o := ok0("", "stat", "-endpoints", ep, "kept"); o != "start=0 end=3006 committed=3006 sealed=false\n" {
		t.Fatalf("stat of kept printed %q", o)
	}
}
