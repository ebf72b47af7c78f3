// Package rlogclient is the Go client of corral's replicated logs
// (api/rlog/v1). A Client holds connections to every endpoint given;
// writes go to the one that last took a write and move on when a server
// answers Unavailable (not the leader) or cannot be reached; reads go to
// the same one. An append without an expected offset is never sent twice:
// if its server fails while it is out, it fails with ErrOutcomeUnknown.
// Failures of the operation itself come back as
// *rlog.Error with the log's positions (errors.Is(err, rlog.ErrSealed)
// and the like).
package rlogclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	rlogv1 "github.com/corral-db/corral/api/rlog/v1"
	"github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/rlog/rlogsvc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Client talks to a set of endpoints of one ensemble.
type Client struct {
	conns   []*grpc.ClientConn
	clients []rlogv1.LogsClient

	mu  sync.Mutex
	cur int // guarded by mu: the endpoint tried first
}

// Dial connects to endpoints (host:port); connections are made lazily.
func Dial(endpoints []string) (*Client, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("rlogclient: no endpoints")
	}
	c := &Client{}
	for _, ep := range endpoints {
		conn, err := grpc.NewClient(ep, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("rlogclient: %s: %w", ep, err)
		}
		c.conns = append(c.conns, conn)
		c.clients = append(c.clients, rlogv1.NewLogsClient(conn))
	}
	return c, nil
}

// Close closes every connection.
func (c *Client) Close() error {
	var errs []error
	for _, conn := range c.conns {
		errs = append(errs, conn.Close())
	}
	return errors.Join(errs...)
}

// ErrOutcomeUnknown is wrapped by the error of an append without an
// expected offset whose server failed while the request was out (the
// process died, the connection broke): it may or may not have been
// applied. The client does not send it again, since that could add a
// second copy; the caller may read the log to find out, or append with an
// expected offset, which a repeat cannot duplicate.
var ErrOutcomeUnknown = errors.New("rlogclient: the server failed while the request was out; it may or may not have been applied")

// connectWait bounds how long a request that must not be sent twice
// waits for an endpoint's connection to come up before trying the next.
const connectWait = time.Second

// errNoConnection is what a call that must not be sent twice answers when
// no endpoint was connected: nothing was sent.
var errNoConnection = fmt.Errorf("%w: rlogclient: no endpoint is connected", rlog.ErrUnavailable)

// call runs fn against each endpoint in turn, starting with the current
// one, until one answers with anything but Unavailable. An Unavailable the
// service answered itself without doing anything (rlogsvc.NotApplied: not
// the leader, no session with its member) always moves on. Any other
// Unavailable may come from the transport after the request reached the
// server, so a request that is not repeatable (an append without an
// expected offset) is sent only over a connection that is up, and such an
// Unavailable ends the call with ErrOutcomeUnknown (the next call starts
// at the next endpoint).
func (c *Client) call(ctx context.Context, repeatable bool, fn func(rlogv1.LogsClient) error) error {
	c.mu.Lock()
	start := c.cur
	c.mu.Unlock()
	var err error
	for round := 0; round < 3; round++ {
		for i := range c.clients {
			k := (start + i) % len(c.clients)
			if !repeatable && !c.connected(ctx, k) {
				if err == nil {
					err = errNoConnection
				}
				continue // nothing sent: another endpoint may take it
			}
			err = fn(c.clients[k])
			if status.Code(err) == codes.Unavailable && !repeatable && !rlogsvc.NotApplied(err) {
				c.mu.Lock()
				c.cur = (k + 1) % len(c.clients)
				c.mu.Unlock()
				return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
			}
			if status.Code(err) != codes.Unavailable {
				c.mu.Lock()
				c.cur = k
				c.mu.Unlock()
				return rlogsvc.FromStatus(err)
			}
		}
		// No leader anywhere yet (an election): wait a little.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(50<<round) * time.Millisecond):
		}
	}
	return err
}

// connected reports whether endpoint k's connection is up, starting it
// and waiting up to connectWait if it is idle or connecting; one in
// transient failure (the server is down, gRPC backs off) is not waited
// for.
func (c *Client) connected(ctx context.Context, k int) bool {
	conn := c.conns[k]
	ctx, cancel := context.WithTimeout(ctx, connectWait)
	defer cancel()
	for {
		st := conn.GetState()
		switch st {
		case connectivity.Ready:
			return true
		case connectivity.TransientFailure, connectivity.Shutdown:
			return false
		case connectivity.Idle:
			conn.Connect()
		}
		if !conn.WaitForStateChange(ctx, st) {
			return false
		}
	}
}

