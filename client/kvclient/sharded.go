package kvclient

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/kv/route"
)

// sharded is the client's side of a sharded cluster: a Router kept
// current from the configuration manager by one persistent recursive
// watch (cm.Keep, route.Follow), stopped by Close.
type sharded struct {
	rt     *route.Router
	cancel context.CancelFunc
	done   chan struct{}
}

// routePolicy bounds one routed attempt; the client's own loop retries
// failures that are not routing errors (a leader down) until the
// request's deadline.
var routePolicy = route.Policy{MaxAttempts: 16, ConfigWait: 500 * time.Millisecond, Backoff: 20 * time.Millisecond}

func startSharded(servers, root string) *sharded {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sharded{rt: route.New(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		cm.Keep(ctx, strings.Split(servers, ","), root, slog.New(slog.DiscardHandler), func(ctx context.Context, _ *cm.Store, v *cm.View) {
			route.Follow(ctx, s.rt, v)
		})
	}()
	return s
}

func (s *sharded) stop() {
	s.cancel()
	<-s.done
}

// cluster returns the sharded-cluster router, discovering on first use
// whether the endpoints belong to one (the Cluster call names the CM);
// nil means a single replica group, served by do's redirects.
func (c *Client) cluster(ctx context.Context) (*sharded, error) {
	c.mu.Lock()
	if c.discovered {
		defer c.mu.Unlock()
		return c.shard, nil
	}
	c.mu.Unlock()
	cmConnect, root := c.cfg.CM, c.cfg.CMRoot
	if cmConnect == "" {
		var resp *kvpb.ClusterResponse
		err := c.do(ctx, true, func(ctx context.Context, kc kvpb.KVClient) (err error) {
			resp, err = kc.Cluster(ctx, &kvpb.ClusterRequest{})
			return err
		})
		switch {
		case status.Code(err) == codes.Unimplemented:
			// A member older than the Cluster call: one group.
		case err != nil:
			return nil, err
		default:
			cmConnect, root = resp.GetCmConnect(), resp.GetCmRoot()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.discovered && !c.closed {
		c.discovered = true
		if cmConnect != "" {
			c.shard = startSharded(cmConnect, root)
		}
	}
	return c.shard, nil
}

// routingError turns a status carrying a NotLeader or WrongRange detail
// into the route package's error (joined with the original, so that
// status.Code still reads it).
func routingError(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *kvpb.NotLeader:
			return errors.Join(&route.NotLeader{Group: ring.GroupID(d.GetGroup()), Epoch: uint64(d.GetEpoch()), LeaderID: d.GetLeaderId(), LeaderAddr: d.GetLeaderAddress()}, err)
		case *kvpb.WrongRange:
			return errors.Join(&route.WrongRange{Group: ring.GroupID(d.GetGroup()), RingVersion: d.GetRingVersion()}, err)
		}
	}
	return err
}

// retriable says whether a routed call that failed with err (not a
// routing error) may be sent again: the owner's leader was unreachable
// (it may be down: the CM will name the next one), or leadership moved
// while a write was in flight. idempotent as in do.
func retriable(err error, idempotent bool) bool {
	if errors.Is(err, route.ErrGaveUp) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable:
		return idempotent || neverSent(err)
	case codes.Aborted:
		return idempotent
	}
	return false
}

