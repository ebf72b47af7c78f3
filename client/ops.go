package client

import (
	"context"
	"errors"
	"time"

	"github.com/corral-db/corral/wire"
)

// Tree operations. Each has a blocking form, which takes a context, and
// most an Async form returning a Future; both share the request builder
// and the conversion of the completed request.
//
// Context: if ctx ends before the reply arrives the call returns
// ctx.Err(). A request not yet written to a server is then dropped; one
// already written may still execute (its reply is discarded), so treat
// a context error on a write like ErrConnectionLoss.

// GetResult is the value of a GetAsync future.
type GetResult struct {
	Data []byte
	Stat Stat
}

// CreateResult is the value of a Create2Async future.
type CreateResult struct {
	Path string
	Stat Stat
}

// ChildrenResult is the value of a Children2Async future.
type ChildrenResult struct {
	Children []string
	Stat     Stat
}

// ACLResult is the value of a GetACLAsync future.
type ACLResult struct {
	ACL  []ACL
	Stat Stat
}

// ---- request builders ----

func (c *Conn) pathWatchReq(op wire.Op, path string, kind watchKind) (*request, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	r := c.newRequest(op)
	r.pw = wire.PathWatchRequest{Path: sp, Watch: kind != wkNone}
	r.body = &r.pw
	switch op {
	case wire.OpExists:
		r.reply = &r.statR
	case wire.OpGetData:
		r.reply = &r.dataR
	case wire.OpGetChildren:
		r.reply = &r.chR
	case wire.OpGetChildren2:
		r.reply = &r.ch2R
	}
	if kind != wkNone {
		r.watch = watchSpec{kind: kind, path: sp, ch: make(chan Event, 1)}
		r.after = registerWatch
	}
	return r, nil
}

func (c *Conn) pathReq(op wire.Op, path string) (*request, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	r := c.newRequest(op)
	r.pr = wire.PathRequest{Path: sp}
	r.body = &r.pr
	return r, nil
}

// createReq builds create (1), create2 (15), createContainer (19) or
// createTTL (21). A container mode always uses createContainer, as the
// Java client does; TTL modes need createTTL and the other modes forbid
// it.
func (c *Conn) createReq(op wire.Op, path string, data []byte, acl []ACL, mode CreateMode, ttl time.Duration) (*request, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	switch {
	case mode == ModeContainer:
		op = wire.OpCreateContainer
	case op == wire.OpCreateTTL && !mode.isTTL(), op != wire.OpCreateTTL && mode.isTTL():
		return nil, errBadMode
	}
	r := c.newRequest(op)
	r.cr = wire.CreateTTLRequest{
		CreateRequest: wire.CreateRequest{Path: sp, Data: data, ACL: acl, Flags: int32(mode)},
		TTL:           ttl.Milliseconds(),
	}
	if op == wire.OpCreateTTL {
		r.body = &r.cr
	} else {
		r.body = &r.cr.CreateRequest
	}
	if op == wire.OpCreate {
		r.reply = &r.crR
	} else {
		r.reply = &r.cr2R
	}
	return r, nil
}

func (c *Conn) deleteReq(path string, version int32) (*request, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	r := c.newRequest(wire.OpDelete)
	r.dr = wire.DeleteRequest{Path: sp, Version: version}
	r.body = &r.dr
	return r, nil
}

func (c *Conn) setReq(path string, data []byte, version int32) (*request, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	r := c.newRequest(wire.OpSetData)
	r.sr = wire.SetDataRequest{Path: sp, Data: data, Version: version}
	r.body = &r.sr
	r.reply = &r.statR
	return r, nil
}

// checkReq sends check as a one-op multi. ZooKeeper 3.9 implements check
// (op 13) only inside a multi: a standalone one is answered
// wire.CodeUnimplemented and the connection is closed.
func (c *Conn) checkReq(path string, version int32) (*request, error) {
	return c.multiReq(wire.OpMulti, []Op{CheckOp(path, version)})
}

func (c *Conn) getACLReq(path string) (*request, error) {
	r, err := c.pathReq(wire.OpGetACL, path)
	if err != nil {
		return nil, err
	}
	r.reply = &wire.GetACLResponse{}
	return r, nil
}

func (c *Conn) setACLReq(path string, acl []ACL, version int32) (*request, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	r := c.newRequest(wire.OpSetACL)
	r.body = &wire.SetACLRequest{Path: sp, ACL: acl, Version: version}
	r.reply = &r.statR
	return r, nil
}

