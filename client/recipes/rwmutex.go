package recipes

import (
	"context"
	"strings"

	"github.com/corral-db/corral/client"
)

// RWMutex is the paper's read/write lock (§2.4). Writers queue exactly as
// in Mutex; a reader waits only for the write request just before it:
//
//	Write Lock
//	1 n = create(l + "/write-", EPHEMERAL|SEQUENTIAL)
//	2 C = getChildren(l, false)
//	3 if n is lowest znode in C, exit
//	4 p = znode in C ordered just before n
//	5 if exists(p, true) wait for event
//	6 goto 2
//	Read Lock
//	1 n = create(l + "/read-", EPHEMERAL|SEQUENTIAL)
//	2 C = getChildren(l, false)
//	3 if no write znodes lower than n in C, exit
//	4 p = write znode in C ordered just before n
//	5 if exists(p, true) wait for event
//	6 goto 2
//
// (The paper's read lock loops to line 3 with the old C; it must list
// again, as line 6 here does, or it would wait on a write node already
// gone.) Readers waiting behind one writer all wake when it leaves, which
// is intended: they may all hold the lock together.
type RWMutex struct {
	c   *client.Conn
	dir string
	o   *options
}

const (
	readPrefix  = "read-"
	writePrefix = "write-"
)

var rwKinds = []string{readPrefix, writePrefix}

// NewRWMutex returns the read/write lock represented by the node dir.
func NewRWMutex(c *client.Conn, dir string, opts ...Option) *RWMutex {
	return &RWMutex{c: c, dir: dir, o: buildOptions(opts)}
}

// Lock takes the lock for writing.
func (l *RWMutex) Lock(ctx context.Context) (*Held, error) {
	return acquireSeq(ctx, l.c, l.o, l.dir, writePrefix, rwKinds, nil, exclusive)
}

// RLock takes the lock for reading.
func (l *RWMutex) RLock(ctx context.Context) (*Held, error) {
	return acquireSeq(ctx, l.c, l.o, l.dir, readPrefix, rwKinds, nil, readerBlock)
}

// readerBlock: proceed unless a write request precedes us; then wait on
// the last such one.
func readerBlock(all []seqNode, me int) (string, bool) {
	for i := me - 1; i >= 0; i-- {
		if strings.HasPrefix(all[i].name, writePrefix) {
			return all[i].name, false
		}
	}
	return "", true
}
