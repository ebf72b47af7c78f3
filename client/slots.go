package client

import (
	"context"
	"sync/atomic"
)

// slots bounds the requests in flight (MaxInFlight). The common case, a
// free slot, is one atomic add with no lock; only a caller that finds the
// Conn full parks on a channel. Every release while callers wait passes a
// token, and a caller that gets a slot passes one on if more are free, so
// no waiter sleeps while a slot is free for longer than one hand-off.
type slots struct {
	max     int64
	used    atomic.Int64
	waiters atomic.Int64
	freed   chan struct{} // cap 1: a slot may have been freed
}

func newSlots(max int) *slots {
	return &slots{max: int64(max), freed: make(chan struct{}, 1)}
}

func (s *slots) tryAcquire() bool {
	for {
		n := s.used.Load()
		if n >= s.max {
			return false
		}
		if s.used.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// acquire takes a slot, waiting until one is free, ctx ends (nil ctx: no
// limit) or dead is closed.
func (s *slots) acquire(ctx context.Context, dead <-chan struct{}) error {
	if s.tryAcquire() {
		return nil
	}
	var cdone <-chan struct{}
	if ctx != nil {
		cdone = ctx.Done()
	}
	s.waiters.Add(1)
	defer s.waiters.Add(-1)
	for {
		if s.tryAcquire() {
			s.signal()
			return nil
		}
		select {
		case <-s.freed:
		case <-cdone:
			s.signal() // pass on a token this waiter may have consumed
			return ctx.Err()
		case <-dead:
			return errDead
		}
	}
}

func (s *slots) release() {
	s.used.Add(-1)
	s.signal()
}

// signal wakes a waiter if there is one and a slot is free.
func (s *slots) signal() {
	if s.waiters.Load() > 0 && s.used.Load() < s.max {
		select {
		case s.freed <- struct{}{}:
		default:
		}
	}
}
