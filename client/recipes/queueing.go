package recipes

import (
	"context"
	"errors"

	"github.com/corral-db/corral/client"
)

// Queueing on sequential nodes: the common core of Mutex, RWMutex and
// Election (the paper's "locks without herd effect").
//
//	1 n = create(l + "/<prefix>", EPHEMERAL|SEQUENTIAL)
//	2 C = getChildren(l, false)
//	3 if n may proceed given C (blocker), hold and exit
//	4 p = the node in C that n must wait for (blocker)
//	5 if exists(p, true) wait for the watch event
//	6 goto 2
//
// Each waiter watches one node, so a release wakes one client. After the
// watched node goes, the waiter lists again rather than assuming it now
// holds: the node it watched may have been an abandoned request, with an
// earlier holder still in place.

// blocker decides, for the sorted queue all and our own node at index
// me, whether we may proceed, and otherwise which node to wait on.
type blocker func(all []seqNode, me int) (wait string, proceed bool)

// maxRequeues bounds how often a waiter whose node vanished (deleted by
// someone else) queues again.
const maxRequeues = 10

// acquireSeq queues a node prefix<GUID>-<seq> in dir and waits until
// block lets it proceed. kinds are the prefixes of the nodes that take
// part in the queue.
func acquireSeq(ctx context.Context, c *client.Conn, o *options, dir, prefix string, kinds []string, data []byte, block blocker) (*Held, error) {
	if err := ensurePath(ctx, c, dir, o.acl); err != nil {
		return nil, err
	}
	for range maxRequeues {
		p, err := createSeq(ctx, c, o, dir, prefix, data)
		if err != nil {
			return nil, err
		}
		h, err := newHeld(ctx, c, o, p, !o.keepOnDisconnect, nil)
		if err != nil {
			o.background("abandoned "+p, func(ctx context.Context) error { return deleteOwned(ctx, c, p, nil) })
			return nil, err
		}
		err = waitTurn(ctx, c, h, dir, kinds, block)
		if err == nil {
			return h, nil
		}
		h.lose(err) // deletes the node in the background
		if !errors.Is(err, ErrNodeDeleted) {
			return nil, err
		}
	}
	return nil, ErrGaveUp
}

// waitTurn runs lines 2-6 for the node of h.
func waitTurn(ctx context.Context, c *client.Conn, h *Held, dir string, kinds []string, block blocker) error {
	name := base(h.path)
	var b backoff
	for {
		kids, err := children(ctx, c, dir)
		if err != nil {
			return err
		}
		all := sortSeq(kids, kinds...)
		me := indexOfNode(all, name)
		if me < 0 {
			// The listing follows our create in the session's order, so
			// the node was there and has been deleted since.
			return h.goneErrorOr(ErrNodeDeleted)
		}
		pred, proceed := block(all, me)
		if proceed {
			err := h.arm(ctx)
			if errors.Is(err, errNotConnected) {
				if err := b.wait(ctx); err != nil {
					return err
				}
				continue
			}
			return err
		}
		_, _, ch, err := getW(ctx, c, join(dir, pred))
		if noNode(err) {
			continue
		}
		if err != nil {
			return err
		}
		select {
		case <-ch: // deleted (or the session ended: the listing says)
		case <-h.gone:
			return h.goneError()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// goneErrorOr is the reason the node is gone if the monitor knows it,
// else def.
func (h *Held) goneErrorOr(def error) error {
	if h.isGone() {
		return h.goneError()
	}
	return def
}

// exclusive: proceed when first; otherwise wait on the node just before.
func exclusive(all []seqNode, me int) (string, bool) {
	if me == 0 {
		return "", true
	}
	return all[me-1].name, false
}
