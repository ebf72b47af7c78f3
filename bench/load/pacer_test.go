package load

import (
	"context"
	"testing"
	"time"
)

// fakeClock advances only when the pacer sleeps.
type fakeClock struct {
	t      time.Time
	sleeps int
}

func (c *fakeClock) now() time.Time { return c.t }
func (c *fakeClock) sleep(_ context.Context, d time.Duration) bool {
	c.sleeps++
	c.t = c.t.Add(d)
	return true
}

func TestPacerIssuesEveryTokenWhenTaken(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	p := Pacer{Rate: 1000, T0: clk.t, Start: clk.t.Add(100 * time.Millisecond), End: clk.t.Add(time.Second),
		Now: clk.now, Sleep: clk.sleep}
	tokens := make(chan struct{}, 2000) // room for all: nothing is dropped
	issued, missed := p.Run(context.Background(), tokens)
	if issued != 1000 || missed != 0 {
		t.Errorf("issued %d, missed %d; want 1000, 0", issued, missed)
	}
	n := 0
	for range tokens { // closed by run
		n++
	}
	if n != 1000 {
		t.Errorf("%d tokens in the channel", n)
	}
	// Paced: it slept between tokens rather than issuing them at once.
	if clk.sleeps < 999 {
		t.Errorf("slept %d times for 1000 tokens", clk.sleeps)
	}
	if clk.t.Before(p.dueAt(999)) {
		t.Errorf("clock at %v when done, last token due at %v", clk.t, p.dueAt(999))
	}
}

func TestPacerCountsTokensNobodyTook(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	// 100/s for 1s; the first 0.5s are warm-up: tokens dropped then are
	// not counted as missed.
	p := Pacer{Rate: 100, T0: clk.t, Start: clk.t.Add(500 * time.Millisecond), End: clk.t.Add(time.Second),
		Now: clk.now, Sleep: clk.sleep}
	tokens := make(chan struct{}, 5)
	issued, missed := p.Run(context.Background(), tokens)
	if issued != 5 || missed != 50 {
		t.Errorf("issued %d, missed %d; want 5 (the channel's room), 50 (those due in the measured half)", issued, missed)
	}
}

func TestPacerStopsWithContext(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	ctx, cancel := context.WithCancel(context.Background())
	p := Pacer{Rate: 10, T0: clk.t, Start: clk.t, End: clk.t.Add(time.Hour), Now: clk.now,
		Sleep: func(ctx context.Context, d time.Duration) bool {
			cancel()
			return ctx.Err() == nil
		}}
	issued, _ := p.Run(ctx, make(chan struct{}, 100))
	if issued != 1 {
		t.Errorf("issued %d after the context ended at the first wait", issued)
	}
}
