package recipes

import (
	"context"

	"github.com/corral-db/corral/client"
)

// Rendezvous is the paper's rendezvous (§2.4): the process that launches a
// master and its workers creates a node z_r and passes its path to all
// of them. The master fills z_r in with how to reach it; a worker reads
// z_r with a watch and, if it is not filled in yet, waits for the watch.
// If z_r is ephemeral, master and workers can watch it to clean up when
// the launching client ends.
type Rendezvous struct {
	c    *client.Conn
	path string
	o    *options
}

// NewRendezvous returns the rendezvous at the node p.
func NewRendezvous(c *client.Conn, p string, opts ...Option) *Rendezvous {
	return &Rendezvous{c: c, path: p, o: buildOptions(opts)}
}

// Create makes the empty rendezvous node (ephemeral: it goes with this
// session). An existing node is left as it is.
func (r *Rendezvous) Create(ctx context.Context, ephemeral bool) error {
	mode := client.ModePersistent
	if ephemeral {
		mode = client.ModeEphemeral
	}
	_, err := retry(ctx, func(ctx context.Context) (string, error) {
		return r.c.Create(ctx, r.path, nil, r.o.acl, mode)
	})
	if nodeExists(err) {
		return nil // ours after a lost reply, or made by someone else: same thing
	}
	return err
}

// Publish fills the rendezvous in (the master's side). info must not be
// empty: empty means "not filled in". Publishing again replaces it, and
// waiting workers' watches fire.
func (r *Rendezvous) Publish(ctx context.Context, info []byte) error {
	if len(info) == 0 {
		return ErrEmptyInfo
	}
	_, err := retry(ctx, func(ctx context.Context) (client.Stat, error) {
		return r.c.Set(ctx, r.path, info, -1)
	})
	return err
}

// Await waits until the rendezvous is filled in and returns what the
// master published, with a watch on the node: it fires when the node is
// changed or deleted (the launcher ended, for an ephemeral node).
// If the node does not exist yet, Await waits for it too.
func (r *Rendezvous) Await(ctx context.Context) ([]byte, <-chan client.Event, error) {
	for {
		data, _, ch, err := getW(ctx, r.c, r.path)
		switch {
		case noNode(err):
			st, ech, err := existsW(ctx, r.c, r.path)
			if err != nil {
				return nil, nil, err
			}
			if st != nil {
				continue
			}
			ch = ech
		case err != nil:
			return nil, nil, err
		case len(data) > 0:
			return data, ch, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}
