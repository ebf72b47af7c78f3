package recipes

import (
	"context"

	"github.com/corral-db/corral/client"
)

// Mutex is the paper's lock without herd effect (§2.4):
//
//	Lock
//	1 n = create(l + "/lock-", EPHEMERAL|SEQUENTIAL)
//	2 C = getChildren(l, false)
//	3 if n is lowest znode in C, exit
//	4 p = znode in C ordered just before n
//	5 if exists(p, true) wait for watch event
//	6 goto 2
//	Unlock
//	1 delete(n)
//
// Clients get the lock in the order their requests reached the server;
// a release wakes only the next one. The node carries a GUID so that a
// create whose reply was lost is found again instead of queued twice.
// Unlock is Held.Release; a holder must watch Held.Lost.
type Mutex struct {
	c   *client.Conn
	dir string
	o   *options
}

// NewMutex returns the lock represented by the node dir (created on
// first use).
func NewMutex(c *client.Conn, dir string, opts ...Option) *Mutex {
	return &Mutex{c: c, dir: dir, o: buildOptions(opts)}
}

// Lock waits until the lock is held or ctx ends. On any error nothing is
// held (a queued request is withdrawn, in the background if need be).
func (m *Mutex) Lock(ctx context.Context) (*Held, error) {
	return acquireSeq(ctx, m.c, m.o, m.dir, "lock-", []string{"lock-"}, nil, exclusive)
}
