package zabtest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// logState routes the nodes' log records into the trace, at or above a
// level the script sets with log-level (none by default).
type logState struct {
	out    *strings.Builder
	on     bool
	level  slog.Level
	indent string
}

func (s *logState) logger() *slog.Logger { return slog.New(&traceHandler{s: s}) }

type traceHandler struct {
	s     *logState
	attrs []slog.Attr
}

func (h *traceHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.s.on && l >= h.s.level
}

func (h *traceHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s %s", h.s.indent, r.Level, r.Message)
	write := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteByte('\n')
	h.s.out.WriteString(b.String())
	return nil
}

func (h *traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &traceHandler{s: h.s, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *traceHandler) WithGroup(string) slog.Handler { return h }

func (s *logState) setLevel(name string) error {
	switch strings.ToLower(name) {
	case "none":
		s.on = false
		return nil
	case "debug":
		s.level = slog.LevelDebug
	case "info":
		s.level = slog.LevelInfo
	case "warn":
		s.level = slog.LevelWarn
	case "error":
		s.level = slog.LevelError
	default:
		return fmt.Errorf("unknown log level %q (none, debug, info, warn, error)", name)
	}
	s.on = true
	return nil
}
