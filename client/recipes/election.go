package recipes

import (
	"bytes"
	"context"
	"errors"

	"github.com/corral-db/corral/client"
)

// Election is leader election on the lock without herd effect (§2.4):
// every candidate queues an ephemeral sequential node "n-<GUID>-<seq>"
// under dir, with its data (an address, say); the candidate with the
// lowest node leads, and each other candidate watches only the node just
// before its own, so a leader's departure wakes one successor. The
// leader's node is what observers read to find it.
//
// Leadership is a Held: it ends when Lost closes (by default also when
// the connection drops; see KeepOnDisconnect), and the leader must stop
// acting as one at that moment. At most one candidate holds an unlost
// leadership at a time, as long as clocks run at similar speeds: a
// leader whose connection drops gives up after 2/3 of the session
// timeout without hearing from the server, before the server can
// expire its session (a full timeout) and let a successor in.
type Election struct {
	c   *client.Conn
	dir string
	o   *options
}

const candidatePrefix = "n-"

// Leader identifies the current leader: its node and the data it
// campaigned with. The zero Leader means no candidate is in the
// election.
type Leader struct {
	Node string
	Data []byte
}

// NewElection returns the election held under dir.
func NewElection(c *client.Conn, dir string, opts ...Option) *Election {
	return &Election{c: c, dir: dir, o: buildOptions(opts)}
}

// Campaign joins the election with data and waits until this candidate
// leads (or ctx ends; the candidacy is then withdrawn). Resign with
// Held.Release.
func (e *Election) Campaign(ctx context.Context, data []byte) (*Held, error) {
	return acquireSeq(ctx, e.c, e.o, e.dir, candidatePrefix, []string{candidatePrefix}, data, exclusive)
}

// Run campaigns, then calls lead with a context that is canceled when the
// leadership is lost or ctx ends, and resigns when lead returns. It
// returns lead's error, or the campaign's.
func (e *Election) Run(ctx context.Context, data []byte, lead func(ctx context.Context) error) error {
	h, err := e.Campaign(ctx, data)
	if err != nil {
		return err
	}
	lctx, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	go func() {
		select {
		case <-h.Lost():
			cancel()
		case <-stop:
		}
	}()
	err = lead(lctx)
	close(stop)
	cancel()
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), e.c.SessionTimeout())
	defer rcancel()
	_ = h.Release(rctx) // continues in the background if slow
	return err
}

// Leader returns the current leader, or ErrNoLeader.
func (e *Election) Leader(ctx context.Context) (Leader, error) {
	l, _, err := e.leader(ctx, false)
	if err == nil && l.Node == "" {
		return l, ErrNoLeader
	}
	return l, err
}

// leader reads the lowest candidate, with a child watch on dir if watch.
func (e *Election) leader(ctx context.Context, watch bool) (Leader, <-chan client.Event, error) {
	for range maxRequeues {
		var kids []string
		var ch <-chan client.Event
		var err error
		if watch {
			kids, ch, err = childrenW(ctx, e.c, e.dir)
		} else {
			kids, err = children(ctx, e.c, e.dir)
		}
		if noNode(err) {
			return Leader{}, nil, nil // no election yet
		}
		if err != nil {
			return Leader{}, nil, err
		}
		all := sortSeq(kids, candidatePrefix)
		if len(all) == 0 {
			return Leader{}, ch, nil
		}
		data, _, err := get(ctx, e.c, join(e.dir, all[0].name))
		if noNode(err) {
			continue // the leader left between the two reads
		}
		if err != nil {
			return Leader{}, nil, err
		}
		return Leader{Node: all[0].name, Data: data}, ch, nil
	}
	return Leader{}, nil, ErrGaveUp
}

// Observe reports the leader whenever it changes, starting with the
// current one (the zero Leader while there is none). It watches the
// candidates' directory, so every observer wakes at each change of
// candidates; a slow reader only misses intermediate leaders, never the
// latest. The channel is closed when ctx ends or the session is over.
func (e *Election) Observe(ctx context.Context) <-chan Leader {
	out := make(chan Leader)
	go func() {
		defer close(out)
		first := true
		var last Leader
		var b backoff
		for {
			l, ch, err := e.leader(ctx, true)
			if err != nil {
				if ctx.Err() != nil || sessionOver(err) {
					return
				}
				if errors.Is(err, ErrGaveUp) || connLoss(err) {
					if b.wait(ctx) != nil {
						return
					}
					continue
				}
				e.o.logger.Warn("recipes: election observer", "dir", e.dir, "err", err)
				if b.wait(ctx) != nil {
					return
				}
				continue
			}
			b = backoff{}
			if first || l.Node != last.Node || !bytes.Equal(l.Data, last.Data) {
				select {
				case out <- l:
				case <-ctx.Done():
					return
				}
				first, last = false, l
			}
			if ch == nil { // no directory yet: wait for it
				var st *client.Stat
				st, ch, err = existsW(ctx, e.c, e.dir)
				if err != nil {
					continue
				}
				if st != nil {
					continue
				}
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
