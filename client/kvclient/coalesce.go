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

// waitBase is what a queued Get and a queued Put share: the caller's
// context, the answer's signal, and how it leaves a call in flight.
type waitBase struct {
	ctx  context.Context
	done chan struct{} // closed once the answer is set
	// left is called when the waiter gives up (its context ended); set
	// before the call is sent, under the coalescer's mutex.
	left func()
}

func newWaitBase(ctx context.Context) waitBase {
	return waitBase{ctx: ctx, done: make(chan struct{})}
}

// await waits for w's answer. If w's context ends first, w leaves (its
// call is cancelled once every waiter of it has left); await reports
// whether the answer came all the same.
func (w *waitBase) await(mu *sync.Mutex) bool {
	select {
	case <-w.done:
		return true
	case <-w.ctx.Done():
	}
	mu.Lock()
	left := w.left
	w.left = nil // the waiter leaves once; nil while still queued
	mu.Unlock()
	if left != nil {
		left()
	}
	select {
	case <-w.done: // answered meanwhile: the answer stands
		return true
	default:
		return false
	}
}

func (w *waitBase) live() bool { return w.ctx.Err() == nil }

// drain empties the queue q and returns its waiters whose context has
// not ended.
func drain[W interface{ live() bool }](q *[]W) []W {
	var b []W
	for _, w := range *q {
		if w.live() {
			b = append(b, w)
		}
	}
	clear(*q)
	*q = (*q)[:0]
	return b
}

// callContext returns the context of one call for the waiters ws: it
// runs until the latest of their deadlines (timeout from now for one
// without) and is cancelled when every one of them has left. The caller
// holds no lock; ws's left are set here, under mu.
func callContext(mu *sync.Mutex, timeout time.Duration, ws []*waitBase) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(timeout)
	var latest time.Time
	for _, w := range ws {
		d, ok := w.ctx.Deadline()
		if !ok {
			d = deadline
		}
		if d.After(latest) {
			latest = d
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), latest)
	live := len(ws)
	mu.Lock()
	for _, w := range ws {
		w.left = func() {
			mu.Lock()
			live--
			all := live == 0
			mu.Unlock()
			if all {
				cancel()
			}
		}
	}
	mu.Unlock()
	// A waiter whose context ended before its left was set leaves now.
	for _, w := range ws {
		if w.ctx.Err() != nil {
			mu.Lock()
			left := w.left
			w.left = nil
			mu.Unlock()
			if left != nil {
				left()
			}
		}
	}
	return ctx, cancel
}

// waiter is a Get waiting in a queue or in a coalesced call.
type waiter struct {
	waitBase
	row  []byte
	resp *kvpb.GetResponse
	err  error
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
	w := &waiter{waitBase: newWaitBase(ctx), row: req.GetRow()}
	l.queue = append(l.queue, w)
	co.mu.Unlock()
	if !w.await(&co.mu) {
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return w.resp, w.err
}

// take is called when a call on line l completes: it returns the
// waiters to send next (those whose context has not ended, at most
// maxCoalesce), or nil and frees the line.
func (co *coalescer) take(k lineKey, l *line) []*waiter {
	co.mu.Lock()
	defer co.mu.Unlock()
	b := drain(&l.queue)
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
	ws := make([]*waitBase, len(b))
	for i, w := range b {
		ws[i] = &w.waitBase
	}
	ctx, cancel := callContext(&c.coalesce.mu, c.cfg.RequestTimeout, ws)
	defer cancel()

	req := &kvpb.MultiGetRequest{Table: like.GetTable(), Options: like.GetOptions()}
	seen := make(map[string]bool, len(b))
	for _, w := range b {
		if !seen[string(w.row)] {
			seen[string(w.row)] = true
			req.Rows = append(req.Rows, w.row)
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
