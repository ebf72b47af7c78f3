package recipes

import (
	"context"
	"errors"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

// Connection loss is the one error the recipes retry on their own. For a
// read that is always safe. For a write the request may or may not have
// executed, and each recipe resolves that its own way before retrying:
// an ephemeral sequential create is found again by the GUID in its name,
// an ephemeral create by its owner and data, a queue put, a queue claim
// or a counter increment by the marker node its multi creates.
//
// All of this relies on the server executing one session's requests in
// order across connections, as ZooKeeper does: a read sent on the new
// connection is answered after the write that was in flight on the old
// one has been applied (or dropped).

const (
	minBackoff = 10 * time.Millisecond
	maxBackoff = time.Second
)

// backoff is an exponential delay between retries.
type backoff struct{ d time.Duration }

// wait sleeps for the next delay; it returns ctx.Err() if ctx ends first.
func (b *backoff) wait(ctx context.Context) error {
	if b.d == 0 {
		b.d = minBackoff
	} else {
		b.d = min(2*b.d, maxBackoff)
	}
	t := time.NewTimer(b.d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// connLoss: the request may or may not have executed; the session may
// still be alive.
func connLoss(err error) bool { return errors.Is(err, client.ErrConnectionLoss) }

// sessionOver: the Conn is dead (session expired, Conn closed, auth
// refused); its ephemeral nodes are gone or going.
func sessionOver(err error) bool {
	return errors.Is(err, wire.CodeSessionExpired) || errors.Is(err, wire.CodeAuthFailed)
}

func noNode(err error) bool     { return errors.Is(err, wire.CodeNoNode) }
func nodeExists(err error) bool { return errors.Is(err, wire.CodeNodeExists) }

// retry calls f until it returns anything but a connection loss, or ctx
// ends. Only for idempotent calls.
func retry[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	var b backoff
	for {
		v, err := f(ctx)
		if !connLoss(err) {
			return v, err
		}
		if werr := b.wait(ctx); werr != nil {
			return v, werr
		}
	}
}

// watched is a read result with its one-shot watch.
type watched[T any] struct {
	v  T
	ch <-chan client.Event
}

func childrenW(ctx context.Context, c *client.Conn, p string) ([]string, <-chan client.Event, error) {
	r, err := retry(ctx, func(ctx context.Context) (watched[[]string], error) {
		kids, ch, err := c.ChildrenW(ctx, p)
		return watched[[]string]{kids, ch}, err
	})
	return r.v, r.ch, err
}

func children(ctx context.Context, c *client.Conn, p string) ([]string, error) {
	return retry(ctx, func(ctx context.Context) ([]string, error) { return c.Children(ctx, p) })
}

func existsW(ctx context.Context, c *client.Conn, p string) (*client.Stat, <-chan client.Event, error) {
	r, err := retry(ctx, func(ctx context.Context) (watched[*client.Stat], error) {
		st, ch, err := c.ExistsW(ctx, p)
		return watched[*client.Stat]{st, ch}, err
	})
	return r.v, r.ch, err
}

// catchUp syncs the session's server with the leader before a lookup
// that decides whether a request whose reply was lost went in: the
// server the client reconnected to may not have applied it yet, though
// the leader has. A failure is returned for the caller to treat as the
// lookup's own.
func catchUp(ctx context.Context, c *client.Conn, p string) error {
	_, err := retry(ctx, func(ctx context.Context) (string, error) { return c.Sync(ctx, p) })
	return err
}

func exists(ctx context.Context, c *client.Conn, p string) (*client.Stat, error) {
	return retry(ctx, func(ctx context.Context) (*client.Stat, error) { return c.Exists(ctx, p) })
}

func get(ctx context.Context, c *client.Conn, p string) ([]byte, client.Stat, error) {
	r, err := retry(ctx, func(ctx context.Context) (client.GetResult, error) {
		data, st, err := c.Get(ctx, p)
		return client.GetResult{Data: data, Stat: st}, err
	})
	return r.Data, r.Stat, err
}

// getW reads a node and watches it. Unlike ExistsW it leaves no watch
// behind when the node is already gone (wire.CodeNoNode).
func getW(ctx context.Context, c *client.Conn, p string) ([]byte, client.Stat, <-chan client.Event, error) {
	r, err := retry(ctx, func(ctx context.Context) (watched[client.GetResult], error) {
		data, st, ch, err := c.GetW(ctx, p)
		return watched[client.GetResult]{client.GetResult{Data: data, Stat: st}, ch}, err
	})
	return r.v.Data, r.v.Stat, r.ch, err
}
