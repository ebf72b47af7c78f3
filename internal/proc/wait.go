package proc

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrExited is returned by WaitUntil when the process exits first.
var ErrExited = errors.New("proc: process exited")

// WaitUntil calls ready every poll until it returns nil, and fails when
// the process p exits (ErrExited, with how it ended) or ctx ends (with
// ready's last error). p may be nil for a condition on several processes
// that the caller watches itself.
func WaitUntil(ctx context.Context, p *Process, poll time.Duration, ready func(context.Context) error) error {
	var exited <-chan struct{}
	if p != nil {
		exited = p.Done()
	}
	var last error
	for {
		if p != nil && p.Exited() {
			return fmt.Errorf("%w: %s (%s); see %s", ErrExited, p.Name, p.State(), p.LogPath)
		}
		if last = ready(ctx); last == nil {
			return nil
		}
		t := time.NewTimer(poll)
		select {
		case <-exited:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-t.C:
		}
		t.Stop()
	}
}
