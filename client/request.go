package client

import (
	"sync/atomic"

	"github.com/corral-db/corral/wire"
)

// request is one operation from submission to completion. It is pooled:
// a blocking call takes one, the reader completes it, the caller copies the
// result out and returns it. The records of the hot operations live inside
// it, so a getData allocates nothing but the data it returns.
type request struct {
	op   wire.Op
	xid  int32
	body wire.Record // request record after the header; nil for none
	// reply is decoded from a successful reply; nil when the op has no
	// body (or the body is ignored).
	reply wire.Record
	err   error // outcome: nil, a wire.Code, or a client sentinel

	// slot: holds one of Conn.slots until completion (internal requests
	// sent by the client itself do not).
	slot bool
	// replied: the outcome came from the server (not a local failure).
	replied bool
	// answered/held: auth bookkeeping on the reader (see link.authReply).
	answered bool
	held     bool

	// state arbitrates between a blocking waiter giving up (ctx) and the
	// completion; see wait.
	state atomic.Int32
	done  chan struct{} // cap 1: completion signal for a blocking waiter
	fut   completer     // async completion instead of done

	// after runs on the reader once the server answered, before the
	// request completes, so bookkeeping (watch registration, removal,
	// credentials) is ordered with the frames around it.
	after func(c *Conn, r *request)
	watch watchSpec

	// Inline records for the common operations.
	pw    wire.PathWatchRequest
	pr    wire.PathRequest
	cr    wire.CreateTTLRequest
	dr    wire.DeleteRequest
	sr    wire.SetDataRequest
	statR wire.StatResponse
	dataR wire.GetDataResponse
	crR   wire.CreateResponse
	cr2R  wire.Create2Response
	chR   wire.GetChildrenResponse
	ch2R  wire.GetChildren2Response
}

const (
	reqWaiting int32 = iota
	reqAbandoned
	reqDone
)

// completer is an asynchronous request's sink; it runs on the goroutine
// that completes the request (normally the reader) and must not block.
type completer interface {
	complete(c *Conn, r *request)
}

// newRequest takes a request from the pool.
func (c *Conn) newRequest(op wire.Op) *request {
	r := c.pool.Get().(*request)
	r.op = op
	r.slot = true
	return r
}

// recycle returns a completed request to the pool. Requests abandoned by
// their waiter are never recycled: the reader may still hold them.
func (c *Conn) recycle(r *request) {
	done := r.done
	*r = request{done: done}
	c.pool.Put(r)
}

func newPooledRequest() any { return &request{done: make(chan struct{}, 1)} }
