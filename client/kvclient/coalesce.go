package kvclient

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	kvpb "github.com/corral-db/corral/api/kv/v1"
)

// maxCoalesce bounds the Gets waiting on one line, and so the rows of one
// coalesced MultiGet (the server takes up to 1000). A Get that finds the
// queue full is sent alone at once.
const maxCoalesce = 256

// maxRowLen is the server's longest row key (kv.MaxRowLen). A Get of an
// empty or longer row is refused by the server; it is sent alone, so
// that its error is its own and not its batch's.
const maxRowLen = 4 << 10

// Coalescing: Gets of the same table with the same read options, bound
// for the same replica group, share a line. A Get that finds its line
// free takes it and is sent at once, alone; Gets that arrive while the
// line is taken wait in its queue, and when the call in flight completes
// they leave together as one MultiGet, sent through the path a MultiGet
// takes (do, or multiGetSharded with its routing and retries). The line
// stays taken while its queue has Gets, and is freed when a call
// completes with none waiting. There is no timer: an idle client sends a
// Get as it would without coalescing.

// lineKey names a line: a table, read options (deterministically
// marshalled) and a group (0 for a single replica group).
type lineKey struct {
	table string
	opts  string
	group uint32
}

// line is the state of one lineKey; its fields are guarded by
// coalescer.mu.
type line struct {
	busy  bool
	queue []*waiter
}

type coalescer struct {
	mu    sync.Mutex
	lines map[lineKey]*line // guarded by mu; a line is deleted when freed
}

// waiter is a Get waiting in a queue or in a coalesced call.
type waiter struct {
	ctx  context.Context
	row  []byte
	done chan struct{} // closed once resp or err is set
	resp *kvpb.GetResponse
	err  error
	// left is called when the waiter gives up (its context ended); set
	// before the call is sent, under coalescer.mu.
	left func()
}

// coalesceKey is the line for req, or false if req goes alone: a
// row the server would refuse, a context carrying outgoing metadata
// (which a shared call would not carry), or, in a sharded cluster, a row
// whose owner's leader is not known yet.
func (c *Client) coalesceKey(ctx context.Context, req *kvpb.GetRequest) (lineKey, bool) {
	if c.cfg.NoCoalesce || c.cfg.Forward {
		return lineKey{}, false
	}
	if n := len(req.GetRow()); n == 0 || n > maxRowLen {
		return lineKey{}, false
	}
	if _, ok := metadata.FromOutgoingContext(ctx); ok {
		return lineKey{}, false
	}
	k := lineKey{table: req.GetTable()}
	if o := req.GetOptions(); o != nil {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(o)
		if err != nil {
			return lineKey{}, false
		}
		k.opts = string(b)
	}
	sh, err := c.cluster(ctx)
	if err != nil {
		return lineKey{}, false
	}
	if sh != nil {
		t, err := sh.rt.Route(req.GetRow())
		if err != nil {
			return lineKey{}, false
		}
		k.group = uint32(t.Group)
	}
	return k, true
}

// getCoalesced runs a Get on line k: at once if the line is free (and
// then sends what queued meanwhile), else queued for the next MultiGet.
func (c *Client) getCoalesced(ctx context.Context, k lineKey, req *kvpb.GetRequest) (*kvpb.GetResponse, error) {
	co := &c.coalesce
	co.mu.Lock()
	l := co.lines[k]
	if l == nil {
		l = &line{}
		co.lines[k] = l
	}
	if !l.busy {
		l.busy = true
		co.mu.Unlock()
		resp, err := c.getAlone(ctx, req)
		if b := co.take(k, l); b != nil {
			go c.runLine(k, l, req, b)
		}
		return resp, err
	}
	if len(l.queue) >= maxCoalesce {
		co.mu.Unlock()
		return c.getAlone(ctx, req)
	}
	w := &waiter{ctx: ctx, row: req.GetRow(), done: make(chan struct{})}
	l.queue = append(l.queue, w)
	co.mu.Unlock()

	select {
	case <-w.done:
		return w.resp, w.err
	case <-ctx.Done():
	}
	co.mu.Lock()
	left := w.left
	w.left = nil // the waiter leaves once; nil while still queued
	co.mu.Unlock()
	if left != nil {
		left()
	}
	select {
	case <-w.done: // answered meanwhile: the answer stands
		return w.resp, w.err
	default:
	}
	return nil, status.FromContextError(ctx.Err()).Err()
}