// routed runs one call through the router (one of route.Do or DoGroup in
// attempt) and retries retriable failures, pausing until the router
// learns something new or the backoff passes, until ctx ends.
func (c *Client) routed(ctx context.Context, rt *route.Router, idempotent bool, attempt func(context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.RequestTimeout)
		defer cancel()
	}
	backoff := c.cfg.Backoff
	for {
		updated := rt.Updated()
		err := attempt(ctx)
		if err == nil || ctx.Err() != nil || !retriable(err, idempotent) {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-updated:
			t.Stop()
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// doRow runs call against the leader of the RG owning row.
func (c *Client) doRow(ctx context.Context, row []byte, idempotent bool, call func(context.Context, kvpb.KVClient) error) error {
	if c.cfg.Forward {
		return c.do(metadata.AppendToOutgoingContext(ctx, kvpb.ForwardHeader, "1"), idempotent, call)
	}
	sh, err := c.cluster(ctx)
	if err != nil {
		return err
	}
	if sh == nil {
		return c.do(ctx, idempotent, call)
	}
	return c.routed(ctx, sh.rt, idempotent, func(ctx context.Context) error {
		_, err := route.Do(ctx, sh.rt, routePolicy, row, func(ctx context.Context, t route.Target) (struct{}, error) {
			return struct{}{}, c.send(ctx, t.Addr, call)
		})
		return err
	})
}

// doGroup runs call against the leader of RG g.
func (c *Client) doGroup(ctx context.Context, rt *route.Router, g ring.GroupID, idempotent bool, call func(context.Context, kvpb.KVClient) error) error {
	return c.routed(ctx, rt, idempotent, func(ctx context.Context) error {
		_, err := route.DoGroup(ctx, rt, routePolicy, g, func(ctx context.Context, t route.Target) (struct{}, error) {
			return struct{}{}, c.send(ctx, t.Addr, call)
		})
		return err
	})
}

func (c *Client) send(ctx context.Context, addr string, call func(context.Context, kvpb.KVClient) error) error {
	kc, err := c.conn(addr)
	if err != nil {
		return err
	}
	return routingError(call(ctx, kc))
}

// groups are the RGs on the router's ring, waiting (within ctx) for one.
func groups(ctx context.Context, rt *route.Router) ([]ring.GroupID, error) {
	gs, _, err := groupsAt(ctx, rt)
	return gs, err
}

// groupsAt is groups and the version of the ring they are read from.
func groupsAt(ctx context.Context, rt *route.Router) ([]ring.GroupID, uint64, error) {
	for {
		updated := rt.Updated()
		gs, v, err := rt.GroupsAt()
		if err == nil {
			return gs, v, nil
		}
		select {
		case <-ctx.Done():
			return nil, 0, errors.Join(err, ctx.Err())
		case <-updated:
		}
	}
}

// withDeadline gives ctx the client's RequestTimeout if it has none.
func (c *Client) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.cfg.RequestTimeout)
}

// eachGroup runs call for every RG in turn and returns the errors by RG.
func (c *Client) eachGroup(ctx context.Context, sh *sharded, call func(context.Context, ring.GroupID, kvpb.KVClient) error) (map[ring.GroupID]error, error) {
	gs, err := groups(ctx, sh.rt)
	if err != nil {
		return nil, err
	}
	errs := map[ring.GroupID]error{}
	for _, g := range gs {
		errs[g] = c.doGroup(ctx, sh.rt, g, true, func(ctx context.Context, kc kvpb.KVClient) error { return call(ctx, g, kc) })
	}
	return errs, nil
}

// allOrSome folds per-RG outcomes of a table operation: success if every
// RG succeeded or some did and the others answered benign (the table
// already exists there, after an earlier partial attempt), else the
// first other error.
func allOrSome(errs map[ring.GroupID]error, benign func(error) bool) error {
	ok := false
	var first error
	for _, err := range errs {
		switch {
		case err == nil:
			ok = true
		case benign(err):
		case first == nil:
			first = err
		}
	}
	if first != nil {
		return first
	}
	if !ok {
		for _, err := range errs {
			return err // every RG answered the benign error: it is the answer
		}
	}
	return nil
}

// scanSharded scans every RG and merges their rows in key order. All RGs
// are scanned under one ring version, sent with each request: an RG
// returns only rows of ranges it owns in that ring (a moved range's rows
// sit in two RGs between the copy and the drop), so each row comes from
// one RG. If the ring changes during the scan, it is run again under the
// new one. Each RG returns its first limit owned rows from req.From, so
// the first limit rows of the union are the answer.
func (c *Client) scanSharded(ctx context.Context, sh *sharded, req *kvpb.ScanRequest) (*kvpb.ScanResponse, error) {
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	for {
		gs, v, err := groupsAt(ctx, sh.rt)
		if err != nil {
			return nil, err
		}
		var all []*kvpb.Row
		same := true
		for _, g := range gs {
			rows, served, err := c.scanGroup(ctx, sh.rt, g, req)
			if err != nil {
				return nil, err
			}
			all = append(all, rows...)
			same = same && served == v
		}
		if !same {
			continue // the ring moved on during the scan (bounded by ctx)
		}
		sortRows(all)
		limit := int(req.GetLimit())
		if limit <= 0 || limit > 10000 {
			limit = 10000
		}
		if len(all) > limit {
			all = all[:limit]
		}
		return &kvpb.ScanResponse{Rows: all}, nil
	}
}

