package client

import (
	"context"
	"time"

	"github.com/corral-db/corral/wire"
)

// Op is one operation of a Multi (CreateOp, DeleteOp, SetDataOp, CheckOp)
// or of a MultiRead (GetDataOp, GetChildrenOp).
type Op struct {
	m    wire.MultiOp
	path string // caller's path; mapped into the chroot when sent
	read bool
}

// CreateOp creates a node. A container or TTL mode makes the op a
// createContainer / createTTL (ttl is used only for TTL modes).
func CreateOp(path string, data []byte, acl []ACL, mode CreateMode) Op {
	return createOp(path, data, acl, mode, 0)
}

// CreateTTLOp creates a node with a TTL mode.
func CreateTTLOp(path string, data []byte, acl []ACL, mode CreateMode, ttl time.Duration) Op {
	return createOp(path, data, acl, mode, ttl)
}

func createOp(path string, data []byte, acl []ACL, mode CreateMode, ttl time.Duration) Op {
	t := wire.OpCreate
	switch {
	case mode == ModeContainer:
		t = wire.OpCreateContainer
	case mode.isTTL():
		t = wire.OpCreateTTL
	}
	o := Op{path: path}
	o.m.Type = t
	o.m.Create = wire.CreateTTLRequest{
		CreateRequest: wire.CreateRequest{Data: data, ACL: acl, Flags: int32(mode)},
		TTL:           ttl.Milliseconds(),
	}
	return o
}

// DeleteOp deletes a node if its version matches (-1: any).
func DeleteOp(path string, version int32) Op {
	o := Op{path: path}
	o.m.Type = wire.OpDelete
	o.m.Delete.Version = version
	return o
}

// SetDataOp sets a node's data if its version matches (-1: any).
func SetDataOp(path string, data []byte, version int32) Op {
	o := Op{path: path}
	o.m.Type = wire.OpSetData
	o.m.SetData = wire.SetDataRequest{Data: data, Version: version}
	return o
}

// CheckOp fails the multi unless the node's version matches.
func CheckOp(path string, version int32) Op {
	o := Op{path: path}
	o.m.Type = wire.OpCheck
	o.m.Check.Version = version
	return o
}

// GetDataOp reads a node's data in a MultiRead.
func GetDataOp(path string) Op {
	o := Op{path: path, read: true}
	o.m.Type = wire.OpGetData
	return o
}

// GetChildrenOp lists a node's children in a MultiRead.
func GetChildrenOp(path string) Op {
	o := Op{path: path, read: true}
	o.m.Type = wire.OpGetChildren
	return o
}

// OpResult is the outcome of one op of a Multi or MultiRead, in op order.
// Op is the op's type as sent (wire.OpCreate, OpCreateContainer,
// OpCreateTTL, OpDelete, OpSetData, OpCheck, OpGetData, OpGetChildren).
// Err is nil or the op's wire.Code. On success: creates set Path (and
// Stat for containers and TTL nodes, which the server answers as
// create2), SetData sets Stat, GetData sets Data and Stat, GetChildren
// sets Children.
//
// A Multi either applies every op or none. When it fails, the ops before
// the failing one have Err nil and no other field, the failing one has its
// code, and those after it wire.CodeRuntimeInconsistency.
type OpResult struct {
	Op       wire.Op
	Err      error
	Path     string
	Stat     Stat
	Data     []byte
	Children []string
}

// Multi applies ops atomically (multi, op 14). On failure it returns the
// per-op results and the first failing op's code as the error.
func (c *Conn) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	r, err := c.multiReq(wire.OpMulti, ops)
	if err != nil {
		return nil, err
	}
	return call(ctx, c, r, convMulti)
}

// MultiRead performs getData/getChildren ops in one request (multiRead,
// op 22) against one consistent state. It never fails as a whole because
// of an op: each result carries its own Err.
func (c *Conn) MultiRead(ctx context.Context, ops ...Op) ([]OpResult, error) {
	r, err := c.multiReq(wire.OpMultiRead, ops)
	if err != nil {
		return nil, err
	}
	return call(ctx, c, r, convMulti)
}

// MultiAsync is the asynchronous Multi.
func (c *Conn) MultiAsync(ops ...Op) *Future[[]OpResult] {
	r, err := c.multiReq(wire.OpMulti, ops)
	if err != nil {
		return failed[[]OpResult](err)
	}
	return async(c, r, convMulti)
}

// MultiReadAsync is the asynchronous MultiRead.
func (c *Conn) MultiReadAsync(ops ...Op) *Future[[]OpResult] {
	r, err := c.multiReq(wire.OpMultiRead, ops)
	if err != nil {
		return failed[[]OpResult](err)
	}
	return async(c, r, convMulti)
}

type multiBody struct {
	req  wire.MultiRequest
	resp wire.MultiResponse
}

func (c *Conn) multiReq(op wire.Op, ops []Op) (*request, error) {
	b := &multiBody{req: wire.MultiRequest{Ops: make([]wire.MultiOp, len(ops))}}
	for i := range ops {
		o := &ops[i]
		if o.read != (op == wire.OpMultiRead) {
			return nil, errMixedMulti
		}
		sp, err := c.serverPath(o.path)
		if err != nil {
			return nil, err
		}
		m := o.m
		switch m.Type {
		case wire.OpCreate, wire.OpCreateContainer, wire.OpCreateTTL:
			m.Create.Path = sp
		case wire.OpDelete:
			m.Delete.Path = sp
		case wire.OpSetData:
			m.SetData.Path = sp
		case wire.OpCheck:
			m.Check.Path = sp
		case wire.OpGetData, wire.OpGetChildren:
			m.Read.Path = sp
		}
		b.req.Ops[i] = m
	}
	r := c.newRequest(op)
	r.body = &b.req
	r.reply = &b.resp
	return r, nil
}

func convMulti(c *Conn, r *request) ([]OpResult, error) {
	if r.err != nil {
		return nil, r.err
	}
	b := r.reply.(*wire.MultiResponse)
	ops := r.body.(*wire.MultiRequest).Ops
	out := make([]OpResult, len(b.Results))
	for i := range b.Results {
		res := &b.Results[i]
		o := &out[i]
		if i < len(ops) {
			o.Op = ops[i].Type
		}
		switch res.Type {
		case wire.OpError:
			o.Err = codeErr(res.Err)
		case wire.OpCreate, wire.OpCreate2:
			o.Path = c.clientPath(res.Path)
			o.Stat = res.Stat
		default:
			o.Path = "" // delete, check: nothing
			o.Stat = res.Stat
			o.Data = res.Data
			o.Children = res.Children
		}
	}
	var err error
	if r.op == wire.OpMulti {
		err = codeErr(b.FirstError())
	}
	return out, err
}
