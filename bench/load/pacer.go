package load

import (
	"context"
	"time"
)

// Pacer issues tokens at a fixed rate, for the fixed write rate of the
// CPU phase (the thesis's Fig. 5.5 measured CPU "serving write requests at
// a rate of 4000 znodes per second"). Token k is due at t0 + k/rate; the
// clients take tokens from a channel as big as their number and each
// spends one on a create. A token due while every client is busy and the
// channel is full is dropped and counted: the servers did not keep up,
// and the report says so rather than let the rate quietly fall.
type Pacer struct {
	Rate float64 // tokens per second, > 0
	// T0 is when token 0 is due, start the beginning of the measured
	// interval (tokens due earlier are warm-up), end when the last token
	// may be due.
	T0, Start, End time.Time
	Now            func() time.Time
	// Sleep waits d or until ctx ends, and reports whether ctx is still live.
	Sleep func(ctx context.Context, d time.Duration) bool
}

// SleepCtx is pacer.sleep on the real clock.
func SleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// dueAt is when token k is due.
func (p *Pacer) dueAt(k int64) time.Time {
	return p.T0.Add(time.Duration(float64(k) / p.Rate * float64(time.Second)))
}

// Run sends the tokens due before end into tokens, closes it and returns
// how many were taken into the channel and how many that were due in the
// Measured interval were dropped. The loop is bounded by the number of
// tokens the interval holds and by end.
func (p *Pacer) Run(ctx context.Context, tokens chan<- struct{}) (issued, missed int64) {
	defer close(tokens)
	if p.Rate <= 0 || !p.End.After(p.T0) {
		return 0, 0
	}
	total := int64(p.Rate * p.End.Sub(p.T0).Seconds())
	var k int64
	for k < total {
		now := p.Now()
		if !now.Before(p.End) {
			break
		}
		due := min(total, int64(now.Sub(p.T0).Seconds()*p.Rate)+1)
		for ; k < due; k++ {
			select {
			case tokens <- struct{}{}:
				issued++
			default:
				if !p.dueAt(k).Before(p.Start) {
					missed++
				}
			}
		}
		if k >= total {
			break
		}
		// At least a microsecond, so a clock that rounds the due time to
		// Now still moves on.
		if !p.Sleep(ctx, max(p.dueAt(k).Sub(now), time.Microsecond)) {
			break
		}
	}
	return issued, missed
}
