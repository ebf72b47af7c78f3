package kvclient

import (
	"context"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/kv/ring"
)

// Put coalescing follows the Gets' discipline (coalesce.go): Puts bound
// for the same replica group share a line; a Put that finds its line
// free is sent at once as a Put; Puts that arrive while it is in flight
// wait in the line's queue and leave together, when it completes, as one
// MultiPut (at most maxCoalesce puts), whose puts the group proposes
// together and answers one by one. A put is never merged with another:
// each keeps its own row, version and request id.
//
// A put whose outcome in a MultiPut is a failure Put's own path would
// retry (Unavailable, Aborted, OutOfRange: a leader change or a range
// move in between), or whose MultiPut failed as a whole, is sent again
// alone through that path, with the same request id: the group applies
// a request id once however often it arrives, so the put applies at most
// once. A server without MultiPut (Unimplemented) turns put coalescing
// off for the client.

// putLine is the state of one RG's line; its fields are guarded by
// putCoalescer.mu.
type putLine struct {
	queue []*putWaiter
}

type putCoalescer struct {
	mu    sync.Mutex
	lines map[uint32]*putLine // guarded by mu; present while taken
	// off: the server answered a MultiPut Unimplemented.
	off atomic.Bool
}

// putWaiter is a Put waiting in a queue or in a MultiPut; done is closed
// once resp, err or alone is set.
type putWaiter struct {
	waitBase
	req  *kvpb.PutRequest
	resp *kvpb.PutResponse
	err  error
	// alone: send the put again by itself (see above).
	alone bool
}

// putLineKey is the line of req, or false if it goes alone: coalescing
// off or forwarded, a row the server would refuse, outgoing metadata, or
// in a sharded cluster a row whose owner's leader is not known yet.
func (c *Client) putLineKey(ctx context.Context, req *kvpb.PutRequest) (uint32, bool) {
	if c.cfg.NoCoalesce || c.cfg.Forward || c.putCo.off.Load() {
		return 0, false
	}
	if n := len(req.GetRow()); n == 0 || n > maxRowLen {
		return 0, false
	}
	if _, ok := metadata.FromOutgoingContext(ctx); ok {
		return 0, false
	}
	sh, err := c.cluster(ctx)
	if err != nil {
		return 0, false
	}
	if sh == nil {
		return 0, true
	}
	t, err := sh.rt.Route(req.GetRow())
	if err != nil {
		return 0, false
	}
	return uint32(t.Group), true
}

// putAlone sends a Put as one call.
func (c *Client) putAlone(ctx context.Context, req *kvpb.PutRequest) (resp *kvpb.PutResponse, err error) {
	err = c.doRow(ctx, req.GetRow(), true, func(ctx context.Context, kc kvpb.KVClient) error {
		resp, err = kc.Put(ctx, req)
		return err
	})
	return resp, err
}

// putCoalesced runs a Put on line g: at once if the line is free (and
// then sends what queued meanwhile), else queued for the next MultiPut.
func (c *Client) putCoalesced(ctx context.Context, g uint32, req *kvpb.PutRequest) (*kvpb.PutResponse, error) {
	co := &c.putCo
	co.mu.Lock()
	l := co.lines[g]
	if l == nil {
		l = &putLine{}
		co.lines[g] = l
		co.mu.Unlock()
		resp, err := c.putAlone(ctx, req)
		if b := co.take(g, l); b != nil {
			go c.runPutLine(g, l, b)
		}
		return resp, err
	}
	if len(l.queue) >= maxCoalesce {
		co.mu.Unlock()
		return c.putAlone(ctx, req)
	}
	w := &putWaiter{waitBase: newWaitBase(ctx), req: req}
	l.queue = append(l.queue, w)
	co.mu.Unlock()
	if !w.await(&co.mu) {
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if w.alone {
		return c.putAlone(ctx, req)
	}
	return w.resp, w.err
}

// take is called when a call on line l completes: it returns the
// waiters to send next (those whose context has not ended, at most
// maxCoalesce), or nil and frees the line.
func (co *putCoalescer) take(g uint32, l *putLine) []*putWaiter {
	co.mu.Lock()
	defer co.mu.Unlock()
	b := drain(&l.queue)
	if len(b) == 0 {
		delete(co.lines, g)
		return nil
	}
	return b
}

// runPutLine sends batch b as one MultiPut, then whatever queued
// meanwhile, until the queue is empty and the line is freed.
func (c *Client) runPutLine(g uint32, l *putLine, b []*putWaiter) {
	for b != nil {
		c.sendPuts(g, b)
		b = c.putCo.take(g, l)
	}
}

// sendPuts sends the waiters' puts as one MultiPut to RG g's leader (the
// group's, for one RG) and answers each waiter. The call runs until the
// latest of the waiters' deadlines, and is cancelled when every waiter
// has left.
func (c *Client) sendPuts(g uint32, b []*putWaiter) {
	co := &c.putCo
	ws := make([]*waitBase, len(b))
	req := &kvpb.MultiPutRequest{Puts: make([]*kvpb.PutRequest, len(b))}
	for i, w := range b {
		ws[i] = &w.waitBase
		req.Puts[i] = w.req
	}
	ctx, cancel := callContext(&co.mu, c.cfg.RequestTimeout, ws)
	defer cancel()

	var resp *kvpb.MultiPutResponse
	call := func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.MultiPut(ctx, req)
		return err
	}
	var err error
	if sh, cerr := c.cluster(ctx); cerr != nil {
		err = cerr
	} else if sh == nil {
		err = c.do(ctx, true, call)
	} else {
		err = c.doGroup(ctx, sh.rt, ring.GroupID(g), true, call)
	}
	if status.Code(err) == codes.Unimplemented {
		co.off.Store(true)
	}
	outs := resp.GetOutcomes()
	co.mu.Lock()
	for i, w := range b {
		w.left = nil
		switch {
		case err != nil || len(outs) != len(b):
			w.alone = true
		case outs[i].GetCode() == uint32(codes.OK):
			w.resp = outs[i].GetResponse()
		default:
			o := outs[i]
			code := codes.Code(o.GetCode())
			switch code {
			case codes.Unavailable, codes.Aborted, codes.OutOfRange:
				w.alone = true
			default:
				w.err = status.Error(code, o.GetMessage())
			}
		}
		close(w.done)
	}
	co.mu.Unlock()
}
