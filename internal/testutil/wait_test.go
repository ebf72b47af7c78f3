package testutil

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

// fakeTB records a failure instead of ending the test.
type fakeTB struct{ failed string }

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	Eventually(t, time.Minute, "third check", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("checked %d times, want 3", n)
	}
}

func TestEventuallyFailsWithTheConditionsName(t *testing.T) {
	var f fakeTB
	Eventually(&f, 20*time.Millisecond, "never", func() bool { return false })
	if want := "never: not true within 20ms"; f.failed != want {
		t.Fatalf("failure %q, want %q", f.failed, want)
	}
}

func TestWithinChecksOnceMoreAtTheDeadline(t *testing.T) {
	start := time.Now()
	deadline := start.Add(30 * time.Millisecond)
	if !Within(30*time.Millisecond, func() bool { return !time.Now().Before(deadline) }) {
		t.Fatal("a condition that holds at the deadline was reported false")
	}
}

func TestFreePortsAreDistinctAndBindable(t *testing.T) {
	seen := map[int]bool{}
	for range 20 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d: %v", p, err)
		}
		ln.Close()
	}
	if _, _, err := net.SplitHostPort(FreeAddr(t)); err != nil {
		t.Fatal(err)
	}
}

func TestEventuallyNoErrorReportsTheLastError(t *testing.T) {
	n := 0
	EventuallyNoError(t, time.Minute, "third call", func() error {
		if n++; n < 3 {
			return fmt.Errorf("call %d", n)
		}
		return nil
	})
	var f fakeTB
	n = 0
	EventuallyNoError(&f, 20*time.Millisecond, "never", func() error { n++; return fmt.Errorf("call %d", n) })
	if want := fmt.Sprintf("never: not done within 20ms: call %d", n); f.failed != want {
		t.Fatalf("failure %q, want %q", f.failed, want)
	}
}