// Stat is a log's positions.
type Stat struct {
	Name                  string
	Start, End, Committed int64
	Sealed                bool
}

func statOf(s *rlogv1.LogStat) Stat {
	return Stat{Name: s.GetName(), Start: s.GetStart(), End: s.GetEnd(), Committed: s.GetCommitted(), Sealed: s.GetSealed()}
}

// Create creates a log.
func (c *Client) Create(ctx context.Context, name string) (Stat, error) {
	var resp *rlogv1.CreateLogResponse
	err := c.call(ctx, true, func(lc rlogv1.LogsClient) (err error) {
		resp, err = lc.CreateLog(ctx, &rlogv1.CreateLogRequest{Name: name})
		return err
	})
	if err != nil {
		return Stat{}, err
	}
	return statOf(resp.GetStat()), nil
}

// Append appends data and returns its offset. expect, if not nil, is the
// offset the log must end at; such an append is sent again to another
// server when one fails under it (the log answers a repeat whose bytes
// are at expect with expect). Without expect a failure while the request
// was out is ErrOutcomeUnknown.
func (c *Client) Append(ctx context.Context, name string, data []byte, expect *int64) (int64, error) {
	var resp *rlogv1.AppendResponse
	err := c.call(ctx, expect != nil, func(lc rlogv1.LogsClient) (err error) {
		resp, err = lc.Append(ctx, &rlogv1.AppendRequest{Name: name, Data: data, ExpectedOffset: expect})
		return err
	})
	if err != nil {
		return 0, err
	}
	return resp.GetOffset(), nil
}

// Read returns up to max committed bytes from off, waiting up to wait at
// the committed end.
func (c *Client) Read(ctx context.Context, name string, off, max int64, wait time.Duration) ([]byte, int64, Stat, error) {
	var resp *rlogv1.ReadResponse
	err := c.call(ctx, true, func(lc rlogv1.LogsClient) (err error) {
		resp, err = lc.Read(ctx, &rlogv1.ReadRequest{Name: name, Offset: off, MaxBytes: max, WaitMs: wait.Milliseconds()})
		return err
	})
	if err != nil {
		return nil, off, Stat{}, err
	}
	return resp.GetData(), resp.GetNext(), statOf(resp.GetStat()), nil
}

// Follow calls fn with the log's committed bytes from off as they commit,
// until ctx ends (nil), fn fails, or the log is sealed and read to its end
// (nil).
func (c *Client) Follow(ctx context.Context, name string, off int64, fn func(data []byte) error) error {
	var stream grpc.ServerStreamingClient[rlogv1.ReadResponse]
	err := c.call(ctx, true, func(lc rlogv1.LogsClient) (err error) {
		stream, err = lc.Tail(ctx, &rlogv1.TailRequest{Name: name, Offset: off})
		return err
	})
	if err != nil {
		return err
	}
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return rlogsvc.FromStatus(err)
		}
		if err := fn(r.GetData()); err != nil {
			return err
		}
	}
}

// Trim moves the log's start up to off and returns the start after it.
func (c *Client) Trim(ctx context.Context, name string, off int64) (int64, error) {
	var resp *rlogv1.TrimResponse
	err := c.call(ctx, true, func(lc rlogv1.LogsClient) (err error) {
		resp, err = lc.Trim(ctx, &rlogv1.TrimRequest{Name: name, Offset: off})
		return err
	})
	if err != nil {
		return 0, err
	}
	return resp.GetStart(), nil
}

// Seal seals the log and returns its final length.
func (c *Client) Seal(ctx context.Context, name string) (int64, error) {
	var resp *rlogv1.SealResponse
	err := c.call(ctx, true, func(lc rlogv1.LogsClient) (err error) {
		resp, err = lc.Seal(ctx, &rlogv1.SealRequest{Name: name})
		return err
	})
	if err != nil {
		return 0, err
	}
	return resp.GetEnd(), nil
}

// Delete deletes the log.
func (c *Client) Delete(ctx context.Context, name string) error {
	return c.call(ctx, true, func(lc rlogv1.LogsClient) error {
		_, err := lc.DeleteLog(ctx, &rlogv1.DeleteLogRequest{Name: name})
		return err
	})
}

// Stat returns the log's positions.
func (c *Client) Stat(ctx context.Context, name string) (Stat, error) {
	var resp *rlogv1.StatResponse
	err := c.call(ctx, true, func(lc rlogv1.LogsClient) (err error) {
		resp, err = lc.Stat(ctx, &rlogv1.StatRequest{Name: name})
		return err
	})
	if err != nil {
		return Stat{}, err
	}
	return statOf(resp.GetStat()), nil
}
