package harness

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

// Command bounds. None is asserted on: a process that misses one fails
// the test with its output.
const (
	commandStopTimeout = 30 * time.Second
	commandPoll        = 50 * time.Millisecond
	commandTailLines   = 300
)

// Command is a process a test started that is not a zoo.cfg server (for
// those, see Server): `corral kv cluster`, `corral log serve-local` and
// the like, which say on their output when they serve. It is started
// through internal/proc, as Server is: its stdout and stderr go to one
// log file in a directory of the test's, which Await, Lines and Output
// read. When the test ends it is stopped by its PID (SIGTERM, SIGKILL if
// it has not exited in time), and the end of its output is logged if
// the test failed. Methods are meant for the test goroutine.
type Command struct {
	t testing.TB
	p *proc.Process
}

// StartCommand starts argv and returns at once. name says what runs, in
// messages.
func StartCommand(t testing.TB, name string, argv ...string) *Command {
	t.Helper()
	dir := t.TempDir()
	p, err := proc.Start(name, argv, dir, filepath.Join(dir, "output.log"))
	if err != nil {
		t.Fatal(err)
	}
	c := &Command{t: t, p: p}
	t.Cleanup(func() {
		if killed, err := p.Stop(commandStopTimeout); killed || err != nil {
			t.Errorf("%s (pid %d) did not stop within %v of SIGTERM: killed %v, %v", name, p.PID(), commandStopTimeout, killed, err)
		}
		if t.Failed() {
			t.Logf("%s (pid %d, %s), last lines of its output:\n%s", name, p.PID(), p.State(), c.tail(commandTailLines))
		}
	})
	return c
}

// PID is the process id.
func (c *Command) PID() int { return c.p.PID() }

// Output is what the process has written so far, stdout and stderr as
// they interleaved, up to its last complete line.
func (c *Command) Output() string {
	b, err := os.ReadFile(c.p.LogPath)
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b[:strings.LastIndexByte(string(b), '\n')+1])
}

// Lines are the complete lines of Output, without their line ends.
func (c *Command) Lines() []string {
	return strings.Split(strings.TrimSuffix(c.Output(), "\n"), "\n")
}

// tail is the last n lines of output.
func (c *Command) tail(n int) string {
	l := c.Lines()
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// Await waits up to timeout until the output holds a line beginning with
// each prefix, and returns what follows the prefix in the first such
// line of each. It fails the test if the process exits first.
func (c *Command) Await(timeout time.Duration, prefixes ...string) []string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	found := make([]string, len(prefixes))
	err := proc.WaitUntil(ctx, c.p, commandPoll, func(context.Context) error {
		seen := make([]bool, len(prefixes))
		for _, l := range c.Lines() {
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

// Stop sends SIGTERM (an orderly stop, as Ctrl-C) and waits until the
// process exits; it returns how it ended (nil for exit status 0).
func (c *Command) Stop() error {
	if err := c.p.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	t := time.NewTimer(commandStopTimeout)
	defer t.Stop()
	select {
	case <-c.p.Done():
		return c.p.Err()
	case <-t.C:
		return errors.New("not exited within " + commandStopTimeout.String() + " of SIGTERM")
	}
}

// Kill SIGKILLs the process and waits until it is reaped.
func (c *Command) Kill() {
	if _, err := c.p.Kill(commandStopTimeout); err != nil {
		c.t.Error(err)
	}
}
