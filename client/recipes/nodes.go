package recipes

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

// Node naming. A node a recipe creates with a sequential flag is named
// prefix + GUID + "-" and the server appends a 10-digit sequence number:
//
//	lock-3f2a...9c-0000000042
//
// The GUID, fresh for every request, lets a client find its own node
// after a connection loss made the create's outcome unknown (Curator's
// "protected" mode). Order is by the sequence number only; children that
// do not parse are someone else's and are ignored.

const seqDigits = 10

func newGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// seqNode is a sequential child: its name and sequence number.
type seqNode struct {
	name string
	seq  int64
}

// parseSeq reads the sequence number at the end of a sequential name.
func parseSeq(name string) (int64, bool) {
	if len(name) < seqDigits {
		return 0, false
	}
	s := name[len(name)-seqDigits:]
	if s[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// sortSeq keeps the children starting with one of prefixes that carry a
// sequence number, in sequence order.
func sortSeq(kids []string, prefixes ...string) []seqNode {
	out := make([]seqNode, 0, len(kids))
	for _, k := range kids {
		if !hasAnyPrefix(k, prefixes) {
			continue
		}
		if n, ok := parseSeq(k); ok {
			out = append(out, seqNode{k, n})
		}
	}
	slices.SortFunc(out, func(a, b seqNode) int {
		if a.seq != b.seq {
			if a.seq < b.seq {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return len(prefixes) == 0
}

func indexOfNode(ns []seqNode, name string) int {
	for i, n := range ns {
		if n.name == name {
			return i
		}
	}
	return -1
}

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// ensurePath creates p and its missing ancestors as persistent nodes.
func ensurePath(ctx context.Context, c *client.Conn, p string, acl []client.ACL) error {
	if p == "/" || p == "" {
		return nil
	}
	if st, err := exists(ctx, c, p); err != nil || st != nil {
		return err
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := ""
	for _, part := range parts {
		cur += "/" + part
		_, err := retry(ctx, func(ctx context.Context) (string, error) {
			return c.Create(ctx, cur, nil, acl, client.ModePersistent)
		})
		if err != nil && !nodeExists(err) {
			return err
		}
	}
	return nil
}

// findByPrefix returns dir's child whose name starts with prefix.
func findByPrefix(ctx context.Context, c *client.Conn, dir, prefix string) (string, bool, error) {
	kids, err := children(ctx, c, dir)
	if err != nil {
		return "", false, err
	}
	for _, k := range kids {
		if strings.HasPrefix(k, prefix) {
			return join(dir, k), true, nil
		}
	}
	return "", false, nil
}

// maxNoNodeRetries bounds the re-creation of a parent that keeps
// disappearing under a create.
const maxNoNodeRetries = 5

// createSeq creates the ephemeral dir/prefix<GUID>-<seq> and returns its
// path. A connection loss is resolved by looking for the GUID among dir's
// children, which is sound because no one but this session deletes the
// node (short of an operator, or the session's end). A queue item is
// another matter: a consumer may take it before the producer looks, so
// Queue.Put uses a marker instead. If ctx ends while the create is in
// flight, the node, should it appear, is deleted in the background, so
// that an abandoned request never blocks a lock queue.
func createSeq(ctx context.Context, c *client.Conn, o *options, dir, prefix string, data []byte) (string, error) {
	name := prefix + newGUID() + "-"
	abandon := func(f *client.Future[string]) {
		o.background("abandoned create "+join(dir, name), func(ctx context.Context) error {
			if f != nil {
				select {
				case <-f.Done():
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return deleteByPrefix(ctx, c, dir, name)
		})
	}
	var b backoff
	noNodes := 0
	for {
		f := c.CreateAsync(join(dir, name), data, o.acl, client.ModeEphemeralSequential)
		select {
		case <-f.Done():
		case <-ctx.Done():
			abandon(f)
			return "", ctx.Err()
		}
		p, err := f.Result()
		switch {
		case err == nil:
			return p, nil
		case noNode(err) && noNodes < maxNoNodeRetries:
			noNodes++
			if err := ensurePath(ctx, c, dir, o.acl); err != nil {
				return "", err
			}
			continue
		case !connLoss(err):
			return "", err
		}
		err = catchUp(ctx, c, dir)
		var found bool
		if err == nil {
			p, found, err = findByPrefix(ctx, c, dir, name)
		}
		if err != nil {
			if ctx.Err() != nil {
				abandon(nil)
			}
			return "", err
		}
		if found {
			return p, nil
		}
		if err := b.wait(ctx); err != nil {
			return "", err
		}
	}
}

// deleteByPrefix deletes dir's child starting with prefix, if any and if
// this session owns it.
func deleteByPrefix(ctx context.Context, c *client.Conn, dir, prefix string) error {
	p, found, err := findByPrefix(ctx, c, dir, prefix)
	if err != nil || !found {
		return err
	}
	return deleteOwned(ctx, c, p, nil)
}

// deleteOwned deletes p if it is an ephemeral node of this session (and,
// with owned, if owned approves its data), retrying through connection
// loss. A node already gone, or a session already over (its ephemerals
// go with it), counts as done.
func deleteOwned(ctx context.Context, c *client.Conn, p string, owned func([]byte) bool) error {
	var b backoff
	for {
		data, st, err := c.Get(ctx, p)
		switch {
		case noNode(err), sessionOver(err):
			return nil
		case connLoss(err):
			if err := b.wait(ctx); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		if st.EphemeralOwner != c.SessionID() || (owned != nil && !owned(data)) {
			return nil
		}
		err = c.Delete(ctx, p, st.Version)
		switch {
		case err == nil, noNode(err), sessionOver(err):
			return nil
		case connLoss(err), errors.Is(err, wire.CodeBadVersion):
			if err := b.wait(ctx); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// dataIs is an ownership test: the node holds exactly want.
func dataIs(want []byte) func([]byte) bool {
	return func(b []byte) bool { return bytes.Equal(b, want) }
}

func base(p string) string { return path.Base(p) }
