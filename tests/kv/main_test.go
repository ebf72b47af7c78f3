// Package kv_test drives the corral binary's key-value commands: `corral
// kv ensemble` started as a process, the client commands run as
// processes against it, checking their output and exit status (the
// contract scripts rely on).
package kv_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var corralBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	corralBin = os.Getenv("CORRAL_BIN")
	if corralBin == "" {
		dir, err := os.MkdirTemp("", "corral-kv-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		corralBin = filepath.Join(dir, "corral")
		cmd := exec.Command("go", "build", "-o", corralBin, "github.com/corral-db/corral/cmd/corral")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
			return 1
		}
	}
	return m.Run()
}

// startEnsemble runs `corral kv ensemble -n N` and returns its endpoints;
// the process is killed when the test ends.
func startEnsemble(t *testing.T, n int) string {
	t.Helper()
	cmd := exec.Command(corralBin, "kv", "ensemble", "-n", fmt.Sprint(n), "-tick", "100ms", "-dir", t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("ensemble stderr:\n%s", stderr.String())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if e, ok := strings.CutPrefix(sc.Text(), "kv endpoints: "); ok {
				found <- e
			}
		}
		close(found)
	}()
	select {
	case e, ok := <-found:
		if !ok {
			t.Fatalf("ensemble exited without printing its endpoints; stderr:\n%s", stderr.String())
		}
		return e
	case <-time.After(60 * time.Second):
		t.Fatalf("no endpoints line; stderr:\n%s", stderr.String())
	}
	return ""
}

// kv runs `corral kv ARGS...` and returns its stdout and exit status.
func kv(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, corralBin, append([]string{"kv"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("corral kv %v: %v", args, err)
	}
	if code == 2 {
		t.Logf("corral kv %v: stderr: %s", args, stderr.String())
	}
	return stdout.String(), code
}
