package kvclient

import (
	"crypto/rand"
	"encoding/binary"
	"sync"

	kvpb "github.com/corral-db/corral/api/kv/v1"
)

// lane is a request-id stream: a random client id and the last sequence
// used with it. The group keeps one sequence per client id and answers a
// repeat of it with the first result, so a lane carries one write at a
// time; concurrent writes take different lanes.
type lane struct {
	client uint64
	seq    uint64
}

// lanes are the idle lanes of a Client, reused so the group's table holds
// about as many client ids as the client ever had writes in flight.
type lanes struct {
	mu   sync.Mutex
	idle []*lane // guarded by mu
}

// maxIdleLanes bounds the idle lanes kept.
const maxIdleLanes = 256

// next returns a lane for one write and that write's request id.
func (l *lanes) next() (*lane, *kvpb.RequestId) {
	l.mu.Lock()
	var ln *lane
	if n := len(l.idle); n > 0 {
		ln = l.idle[n-1]
		l.idle = l.idle[:n-1]
	}
	l.mu.Unlock()
	if ln == nil {
		ln = &lane{client: randomClientID()}
	}
	ln.seq++
	return ln, &kvpb.RequestId{Client: ln.client, Sequence: ln.seq}
}

// done returns a lane once its write is answered or given up. A write
// given up may still apply later; the next sequence on the lane makes the
// group refuse it then (FAILED_PRECONDITION, to nobody) rather than apply
// it after a newer write.
func (l *lanes) done(ln *lane) {
	l.mu.Lock()
	if len(l.idle) < maxIdleLanes {
		l.idle = append(l.idle, ln)
	}
	l.mu.Unlock()
}

func randomClientID() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		if id := binary.BigEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}