// scanGroup scans RG g's leader under the router's ring and returns the
// rows and the ring version they were served under.
func (c *Client) scanGroup(ctx context.Context, rt *route.Router, g ring.GroupID, req *kvpb.ScanRequest) ([]*kvpb.Row, uint64, error) {
	var rows []*kvpb.Row
	var served uint64
	err := c.routed(ctx, rt, true, func(ctx context.Context) error {
		_, err := route.DoGroup(ctx, rt, routePolicy, g, func(ctx context.Context, t route.Target) (struct{}, error) {
			r := &kvpb.ScanRequest{Table: req.GetTable(), From: req.GetFrom(), To: req.GetTo(), Limit: req.GetLimit(),
				Options: req.GetOptions(), Group: uint32(g), RingVersion: t.RingVersion}
			return struct{}{}, c.send(ctx, t.Addr, func(ctx context.Context, kc kvpb.KVClient) error {
				resp, err := kc.Scan(ctx, r)
				if err == nil {
					rows, served = resp.GetRows(), t.RingVersion
				}
				return err
			})
		})
		return err
	})
	return rows, served, err
}

func sortRows(rows []*kvpb.Row) {
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && bytes.Compare(rows[j].GetKey(), rows[j-1].GetKey()) < 0; j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}

// multiGetSharded splits the rows by owning RG, reads each part from its
// leader, and re-splits the rows of any part that met a routing error
// (the ring or a leader changed) until every part is read or ctx ends.
func (c *Client) multiGetSharded(ctx context.Context, sh *sharded, req *kvpb.MultiGetRequest) (*kvpb.MultiGetResponse, error) {
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	rows := req.GetRows()
	found := map[string]*kvpb.Row{}
	pending := make([]int, len(rows))
	for i := range pending {
		pending[i] = i
	}
	err := c.routed(ctx, sh.rt, true, func(ctx context.Context) error {
		keys := make([][]byte, len(pending))
		for i, p := range pending {
			keys[i] = rows[p]
		}
		batches, err := sh.rt.Split(keys)
		if err != nil {
			return errors.Join(route.ErrGaveUp, err)
		}
		var next []int
		var failed error
		for _, b := range batches {
			if b.Err != nil {
				for _, i := range b.Indexes {
					next = append(next, pending[i])
				}
				failed = errors.Join(route.ErrGaveUp, b.Err)
				continue
			}
			sub := &kvpb.MultiGetRequest{Table: req.GetTable(), Options: req.GetOptions()}
			for _, i := range b.Indexes {
				sub.Rows = append(sub.Rows, keys[i])
			}
			err := c.send(ctx, b.Target.Addr, func(ctx context.Context, kc kvpb.KVClient) error {
				resp, err := kc.MultiGet(ctx, sub)
				for _, r := range resp.GetRows() {
					found[string(r.GetKey())] = r
				}
				return err
			})
			if err == nil {
				continue
			}
			if sh.rt.Observe(b.Target, err) == route.NotRouting && !retriable(err, true) {
				return err
			}
			for _, i := range b.Indexes {
				next = append(next, pending[i])
			}
			failed = errors.Join(route.ErrGaveUp, err)
		}
		pending = next
		return failed
	})
	if err != nil {
		return nil, err
	}
	resp := &kvpb.MultiGetResponse{}
	for _, r := range rows {
		if f, ok := found[string(r)]; ok {
			resp.Rows = append(resp.Rows, f)
		}
	}
	return resp, nil
}

// everyGroup runs a table operation on every RG of a sharded cluster in
// turn (each RG holds every table), req cloned with each RG's number. An
// RG answering benign (the table already exists there, or is already
// gone) counts as done: a retry completes an attempt that reached only
// some RGs.
func everyGroup[Req proto.Message, Resp any](ctx context.Context, c *Client, sh *sharded, req Req,
	setGroup func(Req, uint32), call func(context.Context, kvpb.KVClient, Req) (*Resp, error), benign codes.Code) (*Resp, error) {
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	var resp *Resp
	errs, err := c.eachGroup(ctx, sh, func(ctx context.Context, g ring.GroupID, kc kvpb.KVClient) error {
		r := proto.Clone(req).(Req)
		setGroup(r, uint32(g))
		out, err := call(ctx, kc, r)
		if err == nil {
			resp = out
		}
		return err
	})
	if err == nil {
		err = allOrSome(errs, func(err error) bool { return status.Code(err) == benign })
	}
	if err != nil {
		return nil, err
	}
	if resp == nil {
		resp = new(Resp)
	}
	return resp, nil
}
