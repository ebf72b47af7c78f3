package recipes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

// DoubleBarrier is the paper's double barrier (§2.4), with the steps of
// ZooKeeper's recipe. Processes register as children of the barrier node
// b on entry and unregister on leaving; they start computing once `size`
// processes have entered, and leave only when all have finished.
//
//	Enter
//	1 n = b + "/p-" + name
//	2 exists(b + "/ready", watch=true)
//	3 create(n, EPHEMERAL)
//	4 L = getChildren(b, false)
//	5 if fewer than size process nodes in L, wait for the watch (ready)
//	6 else create(b + "/ready")
//	Leave
//	1 L = process nodes of getChildren(b, false)
//	2 if L is empty, exit
//	3 if n is the only node in L, delete(n) and exit
//	4 if n is the lowest node in L, wait on the highest node in L
//	5 else delete(n) if it still exists and wait on the lowest node in L
//	6 goto 1
//
// To enter, a process watches for the ready node that whoever brings the
// count to size creates. To leave, a process watches one node, and only
// the lowest waits for everyone else: it deletes its own node last, so
// every other process, waiting on it, wakes once and finds the barrier
// empty.
//
// Process nodes are ephemeral: a process that dies counts as having
// left. A barrier node serves one round: ready stays once created, so
// use a fresh b (say, with a round number) for the next round.
type DoubleBarrier struct {
	c    *client.Conn
	dir  string
	name string
	size int
	o    *options
}

const processPrefix = "p-"

// NewDoubleBarrier returns this process's side of the barrier dir for
// size processes. name identifies the process among them (unique per
// barrier; "" picks a GUID).
func NewDoubleBarrier(c *client.Conn, dir, name string, size int, opts ...Option) *DoubleBarrier {
	if name == "" {
		name = newGUID()
	}
	return &DoubleBarrier{c: c, dir: dir, name: processPrefix + name, size: size, o: buildOptions(opts)}
}

func (b *DoubleBarrier) node() string      { return join(b.dir, b.name) }
func (b *DoubleBarrier) readyPath() string { return join(b.dir, "ready") }

// Enter registers this process and waits until size processes have. If
// ctx ends first the registration is withdrawn.
func (b *DoubleBarrier) Enter(ctx context.Context) error {
	c := b.c
	if err := ensurePath(ctx, c, b.dir, b.o.acl); err != nil {
		return err
	}
	st, ch, err := existsW(ctx, c, b.readyPath())
	if err != nil {
		return err
	}
	if err := b.register(ctx); err != nil {
		return err
	}
	if st != nil {
		return nil // already released: a late process passes
	}
	for {
		kids, err := children(ctx, c, b.dir)
		if err != nil {
			return b.withdraw(ctx, err)
		}
		if countPrefix(kids, processPrefix) >= b.size {
			_, err := retry(ctx, func(ctx context.Context) (string, error) {
				return c.Create(ctx, b.readyPath(), nil, b.o.acl, client.ModePersistent)
			})
			if err != nil && !nodeExists(err) {
				return b.withdraw(ctx, err)
			}
			return nil
		}
		select {
		case ev := <-ch:
			if ev.Type == client.EventNodeCreated {
				return nil
			}
			// Not the creation (the session ended, say): look again.
			st, ch, err = existsW(ctx, c, b.readyPath())
			if err != nil {
				return b.withdraw(ctx, err)
			}
			if st != nil {
				return nil
			}
		case <-ctx.Done():
			return b.withdraw(ctx, ctx.Err())
		}
	}
}

// register creates this process's ephemeral node. After a connection loss
// a node owned by this session is the one the lost create made.
func (b *DoubleBarrier) register(ctx context.Context) error {
	c := b.c
	var bo backoff
	for {
		_, err := c.Create(ctx, b.node(), nil, b.o.acl, client.ModeEphemeral)
		switch {
		case err == nil:
			return nil
		case nodeExists(err):
			st, err := exists(ctx, c, b.node())
			if err != nil {
				return err
			}
			if st == nil {
				continue
			}
			if st.EphemeralOwner == c.SessionID() {
				return nil
			}
			return b.withdraw(ctx, errNameTaken(b.name))
		case connLoss(err):
			if err := bo.wait(ctx); err != nil {
				return b.withdraw(ctx, err)
			}
		default:
			if ctx.Err() != nil {
				return b.withdraw(ctx, err)
			}
			return err
		}
	}
}

// withdraw deletes this process's node in the background and returns
// err.
func (b *DoubleBarrier) withdraw(_ context.Context, err error) error {
	c, p := b.c, b.node()
	b.o.background("withdraw from barrier "+p, func(ctx context.Context) error { return deleteOwned(ctx, c, p, nil) })
	return err
}

// Leave unregisters this process and waits until every process has left.
func (b *DoubleBarrier) Leave(ctx context.Context) error {
	c := b.c
	for {
		kids, err := children(ctx, c, b.dir)
		if err != nil {
			return err
		}
		var ps []string
		for _, k := range kids {
			if strings.HasPrefix(k, processPrefix) {
				ps = append(ps, k)
			}
		}
		slices.Sort(ps)
		if len(ps) == 0 {
			return nil
		}
		mine := slices.Contains(ps, b.name)
		var wait string
		switch {
		case mine && len(ps) == 1:
			return deleteOwned(ctx, c, b.node(), nil)
		case mine && ps[0] == b.name:
			wait = ps[len(ps)-1]
		default:
			if mine {
				if err := deleteOwned(ctx, c, b.node(), nil); err != nil {
					return err
				}
				ps = slices.DeleteFunc(ps, func(s string) bool { return s == b.name })
			}
			wait = ps[0]
		}
		_, _, ch, err := getW(ctx, c, join(b.dir, wait))
		if noNode(err) {
			continue
		}
		if err != nil {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func countPrefix(kids []string, prefix string) int {
	n := 0
	for _, k := range kids {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

func errNameTaken(name string) error {
	return fmt.Errorf("recipes: barrier process %q is another session's: %w", name, wire.CodeNodeExists)
}
