package transport

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/zab"
)

// waitLimit bounds every wait for a condition. Tests never assert on
// timing: the bound only turns a hang into a failure.
const waitLimit = 20 * time.Second

// checkGoroutines records the goroutine count and, at cleanup, waits for
// it to come back (every goroutine stopped), printing the survivors if it
// does not. Tests that use it must not run in parallel.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		if !testutil.Within(10*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Errorf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:n])
		}
	})
}

// logSink collects log records so tests can check that a reason was
// logged, and prints them if the test fails.
type logSink struct {
	mu   sync.Mutex
	recs []string
}

func newLogSink(t *testing.T) *logSink {
	s := &logSink{}
	t.Cleanup(func() {
		if t.Failed() {
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Logf("logs:\n%s", strings.Join(s.recs, "\n"))
		}
	})
	return s
}

func (s *logSink) logger() *slog.Logger { return slog.New(&sinkHandler{s: s}) }

// contains reports whether a record has every one of the substrings.
func (s *logSink) contains(subs ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
next:
	for _, r := range s.recs {
		for _, sub := range subs {
			if !strings.Contains(r, sub) {
				continue next
			}
		}
		return true
	}
	return false
}

type sinkHandler struct {
	s     *logSink
	attrs []slog.Attr
}

func (h *sinkHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *sinkHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", r.Time.Format("15:04:05.000"), r.Level, r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.s.mu.Lock()
	if len(h.s.recs) < 100000 {
		h.s.recs = append(h.s.recs, b.String())
	}
	h.s.mu.Unlock()
	return nil
}

func (h *sinkHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &sinkHandler{s: h.s, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *sinkHandler) WithGroup(string) slog.Handler { return h }

// seqMsg is a test message: Zxid carries a sequence number.
func seqMsg(typ zab.MsgType, from, to uint64, seq uint64) zab.Message {
	m := zab.Message{Type: typ, From: from, To: to, Zxid: zab.Zxid(seq)}
	if typ == zab.MsgProposal {
		m.Entries = []zab.Entry{{Zxid: zab.Zxid(seq), Data: fmt.Appendf(nil, "entry %d from %d", seq, from)}}
	}
	return m
}

// recvN receives n messages from ch, or fails.
func recvN(t *testing.T, ch <-chan zab.Message, n int) []zab.Message {
	t.Helper()
	var got []zab.Message
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	for len(got) < n {
		select {
		case m, ok := <-ch:
			if !ok {
				t.Fatalf("channel closed after %d of %d messages", len(got), n)
			}
			got = append(got, m)
		case <-timeout.C:
			t.Fatalf("received %d of %d messages", len(got), n)
		}
	}
	return got
}

// checkSeq checks that msgs carry sequence numbers first, first+1, ...
func checkSeq(t *testing.T, msgs []zab.Message, first uint64) {
	t.Helper()
	for i, m := range msgs {
		if uint64(m.Zxid) != first+uint64(i) {
			t.Fatalf("message %d has seq %d, want %d (out of order or lost)", i, m.Zxid, first+uint64(i))
		}
	}
}
