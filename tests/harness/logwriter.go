package harness

import (
	"strings"
	"sync"
	"testing"
)

// LogWriter is an io.Writer that sends each write to t.Log, prefixed,
// until Stop. Clients log from their own goroutines, possibly after the
// test returned, when t.Log would panic; Stop (call it in t.Cleanup after
// closing the client) makes later writes no-ops.
type LogWriter struct {
	mu     sync.Mutex
	t      testing.TB
	prefix string
	done   bool
}

// NewLogWriter returns a LogWriter for t.
func NewLogWriter(t testing.TB, prefix string) *LogWriter {
	return &LogWriter{t: t, prefix: prefix}
}

func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Log(l.prefix + strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// Stop drops every later write.
func (l *LogWriter) Stop() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}