func (c *Conn) syncReq(path string) (*request, error) {
	r, err := c.pathReq(wire.OpSync, path)
	if err != nil {
		return nil, err
	}
	r.reply = &r.crR // SyncResponse has CreateResponse's layout: one path
	return r, nil
}

// ---- conversions from a completed request ----

func convErr(_ *Conn, r *request) (struct{}, error) { return struct{}{}, r.err }

func convCheck(c *Conn, r *request) (struct{}, error) {
	_, err := convMulti(c, r)
	return struct{}{}, err
}

func convStat(_ *Conn, r *request) (Stat, error) {
	if r.err != nil {
		return Stat{}, r.err
	}
	return r.statR.Stat, nil
}

func convExists(_ *Conn, r *request) (*Stat, error) {
	if errors.Is(r.err, wire.CodeNoNode) {
		return nil, nil
	}
	if r.err != nil {
		return nil, r.err
	}
	st := r.statR.Stat
	return &st, nil
}

func convGet(_ *Conn, r *request) (GetResult, error) {
	if r.err != nil {
		return GetResult{}, r.err
	}
	return GetResult{Data: r.dataR.Data, Stat: r.dataR.Stat}, nil
}

func convCreate(c *Conn, r *request) (string, error) {
	if r.err != nil {
		return "", r.err
	}
	if r.op == wire.OpCreate {
		return c.clientPath(r.crR.Path), nil
	}
	return c.clientPath(r.cr2R.Path), nil
}

func convCreate2(c *Conn, r *request) (CreateResult, error) {
	if r.err != nil {
		return CreateResult{}, r.err
	}
	return CreateResult{Path: c.clientPath(r.cr2R.Path), Stat: r.cr2R.Stat}, nil
}

func convChildren(_ *Conn, r *request) ([]string, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.chR.Children, nil
}

func convChildren2(_ *Conn, r *request) (ChildrenResult, error) {
	if r.err != nil {
		return ChildrenResult{}, r.err
	}
	return ChildrenResult{Children: r.ch2R.Children, Stat: r.ch2R.Stat}, nil
}

func convPath(c *Conn, r *request) (string, error) {
	if r.err != nil {
		return "", r.err
	}
	return c.clientPath(r.crR.Path), nil
}

func convACL(_ *Conn, r *request) (ACLResult, error) {
	if r.err != nil {
		return ACLResult{}, r.err
	}
	a := r.reply.(*wire.GetACLResponse)
	return ACLResult{ACL: a.ACL, Stat: a.Stat}, nil
}

// watched pairs a result with the watch channel the read set.
type watched[T any] struct {
	v  T
	ch <-chan Event
}

func withWatch[T any](conv func(*Conn, *request) (T, error)) func(*Conn, *request) (watched[T], error) {
	return func(c *Conn, r *request) (watched[T], error) {
		v, err := conv(c, r)
		if err != nil {
			return watched[T]{}, err
		}
		return watched[T]{v, r.watch.ch}, nil
	}
}

var (
	convExistsW    = withWatch(convExists)
	convGetW       = withWatch(convGet)
	convChildrenW  = withWatch(convChildren)
	convChildren2W = withWatch(convChildren2)
)

// ---- blocking calls ----

// Create makes a node and returns its path (with the sequence suffix for
// sequential modes). ModeContainer is sent as createContainer; TTL modes
// need CreateTTL.
func (c *Conn) Create(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode) (string, error) {
	r, err := c.createReq(wire.OpCreate, path, data, acl, mode, 0)
	if err != nil {
		return "", err
	}
	return call(ctx, c, r, convCreate)
}

// Create2 is Create that also returns the new node's Stat.
func (c *Conn) Create2(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode) (string, Stat, error) {
	r, err := c.createReq(wire.OpCreate2, path, data, acl, mode, 0)
	if err != nil {
		return "", Stat{}, err
	}
	res, err := call(ctx, c, r, convCreate2)
	return res.Path, res.Stat, err
}

// CreateTTL makes a node with a time to live (mode ModePersistentWithTTL
// or ModePersistentSequentialWithTTL): the server deletes it once it has
// had no children and no change for ttl. ZooKeeper answers
// wire.CodeUnimplemented unless extendedTypesEnabled is set.
func (c *Conn) CreateTTL(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode, ttl time.Duration) (string, Stat, error) {
	r, err := c.createReq(wire.OpCreateTTL, path, data, acl, mode, ttl)
	if err != nil {
		return "", Stat{}, err
	}
	res, err := call(ctx, c, r, convCreate2)
	return res.Path, res.Stat, err
}

