package load

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// Progress draws a one-line progress bar per phase on a terminal: who and
// what is measured, time elapsed of the phase's total (warm-up included)
// and the replies per second of the last second, redrawn in place with \r.
// When the phase ends its line is left behind with the measured result, so
// the terminal keeps one line per phase.
//
// Log records go through Progress too (it is the io.Writer of the
// command's log handler): a record clears the bar, is written, and the bar
// is drawn again below it, so neither garbles the other.
type Progress struct {
	w     io.Writer
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	line string // the bar as last drawn; "" when none is shown
}

// progressEvery is how often the bar is redrawn.
const progressEvery = 250 * time.Millisecond

// NewProgress draws on w, which should be a terminal.
func NewProgress(w io.Writer) *Progress {
	return &Progress{w: w, every: progressEvery, now: time.Now}
}

// Write writes b (log output) above the bar.
func (p *Progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.line != "" {
		io.WriteString(p.w, clearLine)
	}
	n, err := p.w.Write(b)
	if p.line != "" {
		io.WriteString(p.w, p.line)
	}
	return n, err
}

// clearLine returns the cursor to the start of the line and erases it.
const clearLine = "\r\x1b[K"

// draw replaces the bar with line.
func (p *Progress) draw(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	io.WriteString(p.w, clearLine+line)
	p.line = line
}

// leave ends the bar with line, which stays on the terminal.
func (p *Progress) leave(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	io.WriteString(p.w, clearLine+line+"\n")
	p.line = ""
}

// phaseBar is one phase's bar; nil draws nothing.
type phaseBar struct {
	p             *Progress
	label         string
	t0            time.Time
	warmup, total time.Duration
	replies       *atomic.Int64
	stop, done    chan struct{}
	finishOnce    sync.Once
	samples       []progressSample // the last second's
}

type progressSample struct {
	at    time.Time
	count int64
}

// Start begins the bar of the phase cfg describes, whose window is w: it
// makes w count replies (so it must be called before w is copied) and
// redraws the bar until finish or ctx ends. A nil Progress draws nothing.
func (p *Progress) start(ctx context.Context, cfg PhaseConfig, w *Window) *phaseBar {
	if p == nil {
		return nil
	}
	w.replies = new(atomic.Int64)
	b := &phaseBar{
		p: p, label: progressLabel(cfg), t0: w.Start.Add(-cfg.Warmup),
		warmup: cfg.Warmup, total: cfg.Warmup + cfg.Duration, replies: w.replies,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	go b.loop(ctx)
	return b
}

func (b *phaseBar) loop(ctx context.Context) {
	defer close(b.done)
	t := time.NewTicker(b.p.every)
	defer t.Stop()
	for {
		now := b.p.now()
		b.p.draw(progressLine(b.label, now.Sub(b.t0), b.warmup, b.total, b.rate(now)))
		select {
		case <-t.C:
		case <-b.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Rate is the replies per second over the last second or so.
func (b *phaseBar) rate(now time.Time) float64 {
	b.samples = append(b.samples, progressSample{at: now, count: b.replies.Load()})
	for len(b.samples) > 2 && now.Sub(b.samples[1].at) >= time.Second {
		b.samples = b.samples[1:]
	}
	first, last := b.samples[0], b.samples[len(b.samples)-1]
	if d := last.at.Sub(first.at).Seconds(); d > 0 {
		return float64(last.count-first.count) / d
	}
	return 0
}

// Finish stops the bar and leaves the phase's result in its place.
func (b *phaseBar) finish(res *PhaseResult) {
	if b == nil {
		return
	}
	b.finishOnce.Do(func() {
		close(b.stop)
		<-b.done
		b.p.leave(progressDone(b.label, b.total, res))
	})
}

// progressLabel names the phase: target, repetition and phase.
func progressLabel(cfg PhaseConfig) string {
	l := cfg.Target
	if cfg.Run > 0 {
		l += fmt.Sprintf(" run %d", cfg.Run)
	}
	return l + " " + cfg.Phase
}

// progressBarWidth is the bar's length in characters, and labels are
// padded to progressLabelWidth ("zookeeper seqcreate") so that the bars of
// successive phases line up.
const (
	progressBarWidth   = 20
	progressLabelWidth = 19
)

// progressLine is the bar of a phase elapsed into its total (warm-up
// included), e.g.
//
//	corral create [#########...........]   5.8s/13.0s measuring   41230 ops/s
func progressLine(label string, elapsed, warmup, total time.Duration, opsPerSec float64) string {
	elapsed = max(elapsed, 0)
	stage := "measuring"
	switch {
	case elapsed < warmup:
		stage = "warm-up"
	case elapsed >= total:
		stage = "draining"
	}
	filled := progressBarWidth
	if total > 0 && elapsed < total {
		filled = int(int64(progressBarWidth) * int64(elapsed) / int64(total))
	}
	bar := strings.Repeat("#", filled) + strings.Repeat(".", progressBarWidth-filled)
	return fmt.Sprintf("%-*s [%s] %5.1fs/%.1fs %-9s %8.0f ops/s", progressLabelWidth,
		label, bar, min(elapsed, total).Seconds(), total.Seconds(), stage, opsPerSec)
}

// progressDone is the line a finished phase leaves: its measured
// throughput and p99, or that it failed.
func progressDone(label string, total time.Duration, res *PhaseResult) string {
	s := fmt.Sprintf("%-*s [%s] %5.1fs/%.1fs done      %8.0f ops/s measured, p99 %.3f ms",
		progressLabelWidth, label, strings.Repeat("#", progressBarWidth), total.Seconds(), total.Seconds(), res.OpsPerSec, Ms(res.P99))
	if res.Errors > 0 {
		s += fmt.Sprintf(", %d errors", res.Errors)
	}
	if ol := res.OpenLoop; ol != nil {
		s += fmt.Sprintf(", p99 from intended %.3f ms, %d unsent", Ms(ol.FromIntended.P99), ol.Unsent)
	}
	return s
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// logLevel is the level of a phase's start and end records: debug when
// its progress bar says the same.
func (cfg *PhaseConfig) logLevel() slog.Level {
	if cfg.Progress != nil {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
