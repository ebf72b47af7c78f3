package recipes

import (
	"context"
	"slices"

	"github.com/corral-db/corral/client"
)

// Group is the paper's group membership (§2.4): a member is an ephemeral
// child of the group node dir, named after the process when it has a
// unique name, or created with the SEQUENTIAL flag otherwise, and holding
// whatever the process wants to publish (an address). A member that
// fails disappears with its session; anyone lists the children to know
// the group, with a watch to hear of changes.
//
// Membership is a Held that is lost only when the node goes (session
// expiry, Close, deletion): a dropped connection does not end it, since
// the node stays until the session expires.
type Group struct {
	c   *client.Conn
	dir string
	o   *options
}

// Member is one member of a group.
type Member struct {
	Name string
	Data []byte
}

const memberPrefix = "member-"

// NewGroup returns the group represented by the node dir.
func NewGroup(c *client.Conn, dir string, opts ...Option) *Group {
	return &Group{c: c, dir: dir, o: buildOptions(opts)}
}

// Join adds this process to the group as dir/name, or, with name "", as
// dir/member-<GUID>-<seq>. A name another session holds fails with
// wire.CodeNodeExists. Leave with Held.Release.
func (g *Group) Join(ctx context.Context, name string, data []byte) (*Held, error) {
	if err := ensurePath(ctx, g.c, g.dir, g.o.acl); err != nil {
		return nil, err
	}
	var p string
	var err error
	if name == "" {
		p, err = createSeq(ctx, g.c, g.o, g.dir, memberPrefix, data)
	} else {
		p, err = g.createNamed(ctx, join(g.dir, name), data)
	}
	if err != nil {
		return nil, err
	}
	h, err := newHeld(ctx, g.c, g.o, p, false, nil)
	if err != nil {
		g.o.background("abandoned "+p, func(ctx context.Context) error { return deleteOwned(ctx, g.c, p, nil) })
		return nil, err
	}
	if err := armOwned(ctx, g.c, h, nil); err != nil {
		h.lose(err)
		return nil, err
	}
	return h, nil
}

// createNamed creates the ephemeral p. After a connection loss the node,
// if it exists, is ours when this session owns it.
func (g *Group) createNamed(ctx context.Context, p string, data []byte) (string, error) {
	c := g.c
	var b backoff
	unsure := false
	for {
		f := c.CreateAsync(p, data, g.o.acl, client.ModeEphemeral)
		select {
		case <-f.Done():
		case <-ctx.Done():
			g.o.background("abandoned "+p, func(bctx context.Context) error {
				select {
				case <-f.Done():
				case <-bctx.Done():
					return bctx.Err()
				}
				return deleteOwned(bctx, c, p, nil)
			})
			return "", ctx.Err()
		}
		_, err := f.Result()
		switch {
		case err == nil:
			return p, nil
		case nodeExists(err) && unsure:
			st, err2 := exists(ctx, c, p)
			if err2 != nil {
				return "", err2
			}
			if st != nil && st.EphemeralOwner == c.SessionID() {
				return p, nil
			}
			if st == nil {
				continue
			}
			return "", err
		case connLoss(err):
			unsure = true
			if err := b.wait(ctx); err != nil {
				return "", err
			}
		default:
			return "", err
		}
	}
}

// Members lists the group (sorted by name) and returns a watch that fires
// at the next change of membership; read again then, with a new watch.
func (g *Group) Members(ctx context.Context) ([]Member, <-chan client.Event, error) {
	var b backoff
	for {
		ms, ch, err := g.members(ctx)
		if !connLoss(err) {
			return ms, ch, err
		}
		if err := b.wait(ctx); err != nil {
			return nil, nil, err
		}
	}
}

func (g *Group) members(ctx context.Context) ([]Member, <-chan client.Event, error) {
	kids, ch, err := childrenW(ctx, g.c, g.dir)
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(kids)
	// One pipelined read per member.
	futs := make([]*client.Future[client.GetResult], len(kids))
	for i, k := range kids {
		futs[i] = g.c.GetAsync(join(g.dir, k))
	}
	out := make([]Member, 0, len(kids))
	for i, f := range futs {
		r, err := f.Wait(ctx)
		switch {
		case noNode(err):
			continue // left meanwhile; the watch has fired
		case err != nil:
			return nil, nil, err
		}
		out = append(out, Member{Name: kids[i], Data: r.Data})
	}
	return out, ch, nil
}
