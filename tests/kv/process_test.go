package kv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/proc"
)

// Process control bounds. None is asserted on: a process that misses one
// fails the test with its output.
const (
	stopTimeout  = 30 * time.Second
	pollInterval = 50 * time.Millisecond
	tailLines    = 300
)

// corralProc is one `corral ARGS...` process a test started. It is
// started through internal/proc, as tests/harness and the benchmarks
// start theirs: its stdout and stderr go to one log file in a directory
// of the test's, which await and output read. When the test ends it is
// stopped by its PID (SIGTERM, SIGKILL if it has not exited in time), and
// the end of its output is logged if the test failed.
type corralProc struct {
	t *testing.T
	p *proc.Process
}

// startCorral starts `corral args...` and returns at once.
func startCorral(t *testing.T, args ...string) *corralProc {
	t.Helper()
	dir := t.TempDir()
	name := "corral " + strings.Join(args[:min(2, len(args))], " ")
	p, err := proc.Start(name, append([]string{corralBin}, args...), dir, filepath.Join(dir, "output.log"))
	if err != nil {
		t.Fatal(err)
	}
	c := &corralProc{t: t, p: p}
	t.Cleanup(func() {
		if killed, err := p.Stop(stopTimeout); killed || err != nil {
			t.Errorf("%s (pid %d) did not stop within %v of SIGTERM: killed %v, %v", name, p.PID(), stopTimeout, killed, err)
		}
		if t.Failed() {
			t.Logf("%s (pid %d, %s), last lines of its output:\n%s", name, p.PID(), p.State(), c.tail(tailLines))
		}
	})
	return c
}

// pid is the process id.
func (c *corralProc) pid() int { return c.p.PID() }

// output is what the process has written so far, stdout and stderr as
// they interleaved, up to its last complete line.
func (c *corralProc) output() string {
	b, err := os.ReadFile(c.p.LogPath)
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b[:strings.LastIndexByte(string(b), '\n')+1])
}

// lines are the complete lines of output, without their line ends.
func (c *corralProc) lines() []string {
	return strings.Split(strings.TrimSuffix(c.output(), "\n"), "\n")
}

// tail is the last n lines of output.
func (c *corralProc) tail(n int) string {
	l := c.lines()
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// await waits up to timeout until the output holds a line beginning with
// each prefix, and returns what follows the prefix in the first such
// line of each. It fails the test if the process exits first.
func (c *corralProc) await(timeout time.Duration, prefixes ...string) []string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	found := make([]string, len(prefixes))
	err := proc.WaitUntil(ctx, c.p, pollInterval, func(context.Context) error {
		seen := make([]bool, len(prefixes))
		for _, l := range c.lines() {
			for i, p := range prefixes {
				if rest, ok := strings.CutPrefix(l, p); ok && !seen[i] {
					found[i], seen[i] = rest, true
				}
			}
		}
		for i, ok := range seen {
			if !ok {
				return fmt.Errorf("no line %q yet", prefixes[i])
			}
		}
		return nil
	})
	if err != nil {
		c.t.Fatalf("%s: %v", c.p.Name, err)
	}
	return found
}

// stop sends SIGTERM (an orderly stop, as Ctrl-C) and waits until the
// process exits; it returns how it ended (nil for exit status 0).
func (c *corralProc) stop() error {
	if err := c.p.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-c.p.Done():
		return c.p.Err()
	case <-time.After(stopTimeout):
		return errors.New("not exited within " + stopTimeout.String() + " of SIGTERM")
	}
}

// kill SIGKILLs the process and waits until it is reaped.
func (c *corralProc) kill() {
	if _, err := c.p.Kill(stopTimeout); err != nil {
		c.t.Error(err)
	}
}
