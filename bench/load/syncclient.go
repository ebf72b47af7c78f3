package load

import (
	"context"
	"fmt"
	"time"

	"github.com/corral-db/corral/wire"
)

// The durability benchmark's clients are synchronous, as the thesis's
// were: one request outstanding, the next sent when the reply is in. They
// use conn.roundTrip, which the pipelined generator keeps for set-up; these
// are the few requests it needs beyond proto.go's.

// appendCreateMode appends a create request with the given create mode
// (OPEN_ACL_UNSAFE).
func appendCreateMode(e *wire.Encoder, xid int32, path []byte, data []byte, mode int32) {
	at := BeginFrame(e)
	AppendHeader(e, xid, wire.OpCreate)
	AppendPath(e, path)
	e.Buffer(data)
	e.ACLs(wire.OpenACLUnsafe)
	e.Int(mode)
	EndFrame(e, at)
}

// appendGetChildren appends a getChildren request without a watch.
func appendGetChildren(e *wire.Encoder, xid int32, path []byte) {
	at := BeginFrame(e)
	AppendHeader(e, xid, wire.OpGetChildren)
	AppendPath(e, path)
	e.Bool(false)
	EndFrame(e, at)
}

// Call sends one request and waits for its reply. A reply is a result
// whatever its error code; err is for a connection that failed.
//
// The benchmark's clients call it back to back, so it keeps the
// connection's deadline between calls and moves it only once it is
// within callDeadlineSlack of expiring (or past the context's): setting
// and clearing it on every call, as roundTrip does, was four runtime
// timer updates per request, CPU that the load generator takes from the
// servers it measures on a two-core machine. A call still fails if no
// reply comes for callTimeout-callDeadlineSlack.
func (c *Conn) Call(ctx context.Context, build func(e *wire.Encoder, xid int32)) (wire.Code, []byte, error) {
	now := time.Now()
	want := now.Add(callTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(want) {
		want = d
	}
	if c.callDeadline.IsZero() || c.callDeadline.After(want) || c.callDeadline.Sub(now) < callDeadlineSlack {
		c.NetConn.SetDeadline(want)
		c.callDeadline = want
	}
	h, body, err := c.exchange(build)
	if err != nil {
		return 0, nil, err
	}
	return wire.Code(h.Err), body, nil
}

const (
	callTimeout       = 30 * time.Second
	callDeadlineSlack = 20 * time.Second
)

// CreateSeq creates a persistent sequential node under prefix and returns
// the name the server gave it.
func (c *Conn) CreateSeq(ctx context.Context, prefix, data []byte) (wire.Code, string, error) {
	code, body, err := c.Call(ctx, func(e *wire.Encoder, xid int32) {
		appendCreateMode(e, xid, prefix, data, wire.ModePersistentSequential)
	})
	if err != nil || code != wire.CodeOK {
		return code, "", err
	}
	d := wire.NewDecoder(body)
	name := d.String()
	if err := d.Err(); err != nil {
		return code, "", fmt.Errorf("bench: create reply: %w", err)
	}
	return code, name, nil
}

// GetData reads a node's data (a copy).
func (c *Conn) GetData(ctx context.Context, path []byte) (wire.Code, []byte, error) {
	code, body, err := c.Call(ctx, func(e *wire.Encoder, xid int32) { AppendGetData(e, xid, path) })
	if err != nil || code != wire.CodeOK {
		return code, nil, err
	}
	d := wire.NewDecoder(body)
	data := d.Buffer()
	if err := d.Err(); err != nil {
		return code, nil, fmt.Errorf("bench: getData reply: %w", err)
	}
	return code, data, nil
}

// DeleteNode deletes a node whatever its version.
func (c *Conn) DeleteNode(ctx context.Context, path []byte) (wire.Code, error) {
	code, _, err := c.Call(ctx, func(e *wire.Encoder, xid int32) { appendDelete(e, xid, path) })
	return code, err
}

// GetChildren lists a node's children, in the server's order.
func (c *Conn) GetChildren(ctx context.Context, path []byte) (wire.Code, []string, error) {
	code, body, err := c.Call(ctx, func(e *wire.Encoder, xid int32) { appendGetChildren(e, xid, path) })
	if err != nil || code != wire.CodeOK {
		return code, nil, err
	}
	d := wire.NewDecoder(body)
	names := d.Strings()
	if err := d.Err(); err != nil {
		return code, nil, fmt.Errorf("bench: getChildren reply: %w", err)
	}
	return code, names, nil
}