// CreateContainer makes a container node, which the server deletes once
// it has had children and has none left.
func (c *Conn) CreateContainer(ctx context.Context, path string, data []byte, acl []ACL) (string, Stat, error) {
	r, err := c.createReq(wire.OpCreateContainer, path, data, acl, ModeContainer, 0)
	if err != nil {
		return "", Stat{}, err
	}
	res, err := call(ctx, c, r, convCreate2)
	return res.Path, res.Stat, err
}

// Delete removes a node if its version matches (-1: any version).
func (c *Conn) Delete(ctx context.Context, path string, version int32) error {
	r, err := c.deleteReq(path, version)
	if err != nil {
		return err
	}
	_, err = call(ctx, c, r, convErr)
	return err
}

// Exists returns the node's Stat, or nil if there is no such node.
func (c *Conn) Exists(ctx context.Context, path string) (*Stat, error) {
	r, err := c.pathWatchReq(wire.OpExists, path, wkNone)
	if err != nil {
		return nil, err
	}
	return call(ctx, c, r, convExists)
}

// ExistsW is Exists that also sets a one-shot watch, whether or not the
// node exists: the channel receives NodeCreated, NodeDeleted or
// NodeDataChanged, then is closed.
func (c *Conn) ExistsW(ctx context.Context, path string) (*Stat, <-chan Event, error) {
	r, err := c.pathWatchReq(wire.OpExists, path, wkExists)
	if err != nil {
		return nil, nil, err
	}
	res, err := call(ctx, c, r, convExistsW)
	return res.v, res.ch, err
}

// Get returns a node's data and Stat.
func (c *Conn) Get(ctx context.Context, path string) ([]byte, Stat, error) {
	r, err := c.pathWatchReq(wire.OpGetData, path, wkNone)
	if err != nil {
		return nil, Stat{}, err
	}
	res, err := call(ctx, c, r, convGet)
	return res.Data, res.Stat, err
}

// GetW is Get that also sets a one-shot data watch (NodeDataChanged or
// NodeDeleted). No watch is set if the node does not exist.
func (c *Conn) GetW(ctx context.Context, path string) ([]byte, Stat, <-chan Event, error) {
	r, err := c.pathWatchReq(wire.OpGetData, path, wkData)
	if err != nil {
		return nil, Stat{}, nil, err
	}
	res, err := call(ctx, c, r, convGetW)
	return res.v.Data, res.v.Stat, res.ch, err
}

// Set replaces a node's data if its version matches (-1: any version).
func (c *Conn) Set(ctx context.Context, path string, data []byte, version int32) (Stat, error) {
	r, err := c.setReq(path, data, version)
	if err != nil {
		return Stat{}, err
	}
	return call(ctx, c, r, convStat)
}

// GetACL returns a node's ACL and Stat.
func (c *Conn) GetACL(ctx context.Context, path string) ([]ACL, Stat, error) {
	r, err := c.getACLReq(path)
	if err != nil {
		return nil, Stat{}, err
	}
	res, err := call(ctx, c, r, convACL)
	return res.ACL, res.Stat, err
}

// SetACL replaces a node's ACL if its ACL version (aversion) matches.
func (c *Conn) SetACL(ctx context.Context, path string, acl []ACL, version int32) (Stat, error) {
	r, err := c.setACLReq(path, acl, version)
	if err != nil {
		return Stat{}, err
	}
	return call(ctx, c, r, convStat)
}

// Children returns the names of a node's children, in no particular
// order.
func (c *Conn) Children(ctx context.Context, path string) ([]string, error) {
	r, err := c.pathWatchReq(wire.OpGetChildren, path, wkNone)
	if err != nil {
		return nil, err
	}
	return call(ctx, c, r, convChildren)
}

// ChildrenW is Children that also sets a one-shot child watch
// (NodeChildrenChanged or NodeDeleted).
func (c *Conn) ChildrenW(ctx context.Context, path string) ([]string, <-chan Event, error) {
	r, err := c.pathWatchReq(wire.OpGetChildren, path, wkChild)
	if err != nil {
		return nil, nil, err
	}
	res, err := call(ctx, c, r, convChildrenW)
	return res.v, res.ch, err
}

// Children2 returns the children and the node's Stat (getChildren2).
func (c *Conn) Children2(ctx context.Context, path string) ([]string, Stat, error) {
	r, err := c.pathWatchReq(wire.OpGetChildren2, path, wkNone)
	if err != nil {
		return nil, Stat{}, err
	}
	res, err := call(ctx, c, r, convChildren2)
	return res.Children, res.Stat, err
}

