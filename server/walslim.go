package server

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/zab"
)

// The driver's in-memory log keeps every entry since the newest busy
// snapshot, for learners that need a DIFF: up to snapCount entries, or
// snapSizeLimitInKb of them, whatever their size (at 100,000 creates of
// 1 KiB, 35-45 MB a member). As a replica.Slimmer the WAL store lets it
// keep, for each entry that is durable and applied, the record's position
// in the WAL instead (walSlimForm, about a dozen bytes), and reads the record
// back when a learner needs it. Positions are learned as appendEntry
// writes each record (walPositions) and handed over when the driver slims
// the entry.
//
// The in-memory log is cut at the newest snapshot, and the WAL is purged
// only below the oldest snapshot kept (autopurge keeps at least 3), so a
// position the in-memory log holds stays readable; TruncateAfter only cuts
// entries the driver drops too.
//
// A slim form starts with walSlimMarker. The entries this server proposes
// are transaction records, whose first byte is txn.CodecVersion, so a
// whole entry is never taken for a slim form; Slim leaves any other entry
// whole.
const walSlimMarker byte = 0xF5

// maxWALPositions bounds walPositions: entries the driver does not slim
// (it slims only what is applied) are dropped oldest first beyond it, and
// stay whole in memory.
const maxWALPositions = 1 << 20

// walPositions is the WAL position of each entry appended and not yet
// slimmed, zxids increasing. appendEntry adds (the log writer), Slim
// takes (the driver), TruncateAfter drops; mu guards it.
type walPositions struct {
	mu   sync.Mutex
	q    []walPos
	head int
}

type walPos struct {
	zxid int64
	pos  wal.Pos
}

func (w *walPositions) add(zxid int64, p wal.Pos) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.q)-w.head >= maxWALPositions {
		w.head++
	}
	if w.head > 0 && w.head >= len(w.q)/2 {
		w.q = append(w.q[:0], w.q[w.head:]...)
		w.head = 0
	}
	w.q = append(w.q, walPos{zxid, p})
}

// take returns the position of zxid's record, forgetting it and every
// older one (the driver slims in zxid order).
func (w *walPositions) take(zxid int64) (wal.Pos, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.head < len(w.q) && w.q[w.head].zxid < zxid {
		w.head++
	}
	if w.head < len(w.q) && w.q[w.head].zxid == zxid {
		p := w.q[w.head].pos
		w.head++
		return p, true
	}
	return wal.Pos{}, false
}

// dropAfter forgets the positions of records after zxid (truncated).
func (w *walPositions) dropAfter(zxid int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.q) > w.head && w.q[len(w.q)-1].zxid > zxid {
		w.q = w.q[:len(w.q)-1]
	}
}

// walSlimForm encodes a WAL position as a slim form.
func walSlimForm(p wal.Pos) []byte {
	b := make([]byte, 0, 1+3*binary.MaxVarintLen64)
	b = append(b, walSlimMarker)
	b = binary.AppendUvarint(b, uint64(p.Base))
	b = binary.AppendUvarint(b, uint64(p.Off))
	return binary.AppendUvarint(b, uint64(p.Len))
}

// parseWALSlimForm decodes walSlimForm's output; ok false for data that
// is not one.
func parseWALSlimForm(b []byte) (p wal.Pos, ok bool, err error) {
	if len(b) == 0 || b[0] != walSlimMarker {
		return wal.Pos{}, false, nil
	}
	base, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return wal.Pos{}, true, fmt.Errorf("corrupt WAL position in the in-memory log")
	}
	off, m := binary.Uvarint(b[1+n:])
	if m <= 0 {
		return wal.Pos{}, true, fmt.Errorf("corrupt WAL position in the in-memory log")
	}
	size, k := binary.Uvarint(b[1+n+m:])
	if k <= 0 || 1+n+m+k != len(b) || size > math.MaxInt32 {
		return wal.Pos{}, true, fmt.Errorf("corrupt WAL position in the in-memory log")
	}
	return wal.Pos{Base: int64(base), Off: int64(off), Len: int(size)}, true, nil
}

// Slim implements replica.Slimmer: the entry's WAL position if the store
// knows it, else (with logs) the append's WAL form, else nothing.
// Weight implements replica.Weigher: the size of e's WAL record, which
// holds a reference in place of a logs' append payload (rlogdata.go).
func (w walStore) Weight(e zab.Entry) int64 {
	if w.st.rl != nil {
		return w.st.rl.walWeight(e)
	}
	return int64(len(e.Data))
}

func (w walStore) Slim(e zab.Entry) ([]byte, bool) {
	if len(e.Data) > 0 && e.Data[0] == txn.CodecVersion {
		if p, known := w.st.positions.take(int64(e.Zxid)); known {
			return walSlimForm(p), true
		}
	}
	if w.st.rl != nil {
		return w.st.rl.slim(e)
	}
	return nil, false
}

// Expand implements replica.Slimmer: the proposal, read back from the WAL
// (and, with logs, its payload from the data log) for a slim form.
func (w walStore) Expand(e zab.Entry) ([]byte, error) {
	data := e.Data
	p, slim, err := parseWALSlimForm(data)
	if err != nil {
		return nil, err
	}
	if slim {
		if data, err = w.st.wal.ReadAt(p, int64(e.Zxid)); err != nil {
			return nil, err
		}
		w.st.walReads.Add(1)
	}
	if w.st.rl != nil {
		return w.st.rl.toProposal(data)
	}
	return data, nil
}
