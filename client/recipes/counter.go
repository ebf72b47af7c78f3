package recipes

import (
	"context"
	"errors"
	"path"
	"strconv"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

// Counter is a shared integer kept as decimal text in one node, changed
// by compare-and-set on the node's version:
//
//	1 (v, version) = getData(c)
//	2 setData(c, v+delta, version); on a version mismatch goto 1
//
// A connection loss leaves step 2's outcome unknown: retrying blindly
// could count twice, giving up could count zero times. So step 2 is a
// multi that also creates an ephemeral marker c/op-<GUID> (a child of
// the counter node) holding the value written; after a connection loss the
// marker's existence says whether the increment ran, and its data what it
// wrote (a retry that finds the marker already there learns the same:
// the lost attempt was applied after all). The marker is deleted
// afterwards. An Add
// that returns nil was applied exactly once; one that returns an error
// was not applied, except after the session expired while the reply was
// lost (the error then wraps client.ErrSessionExpired and the outcome is
// unknown).
type Counter struct {
	c    *client.Conn
	path string
	o    *options
}

// NewCounter returns the counter at the node p (created, as 0, on first
// use).
func NewCounter(c *client.Conn, p string, opts ...Option) *Counter {
	return &Counter{c: c, path: p, o: buildOptions(opts)}
}

// Get returns the current value (0 if the node does not exist yet).
func (k *Counter) Get(ctx context.Context) (int64, error) {
	v, _, err := k.read(ctx)
	return v, err
}

func (k *Counter) read(ctx context.Context) (int64, int32, error) {
	data, st, err := get(ctx, k.c, k.path)
	if noNode(err) {
		return 0, -1, nil
	}
	if err != nil {
		return 0, 0, err
	}
	if len(data) == 0 {
		return 0, st.Version, nil
	}
	v, perr := strconv.ParseInt(string(data), 10, 64)
	if perr != nil {
		return 0, 0, ErrBadCounter
	}
	return v, st.Version, nil
}

// Add adds delta and returns the new value.
func (k *Counter) Add(ctx context.Context, delta int64) (int64, error) {
	c := k.c
	marker := join(k.path, "op-"+newGUID())
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		v, version, err := k.read(ctx)
		if err != nil {
			return 0, err
		}
		if version < 0 { // no node yet
			if err := k.create(ctx); err != nil {
				return 0, err
			}
			continue
		}
		nv := v + delta
		// Waited for even if ctx ends, so that Add never returns while
		// its increment may still happen.
		// The marker holds the value this attempt writes: if an earlier
		// attempt turns out to have been applied, its marker says which
		// value it wrote.
		val := []byte(strconv.FormatInt(nv, 10))
		res, err := c.MultiAsync(
			client.SetDataOp(k.path, val, version),
			client.CreateOp(marker, val, k.o.acl, client.ModeEphemeral),
		).Result()
		switch {
		case err == nil:
			k.dropMarker(marker)
			return nv, nil
		case len(res) == 2 && nodeExists(res[1].Err):
			// The marker is this Add's alone, so an earlier attempt that
			// ended in a connection loss was applied after all: the read
			// of its marker had run on a server that had not applied it
			// yet.
		case len(res) == 2 && (errors.Is(res[0].Err, wire.CodeBadVersion) || noNode(res[0].Err)):
			continue // someone else's increment came first: someone progressed, retry at once
		case !connLoss(err):
			return 0, err
		}
		applied, v, err := k.applied(ctx, marker)
		if err != nil {
			return 0, err
		}
		if applied {
			k.dropMarker(marker)
			return v, nil
		}
	}
}

// applied reads the marker, even if ctx has ended: the outcome must be
// known before Add returns. It returns the value the applied attempt
// wrote.
func (k *Counter) applied(ctx context.Context, marker string) (bool, int64, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.o.cleanupLimit)
	defer cancel()
	data, st, err := get(rctx, k.c, marker)
	if noNode(err) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	if st.EphemeralOwner != k.c.SessionID() {
		return false, 0, nil
	}
	v, perr := strconv.ParseInt(string(data), 10, 64)
	if perr != nil {
		return false, 0, ErrBadCounter
	}
	return true, v, nil
}

func (k *Counter) create(ctx context.Context) error {
	if err := ensurePath(ctx, k.c, path.Dir(k.path), k.o.acl); err != nil {
		return err
	}
	_, err := retry(ctx, func(ctx context.Context) (string, error) {
		return k.c.Create(ctx, k.path, []byte("0"), k.o.acl, client.ModePersistent)
	})
	return ignore(err, nodeExists)
}

func (k *Counter) dropMarker(marker string) {
	c := k.c
	k.o.background("counter marker "+marker, func(ctx context.Context) error {
		return deleteOwned(ctx, c, marker, nil)
	})
}
