package route

import (
	"context"
	"errors"
	"time"

	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
)

// Source is where a Router's configuration comes from; *cm.View is one.
type Source interface {
	Current() *cm.State
	Changed() <-chan struct{}
}

// A View is a Source.
var _ Source = (*cm.View)(nil)

// Follow feeds rt every State src publishes until ctx ends. Run it in its
// own goroutine.
func Follow(ctx context.Context, rt *Router, src Source) {
	for {
		rt.Update(src.Current())
		select {
		case <-ctx.Done():
			return
		case <-src.Changed():
		}
	}
}

// Policy bounds Do's retries.
type Policy struct {
	// MaxAttempts bounds the sends and routing attempts of one call.
	MaxAttempts int
	// ConfigWait bounds one wait for a newer configuration; after it Do
	// routes again with what it has (the CM may simply be slow to show
	// what a server already knows).
	ConfigWait time.Duration
	// Backoff is the pause before retrying a server that lags behind the
	// client's ring.
	Backoff time.Duration
}

// DefaultPolicy suits a client whose View follows the CM.
var DefaultPolicy = Policy{MaxAttempts: 16, ConfigWait: time.Second, Backoff: 20 * time.Millisecond}

// ErrGaveUp wraps the last error once a call has used all its attempts.
var ErrGaveUp = errors.New("route: attempts exhausted")

// Do sends one request for key to the owning group's leader, following
// the routing errors: a NotLeader naming a newer leader costs one more
// round trip; a missing leader or a stale ring waits for the Router to
// learn more (bounded by p.ConfigWait); a lagging server is retried after
// p.Backoff. Errors that are not routing errors are returned as they are.
// send must return the routing errors as *NotLeader or *WrongRange
// (possibly wrapped).
func Do[T any](ctx context.Context, rt *Router, p Policy, key []byte, send func(context.Context, Target) (T, error)) (T, error) {
	return do(ctx, rt, p, func() (Target, error) { return rt.Route(key) }, send)
}

// DoGroup is Do for a request addressed to group g rather than to a row
// (table operations, a scan of one group).
func DoGroup[T any](ctx context.Context, rt *Router, p Policy, g ring.GroupID, send func(context.Context, Target) (T, error)) (T, error) {
	return do(ctx, rt, p, func() (Target, error) { return rt.RouteGroup(g) }, send)
}

func do[T any](ctx context.Context, rt *Router, p Policy, route func() (Target, error), send func(context.Context, Target) (T, error)) (T, error) {
	var zero T
	var last error
	for range max(p.MaxAttempts, 1) {
		updated := rt.Updated()
		t, err := route()
		if err != nil {
			if !errors.Is(err, ErrNoRing) && !errors.Is(err, ErrNoLeader) &&
				!errors.Is(err, ErrRingBehind) && !errors.Is(err, ErrUnknownGroup) {
				return zero, err
			}
			last = err
			if err := waitFor(ctx, updated, p.ConfigWait); err != nil {
				return zero, err
			}
			continue
		}
		v, err := send(ctx, t)
		if err == nil {
			return v, nil
		}
		last = err
		switch rt.Observe(t, err) {
		case NotRouting:
			return v, err
		case RetryNow:
		case WaitConfig:
			if err := waitFor(ctx, updated, p.ConfigWait); err != nil {
				return zero, err
			}
		case Backoff:
			if err := waitFor(ctx, nil, p.Backoff); err != nil {
				return zero, err
			}
		}
	}
	return zero, errors.Join(ErrGaveUp, last)
}

// waitFor waits until ch is closed or d passes; it fails only if ctx ends.
func waitFor(ctx context.Context, ch <-chan struct{}, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-ch:
	case <-timer.C:
	}
	return nil
}
