package zab

import (
	"errors"
	"fmt"
	"slices"
	"sort"
)

// zlog is the node's view of its log: the entries of Storage up to
// stableLast, then entries held in memory until the driver has appended
// them (handed out in Ready, acknowledged by Advance). A truncation or a
// snapshot received from the leader takes effect in this view at once and
// reaches Storage through the next Ready; until the driver has done it,
// the view never reads Storage beyond stableLast.
type zlog struct {
	storage Storage

	// stableLast is the last zxid of Storage that belongs to the log: an
	// entry, the snapshot's zxid, or 0.
	stableLast Zxid
	// mem holds the entries after stableLast; mem[:inflight] were handed
	// out in the Ready in flight.
	mem      []Entry
	inflight int

	// pendingTrunc and pendingSnap are to be handed out in the next Ready;
	// snapInflight means a snapshot was handed out and not yet advanced.
	pendingTrunc *Zxid
	pendingSnap  *Snapshot
	snapInflight bool
}

func newLog(s Storage) (*zlog, error) {
	last, err := s.LastZxid()
	if err != nil {
		return nil, fmt.Errorf("zab: storage: %w", err)
	}
	return &zlog{storage: s, stableLast: last}, nil
}

func (l *zlog) lastZxid() Zxid {
	if len(l.mem) > 0 {
		return l.mem[len(l.mem)-1].Zxid
	}
	return l.stableLast
}

// overlay reports whether a snapshot from the leader is not yet installed
// in Storage, so Storage must not be read at all.
func (l *zlog) overlay() bool { return l.pendingSnap != nil || l.snapInflight }

// append adds entries after lastZxid; callers check the order.
func (l *zlog) append(ents ...Entry) {
	l.mem = append(l.mem, ents...)
}

// floor returns the largest zxid of the log that is <= z.
func (l *zlog) floor(z Zxid) (Zxid, error) {
	if len(l.mem) > 0 && z >= l.mem[0].Zxid {
		i := sort.Search(len(l.mem), func(i int) bool { return l.mem[i].Zxid > z })
		return l.mem[i-1].Zxid, nil
	}
	if z >= l.stableLast {
		return l.stableLast, nil
	}
	if l.overlay() {
		return 0, ErrCompacted
	}
	return l.storage.Floor(z)
}

// entries returns the entries in (after, upTo], at most maxBytes of them
// (at least one when any is in range).
func (l *zlog) entries(after, upTo Zxid, maxBytes uint64) ([]Entry, error) {
	if upTo <= after {
		return nil, nil
	}
	var out []Entry
	if after < l.stableLast {
		if l.overlay() {
			return nil, ErrCompacted
		}
		hi := min(upTo, l.stableLast)
		ents, err := l.storage.Entries(after, hi, maxBytes)
		if err != nil {
			return nil, err
		}
		if len(ents) == 0 {
			return nil, fmt.Errorf("zab: storage has no entries in (%v, %v]", after, hi)
		}
		last := ents[len(ents)-1].Zxid
		// Never append to the storage's array.
		out = ents[:len(ents):len(ents)]
		if last < hi || upTo <= l.stableLast {
			return out, nil
		}
		after = last
	}
	i := sort.Search(len(l.mem), func(i int) bool { return l.mem[i].Zxid > after })
	size := entriesBytes(out)
	for ; i < len(l.mem) && l.mem[i].Zxid <= upTo; i++ {
		size += uint64(len(l.mem[i].Data))
		if len(out) > 0 && size > maxBytes {
			break
		}
		out = append(out, l.mem[i])
	}
	return out, nil
}

// truncate drops every entry after t.
func (l *zlog) truncate(t Zxid) error {
	if t >= l.lastZxid() {
		return nil
	}
	if t >= l.stableLast {
		keep := sort.Search(len(l.mem), func(i int) bool { return l.mem[i].Zxid > t })
		if keep < l.inflight {
			// Entries the driver is appending now must go again.
			l.inflight = keep
			l.setTrunc(t)
		}
		l.mem = l.mem[:keep]
		return nil
	}
	if l.overlay() {
		return ErrCompacted
	}
	l.mem = nil
	l.inflight = 0
	l.stableLast = t
	l.setTrunc(t)
	return nil
}

func (l *zlog) setTrunc(t Zxid) {
	if l.pendingTrunc == nil || t < *l.pendingTrunc {
		l.pendingTrunc = &t
	}
}

// installSnapshot replaces the whole log with snap.
func (l *zlog) installSnapshot(snap Snapshot) {
	l.pendingSnap = &snap
	l.pendingTrunc = nil
	l.mem = nil
	l.inflight = 0
	l.stableLast = snap.Zxid
}

func (l *zlog) hasUnstable() bool {
	return l.pendingSnap != nil || l.pendingTrunc != nil || len(l.mem) > l.inflight
}

// takeUnstable hands out what the driver must do next. Entries are copied
// so later truncations of mem never change a Ready already handed out.
func (l *zlog) takeUnstable() (*Snapshot, *Zxid, []Entry) {
	snap, trunc := l.pendingSnap, l.pendingTrunc
	l.pendingSnap, l.pendingTrunc = nil, nil
	if snap != nil {
		l.snapInflight = true
	}
	var ents []Entry
	if len(l.mem) > 0 {
		ents = slices.Clone(l.mem)
	}
	l.inflight = len(l.mem)
	return snap, trunc, ents
}

// advance records that the driver did what the Ready in flight asked.
func (l *zlog) advance() {
	if l.inflight > 0 {
		l.stableLast = l.mem[l.inflight-1].Zxid
		if l.inflight == len(l.mem) && cap(l.mem) <= maxReusedMem {
			// Nothing is left: the next entries reuse the array from its
			// start (takeUnstable handed out a copy) rather than growing
			// a new one once the tail is used up.
			clear(l.mem)
			l.mem = l.mem[:0]
		} else {
			l.mem = l.mem[l.inflight:]
		}
		l.inflight = 0
	}
	l.snapInflight = false
}

// maxReusedMem bounds the array of entries advance keeps for reuse: a
// burst's is let go.
const maxReusedMem = 1024

// contains reports whether z is in the log (0, the empty history, is in
// every log that is not compacted).
func (l *zlog) contains(z Zxid) (bool, error) {
	f, err := l.floor(z)
	if err != nil {
		return false, err
	}
	return f == z, nil
}

func isCompacted(err error) bool { return errors.Is(err, ErrCompacted) }