// take is called when a call on line l completes: it returns the
// waiters to send next (those whose context has not ended, at most
// maxCoalesce), or nil and frees the line.
func (co *coalescer) take(k lineKey, l *line) []*waiter {
	co.mu.Lock()
	defer co.mu.Unlock()
	var b []*waiter
	for _, w := range l.queue {
		if w.ctx.Err() == nil {
			b = append(b, w)
		}
	}
	clear(l.queue)
	l.queue = l.queue[:0]
	if len(b) == 0 {
		l.busy = false
		delete(co.lines, k)
		return nil
	}
	return b
}

// runLine sends batch b as one MultiGet, then whatever queued meanwhile,
// until the queue is empty and the line is freed.
func (c *Client) runLine(k lineKey, l *line, req *kvpb.GetRequest, b []*waiter) {
	for b != nil {
		c.sendBatch(req, b)
		b = c.coalesce.take(k, l)
	}
}

// sendBatch reads the waiters' rows with one MultiGet (like is a Get of
// the line, for its table and options) and answers each waiter. The call
// runs until the latest of the waiters' deadlines, and is cancelled when
// every waiter has left.
func (c *Client) sendBatch(like *kvpb.GetRequest, b []*waiter) {
	deadline := time.Now().Add(c.cfg.RequestTimeout)
	var latest time.Time
	for _, w := range b {
		d, ok := w.ctx.Deadline()
		if !ok {
			d = deadline
		}
		if d.After(latest) {
			latest = d
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), latest)
	defer cancel()

	req := &kvpb.MultiGetRequest{Table: like.GetTable(), Options: like.GetOptions()}
	seen := make(map[string]bool, len(b))
	live := len(b)
	c.coalesce.mu.Lock()
	for _, w := range b {
		w.left = func() {
			c.coalesce.mu.Lock()
			live--
			all := live == 0
			c.coalesce.mu.Unlock()
			if all {
				cancel()
			}
		}
		if !seen[string(w.row)] {
			seen[string(w.row)] = true
			req.Rows = append(req.Rows, w.row)
		}
	}
	c.coalesce.mu.Unlock()
	// A waiter whose context ended before its left was set leaves now.
	for _, w := range b {
		if w.ctx.Err() != nil {
			c.coalesce.mu.Lock()
			left := w.left
			w.left = nil
			c.coalesce.mu.Unlock()
			if left != nil {
				left()
			}
		}
	}

	resp, err := c.MultiGet(ctx, req)
	found := make(map[string]*kvpb.Row, len(resp.GetRows()))
	for _, r := range resp.GetRows() {
		found[string(r.GetKey())] = r
	}
	given := make(map[string]bool, len(found))
	c.coalesce.mu.Lock()
	for _, w := range b {
		w.left = nil
		switch r, ok := found[string(w.row)]; {
		case err != nil:
			w.err = err
		case ok && given[string(w.row)]:
			// A second Get of the row gets its own copy of the cells.
			w.resp = &kvpb.GetResponse{Cells: proto.Clone(r).(*kvpb.Row).GetCells()}
		case ok:
			given[string(w.row)] = true
			w.resp = &kvpb.GetResponse{Cells: r.GetCells()}
		default:
			w.err = status.Error(codes.NotFound, fmt.Sprintf("row %q of table %q: not found", w.row, req.GetTable()))
		}
		close(w.done)
	}
	c.coalesce.mu.Unlock()
}
