// Package kv_test drives the corral binary's key-value commands: `corral
// kv ensemble` started as a process, the client commands run as
// processes against it, checking their output and exit status (the
// contract scripts rely on).
package kv_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// the process is stopped when the test ends.
func startEnsemble(t *testing.T, n int) string {
	t.Helper()
	p := startCorral(t, "kv", "ensemble", "-n", fmt.Sprint(n), "-tick", "100ms", "-dir", t.TempDir())
	return p.Await(60*time.Second, "kv endpoints: ")[0]
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
