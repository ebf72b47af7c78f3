package zklogs

import (
	"sync"

	"github.com/corral-db/corral/rlog"
)

// A pipe is what this server knows of one log's control record for its
// appends: the record and version as they will be once every append
// multi already sent on the session applies.
//
// Appends to one log from this server are pipelined: each multi is sent
// against the version the previous one will leave (the session applies
// its requests in order, and prep checks a multi's version against the
// changes pending before it), so n appends in flight cost n multis and
// commit in one group, where a compare-and-swap against the last record
// read lets one of them win per round trip and sends every loser's
// payload to the leader again. A multi that fails (another writer moved
// the record, or one before it in the pipe failed) makes the record
// unknown; appends then wait until the pipe is empty, read the record
// and start it again. A stale record costs a refused multi, never a
// wrong append: prep refuses a multi whose create is not at the end the
// record it replaces gives, whatever the version says.
type pipe struct {
	// mu guards the fields below. Multis are sent under mu, so their
	// order on the session is the order of the versions they carry.
	// Lock order: Logs.knownMu before mu (lookups take knownMu alone).
	// mu is never held across a wait for the server.
	mu sync.Mutex
	// valid says c and ver are known; false until the record is read
	// and after any multi of the pipe fails.
	valid bool
	c     rlog.Control
	ver   int32
	// inflight counts the multis sent and not answered; idle is non-nil
	// while inflight > 0 and closed when it drops to zero.
	inflight int
	idle     chan struct{}
	// sent counts the multis ever sent: a record read while it changed
	// may predate one of them and is not installed.
	sent uint64
}

// sendLocked records a multi sent against the pipe's record: the record
// becomes next (one version up).
func (p *pipe) sendLocked(next rlog.Control) {
	p.c, p.ver = next, p.ver+1
	p.sent++
	if p.inflight == 0 {
		p.idle = make(chan struct{})
	}
	p.inflight++
}

// done records the answer to a multi of the pipe; ok=false makes the
// record unknown.
func (p *pipe) done(ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !ok {
		p.valid = false
	}
	p.inflight--
	if p.inflight == 0 {
		close(p.idle)
		p.idle = nil
	}
}

// install records c at version ver, read when the pipe had sent sent multis, as
// the pipe's record, unless a multi was sent since (the read may predate
// it; the multis decide the record).
func (p *pipe) install(sent uint64, c rlog.Control, ver int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sent == sent && p.inflight == 0 {
		p.c, p.ver, p.valid = c, ver, true
	}
}

// pipe returns the log's pipe, making it if there is none. At maxKnown
// pipes the idle ones are dropped first.
func (l *Logs) pipe(name string) *pipe {
	l.knownMu.Lock()
	defer l.knownMu.Unlock()
	if p, ok := l.known[name]; ok {
		return p
	}
	if l.known == nil {
		l.known = make(map[string]*pipe)
	}
	if len(l.known) >= maxKnown {
		for n, p := range l.known {
			if p.mu.TryLock() {
				if p.inflight == 0 {
					delete(l.known, n)
				}
				p.mu.Unlock()
			}
		}
	}
	p := &pipe{}
	l.known[name] = p
	return p
}

// forget makes the log's record unknown: the next append reads it.
func (l *Logs) forget(name string) {
	l.knownMu.Lock()
	p := l.known[name]
	l.knownMu.Unlock()
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.valid = false
}
