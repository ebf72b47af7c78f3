package server

import (
	"sync"

	"github.com/corral-db/corral/zab"
)

// recordPool recycles the buffers a standalone server encodes its
// proposals into. A proposal's record lives in the driver's log only
// until the WAL has copied it and the write is applied (a group of one
// cuts its in-memory log at every applied entry), so a buffer per write
// would be garbage a moment later; the driver says when a record is free
// again (repl.Config.Released). The tree keeps none of it: a standalone
// server encodes with txn.Append, so the transaction's data stays the
// request's own copy, as the tree keeps it.
//
// Proposals are taken under the server's prepMu, in zxid order; release
// runs on whichever goroutine processed the commit. mu guards both lists.
type recordPool struct {
	mu sync.Mutex
	// out are the records proposed and not yet released, in zxid order.
	out []pooledRecord
	// free are records ready for reuse, at most maxFreeRecords of at
	// most maxPooledRecord bytes each.
	free [][]byte
}

type pooledRecord struct {
	zxid zab.Zxid
	buf  []byte
}

const (
	// maxPooledRecord is the largest record kept for reuse: larger writes
	// are rare and would pin their memory.
	maxPooledRecord = 64 << 10
	// maxFreeRecords bounds the free list; the records in flight are
	// bounded by globalOutstandingLimit.
	maxFreeRecords = 256
	// minRecordCap rounds small records up, so one buffer serves writes
	// of different sizes.
	minRecordCap = 512
)

// get returns an empty buffer of at least size bytes of capacity.
func (p *recordPool) get(size int) []byte {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		// A buffer too small for this write is let go: the next ones are
		// likely as large.
		b := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		if cap(b) >= size {
			p.mu.Unlock()
			return b
		}
	}
	p.mu.Unlock()
	c := minRecordCap
	for c < size && c < maxPooledRecord {
		c *= 2
	}
	return make([]byte, 0, max(c, size))
}

// proposed notes that buf is the record of the proposal z; the caller
// proposes in zxid order.
func (p *recordPool) proposed(z zab.Zxid, buf []byte) {
	if cap(buf) > maxPooledRecord {
		return
	}
	p.mu.Lock()
	p.out = append(p.out, pooledRecord{zxid: z, buf: buf})
	p.mu.Unlock()
}

// release takes back the records of every proposal up to z.
func (p *recordPool) release(z zab.Zxid) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for n < len(p.out) && p.out[n].zxid <= z {
		if len(p.free) < maxFreeRecords {
			p.free = append(p.free, p.out[n].buf[:0])
		}
		n++
	}
	if n == 0 {
		return
	}
	rest := copy(p.out, p.out[n:])
	clear(p.out[rest:])
	p.out = p.out[:rest]
}

// released is the driver's Config.Released: the records of the proposals
// up to z are free (a standalone server's; no other is pooled).
func (rp *replica) released(z zab.Zxid) {
	if rp.pooled {
		rp.records.release(z)
	}
}
