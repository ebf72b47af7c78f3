package transport

import "time"

// backoff is an exponential backoff: each next doubles the wait, from min
// up to max; reset starts again from min. Jitter is the caller's
// (TCP.jitter), so that the randomness stays in one seeded source.
type backoff struct {
	min, max time.Duration
	cur      time.Duration
}

func (b *backoff) next() time.Duration {
	d := max(b.cur, b.min)
	b.cur = min(2*d, b.max)
	return d
}

func (b *backoff) reset() { b.cur = b.min }
