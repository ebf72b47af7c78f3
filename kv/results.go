package kv

import (
	"sync"

	"github.com/corral-db/corral/zab"
)

// Result is what applying one mutation did. It is the same on every
// replica; only the proposing member hands it to a waiting request.
type Result struct {
	Zxid zab.Zxid
	// Err is the mutation's outcome when it changed nothing: ErrNoTable,
	// ErrNoFamily, ErrTableExists, or a wrapped ErrInvalid.
	Err error
	// Succeeded is false when a check-and-mutate's condition failed.
	Succeeded bool
	// Version is the version a put wrote its cells at: Zxid, unless a
	// range move ingested higher versions (moveapply.go). 0 when not
	// known (a repeated request answered from its record).
	Version uint64
}

// CellVersion is the version r's put wrote: Version, else Zxid.
func (r Result) CellVersion() uint64 {
	if r.Version != 0 {
		return r.Version
	}
	return uint64(r.Zxid)
}

// waiters hands applied results to the requests that proposed them, by
// request id.
type waiters struct {
	mu sync.Mutex
	m  map[uint64]chan Result // guarded by mu
}

// await registers reqID; the channel receives its result once applied.
// cancel forgets it (a request that gave up).
func (w *waiters) await(reqID uint64) (<-chan Result, func()) {
	ch := make(chan Result, 1)
	w.mu.Lock()
	if w.m == nil {
		w.m = make(map[uint64]chan Result)
	}
	w.m[reqID] = ch
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.m, reqID)
		w.mu.Unlock()
	}
}

func (w *waiters) deliver(reqID uint64, r Result) {
	w.mu.Lock()
	ch, ok := w.m[reqID]
	delete(w.m, reqID)
	w.mu.Unlock()
	if ok {
		ch <- r // buffered, one send per registration
	}
}