// Children2W is Children2 with a one-shot child watch.
func (c *Conn) Children2W(ctx context.Context, path string) ([]string, Stat, <-chan Event, error) {
	r, err := c.pathWatchReq(wire.OpGetChildren2, path, wkChild)
	if err != nil {
		return nil, Stat{}, nil, err
	}
	res, err := call(ctx, c, r, convChildren2W)
	return res.v.Children, res.v.Stat, res.ch, err
}

// Sync waits until the server this client is connected to has applied
// every write committed before the call, so that reads sent after it see
// them. It returns the path.
func (c *Conn) Sync(ctx context.Context, path string) (string, error) {
	r, err := c.syncReq(path)
	if err != nil {
		return "", err
	}
	return call(ctx, c, r, convPath)
}

// Check fails with wire.CodeBadVersion unless the node's version matches
// (wire.CodeNoNode if there is no node). It is sent as a multi holding one
// check op, the only form ZooKeeper accepts.
func (c *Conn) Check(ctx context.Context, path string, version int32) error {
	r, err := c.checkReq(path, version)
	if err != nil {
		return err
	}
	_, err = call(ctx, c, r, convCheck)
	return err
}

// ---- asynchronous calls ----

// CreateAsync is the asynchronous Create.
func (c *Conn) CreateAsync(path string, data []byte, acl []ACL, mode CreateMode) *Future[string] {
	r, err := c.createReq(wire.OpCreate, path, data, acl, mode, 0)
	if err != nil {
		return failed[string](err)
	}
	return async(c, r, convCreate)
}

// Create2Async is the asynchronous Create2.
func (c *Conn) Create2Async(path string, data []byte, acl []ACL, mode CreateMode) *Future[CreateResult] {
	r, err := c.createReq(wire.OpCreate2, path, data, acl, mode, 0)
	if err != nil {
		return failed[CreateResult](err)
	}
	return async(c, r, convCreate2)
}

// DeleteAsync is the asynchronous Delete.
func (c *Conn) DeleteAsync(path string, version int32) *Future[struct{}] {
	r, err := c.deleteReq(path, version)
	if err != nil {
		return failed[struct{}](err)
	}
	return async(c, r, convErr)
}

// ExistsAsync is the asynchronous Exists.
func (c *Conn) ExistsAsync(path string) *Future[*Stat] {
	r, err := c.pathWatchReq(wire.OpExists, path, wkNone)
	if err != nil {
		return failed[*Stat](err)
	}
	return async(c, r, convExists)
}

// GetAsync is the asynchronous Get.
func (c *Conn) GetAsync(path string) *Future[GetResult] {
	r, err := c.pathWatchReq(wire.OpGetData, path, wkNone)
	if err != nil {
		return failed[GetResult](err)
	}
	return async(c, r, convGet)
}

// SetAsync is the asynchronous Set.
func (c *Conn) SetAsync(path string, data []byte, version int32) *Future[Stat] {
	r, err := c.setReq(path, data, version)
	if err != nil {
		return failed[Stat](err)
	}
	return async(c, r, convStat)
}

// GetACLAsync is the asynchronous GetACL.
func (c *Conn) GetACLAsync(path string) *Future[ACLResult] {
	r, err := c.getACLReq(path)
	if err != nil {
		return failed[ACLResult](err)
	}
	return async(c, r, convACL)
}

// SetACLAsync is the asynchronous SetACL.
func (c *Conn) SetACLAsync(path string, acl []ACL, version int32) *Future[Stat] {
	r, err := c.setACLReq(path, acl, version)
	if err != nil {
		return failed[Stat](err)
	}
	return async(c, r, convStat)
}

// ChildrenAsync is the asynchronous Children.
func (c *Conn) ChildrenAsync(path string) *Future[[]string] {
	r, err := c.pathWatchReq(wire.OpGetChildren, path, wkNone)
	if err != nil {
		return failed[[]string](err)
	}
	return async(c, r, convChildren)
}

// Children2Async is the asynchronous Children2.
func (c *Conn) Children2Async(path string) *Future[ChildrenResult] {
	r, err := c.pathWatchReq(wire.OpGetChildren2, path, wkNone)
	if err != nil {
		return failed[ChildrenResult](err)
	}
	return async(c, r, convChildren2)
}

// SyncAsync is the asynchronous Sync.
func (c *Conn) SyncAsync(path string) *Future[string] {
	r, err := c.syncReq(path)
	if err != nil {
		return failed[string](err)
	}
	return async(c, r, convPath)
}

// CheckAsync is the asynchronous Check.
func (c *Conn) CheckAsync(path string, version int32) *Future[struct{}] {
	r, err := c.checkReq(path, version)
	if err != nil {
		return failed[struct{}](err)
	}
	return async(c, r, convCheck)
}
