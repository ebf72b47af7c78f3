package harness

import (
	"strings"
	"testing"
	"time"
)

// TestCommandAwaitAndStop: Await returns what follows each prefix on the
// first line that has it, from stdout and stderr alike, and Stop is an
// orderly stop whose exit status it returns.
func TestCommandAwaitAndStop(t *testing.T) {
	c := StartCommand(t, "sh", "sh", "-c",
		`trap 'exit 0' TERM; echo "ready: one"; echo "ready: two"; echo "err: on stderr" >&2; while :; do sleep 0.05; done`)
	got := c.Await(30*time.Second, "ready: ", "err: ")
	if got[0] != "one" || got[1] != "on stderr" {
		t.Fatalf("Await: %q", got)
	}
	if !strings.Contains(c.Output(), "ready: two\n") {
		t.Fatalf("Output:\n%s", c.Output())
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// TestCommandStopReportsExitStatus: a process that does not exit 0 on
// SIGTERM makes Stop return an error.
func TestCommandStopReportsExitStatus(t *testing.T) {
	c := StartCommand(t, "sh", "sh", "-c", `trap 'exit 3' TERM; echo up; while :; do sleep 0.05; done`)
	c.Await(30*time.Second, "up")
	if err := c.Stop(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Stop: %v, want exit status 3", err)
	}
}
