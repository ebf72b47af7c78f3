package datalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/corral-db/corral/vfs"
)

// segment is what the Log knows about one segment file.
type segment struct {
	seq  uint64
	end  int64    // offset just after its last record
	cap  int64    // its preallocated size
	live int64    // bytes of its records not yet released
	f    vfs.File // read-write handle, open while the segment exists
}

// Log is an open data log. It is safe for concurrent use: any number of
// readers, appenders serialized among themselves, one flusher goroutine.
//
// Lock order: wmu, then smu, then rmu, then mu.
type Log struct {
	fs   vfs.FS
	dir  string
	opts Options
	log  *slog.Logger

	// wmu serializes writers (Append, Cut, Close): only its holder writes
	// segment files, rolls, or uses the spare.
	wmu   sync.Mutex
	spare spareState // guarded by wmu
	prep  *preparer  // nil with PrepareInline

	// smu serializes syncOnce, so that OnSync sees increasing positions.
	smu sync.Mutex

	// rmu is held shared while a segment's handle is used outside mu (a
	// read, the flusher's sync) and exclusively to close one.
	rmu sync.RWMutex

	mu sync.Mutex
	// Guarded by mu. cur and segs change only under wmu as well, so a
	// writer may read them holding wmu alone.
	segs     []*segment // by seq; the last is the current one
	cur      *segment
	written  Pos   // end of the last written record
	synced   Pos   // end of the last synced record
	wTotal   int64 // bytes ever written
	sTotal   int64 // bytes ever synced (of wTotal)
	err      error // sticky failure
	closed   bool
	changed  chan struct{} // closed and replaced when synced, err or closed change
	reported Pos           // the last position handed to OnSync
	syncing  bool          // a sync runs that makes syncTo durable
	syncTo   Pos

	kick  chan struct{} // a sync is wanted now (a waiter, SyncBytes); capacity 1
	wrote chan struct{} // something was written: sync within SyncDelay; capacity 1
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the flusher has returned
}

func (l *Log) path(seq uint64) string { return filepath.Join(l.dir, segmentName(seq)) }

// Append writes one record and returns its position and the position just
// after it; it does not wait for the record to be synced (see WaitSynced).
// It blocks while the bytes in flight would exceed Options.MaxInflight,
// until they drain or ctx is done.
func (l *Log) Append(ctx context.Context, m Meta, payload []byte) (pos, end Pos, err error) {
	return l.AppendSummed(ctx, m, payload, PayloadSum(payload))
}

// AppendSummed is Append for a caller that has the payload's CRC-32C
// (PayloadSum) already: the record's checksum is derived from it instead
// of from another pass over the payload. A wrong sum makes a record that
// fails its check when read.
func (l *Log) AppendSummed(ctx context.Context, m Meta, payload []byte, sum uint32) (pos, end Pos, err error) {
	if len(payload) == 0 {
		return Pos{}, Pos{}, ErrEmpty
	}
	if len(payload) > l.opts.MaxRecordSize {
		return Pos{}, Pos{}, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(payload), l.opts.MaxRecordSize)
	}
	size := RecordSize(len(payload))
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := l.waitRoom(ctx, size); err != nil {
		return Pos{}, Pos{}, err
	}
	cur := l.cur
	if cur == nil || cur.end+size > cur.cap {
		if err := l.roll(size); err != nil {
			return Pos{}, Pos{}, err
		}
		cur = l.cur
	}
	off := cur.end
	h := encodeRecordHeader(m, len(payload), sum)
	if _, err := cur.f.WriteAt(h[:], off); err != nil {
		return Pos{}, Pos{}, l.fail(fmt.Errorf("writing %s at offset %d: %w", segmentName(cur.seq), off, err))
	}
	if _, err := cur.f.WriteAt(payload, off+recordHeaderSize); err != nil {
		return Pos{}, Pos{}, l.fail(fmt.Errorf("writing %s at offset %d: %w", segmentName(cur.seq), off, err))
	}
	l.mu.Lock()
	cur.end = off + size
	cur.live += size
	l.written = Pos{cur.seq, cur.end}
	l.wTotal += size
	full := l.wTotal-l.sTotal >= l.opts.SyncBytes
	l.mu.Unlock()
	if full {
		l.wantSync()
	} else {
		select {
		case l.wrote <- struct{}{}:
		default:
		}
	}
	return Pos{cur.seq, off}, Pos{cur.seq, off + size}, nil
}

// waitRoom waits until size more bytes fit in flight (or nothing is in
// flight, for a record larger than the bound). wmu is held.
func (l *Log) waitRoom(ctx context.Context, size int64) error {
	for {
		l.mu.Lock()
		if err := l.usableLocked(); err != nil {
			l.mu.Unlock()
			return err
		}
		inflight := l.wTotal - l.sTotal
		if inflight == 0 || inflight+size <= l.opts.MaxInflight {
			l.mu.Unlock()
			return nil
		}
		ch := l.changed
		l.mu.Unlock()
		l.wantSync()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// wantSync asks the flusher for a sync now.
func (l *Log) wantSync() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

func (l *Log) usableLocked() error {
	if l.err != nil {
		return l.err
	}
	if l.closed {
		return ErrClosed
	}
	return nil
}

// roll makes the current segment durable and starts the next one, in the
// spare file renamed. wmu is held.
func (l *Log) roll(size int64) error {
	if old := l.cur; old != nil {
		// Only the last segment may hold unsynced bytes.
		if err := old.f.Sync(); err != nil {
			return l.fail(fmt.Errorf("syncing %s: %w", segmentName(old.seq), err))
		}
		l.mu.Lock()
		if l.synced.Less(l.written) {
			l.synced = l.written
		}
		l.sTotal = l.wTotal
		l.notifyLocked()
		l.mu.Unlock()
	}
	var seq uint64 = 1
	if n := len(l.segs); n > 0 {
		seq = l.segs[n-1].seq + 1
	}
	capacity := max(l.opts.SegmentSize, headerSize+size)
	if err := l.takeSpare(capacity); err != nil {
		return l.fail(fmt.Errorf("preparing %s: %w", segmentName(seq), err))
	}
	name := l.path(seq)
	if err := l.fs.Rename(filepath.Join(l.dir, spareName), name); err != nil {
		return l.fail(fmt.Errorf("creating %s: %w", segmentName(seq), err))
	}
	l.spare = spareNone
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.fail(fmt.Errorf("creating %s: %w", segmentName(seq), err))
	}
	f, err := l.fs.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return l.fail(fmt.Errorf("opening %s: %w", segmentName(seq), err))
	}
	h := encodeHeader(seq)
	if _, err := f.WriteAt(h[:], 0); err != nil {
		f.Close()
		return l.fail(fmt.Errorf("writing %s: %w", segmentName(seq), err))
	}
	seg := &segment{seq: seq, end: headerSize, cap: capacity, f: f}
	l.mu.Lock()
	old := l.cur
	l.segs = append(l.segs, seg)
	l.cur = seg
	l.written = Pos{seq, headerSize}
	l.mu.Unlock()
	l.kickPreparer()
	if old != nil && old.live <= 0 {
		l.drop(old, false)
	}
	return nil
}

// fail records a sticky error and returns it.
func (l *Log) fail(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failLocked(err)
}

func (l *Log) failLocked(err error) error {
	if l.err == nil {
		l.err = fmt.Errorf("datalog: %w", err)
		l.notifyLocked()
	}
	return l.err
}

func (l *Log) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Synced returns the end of the last record known durable.
func (l *Log) Synced() Pos {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.synced
}

// Written returns the end of the last record written.
func (l *Log) Written() Pos {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.written
}

// Inflight returns the bytes written but not yet synced.
func (l *Log) Inflight() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wTotal - l.sTotal
}

// WaitSynced waits until every record ending at or before end is durable.
func (l *Log) WaitSynced(ctx context.Context, end Pos) error {
	for {
		l.mu.Lock()
		if !l.synced.Less(end) {
			l.mu.Unlock()
			return nil
		}
		if err := l.usableLocked(); err != nil {
			l.mu.Unlock()
			return err
		}
		// A sync already running that covers end needs no other.
		covered := l.syncing && !l.syncTo.Less(end)
		ch := l.changed
		l.mu.Unlock()
		if !covered {
			l.wantSync()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Flush syncs everything written so far and returns the synced end. The
// flusher does this by itself; Flush is for a forced sync and for logs
// opened with NoFlusher.
func (l *Log) Flush() (Pos, error) {
	p, err := l.syncOnce()
	if err != nil {
		return Pos{}, err
	}
	return p, nil
}

// syncOnce syncs the current segment and advances the synced end to what
// was written before the sync began, calling OnSync if it moved past what
// was last reported.
func (l *Log) syncOnce() (Pos, error) {
	l.smu.Lock()
	defer l.smu.Unlock()
	l.rmu.RLock()
	l.mu.Lock()
	if err := l.usableLocked(); err != nil {
		l.mu.Unlock()
		l.rmu.RUnlock()
		return Pos{}, err
	}
	w, total, seg := l.written, l.wTotal, l.cur
	if !l.synced.Less(w) || seg == nil {
		s := l.synced
		l.mu.Unlock()
		l.rmu.RUnlock()
		return s, nil
	}
	l.syncing, l.syncTo = true, w
	l.mu.Unlock()
	err := seg.f.Sync()
	l.rmu.RUnlock()
	l.mu.Lock()
	l.syncing = false
	if err != nil {
		err = l.failLocked(fmt.Errorf("syncing %s: %w", segmentName(seg.seq), err))
		l.mu.Unlock()
		return Pos{}, err
	}
	if l.synced.Less(w) {
		l.synced = w
	}
	if total > l.sTotal {
		l.sTotal = total
	}
	l.notifyLocked()
	report := l.reported.Less(l.synced)
	s := l.synced
	if report {
		l.reported = s
	}
	l.mu.Unlock()
	if report && l.opts.OnSync != nil {
		l.opts.OnSync(s)
	}
	return s, nil
}

// flush is the flusher goroutine. It syncs when asked (a waiter, or
// SyncBytes in flight) and otherwise SyncDelay after a write, so the
// writes between two syncs share one: a sync per write would add
// fdatasyncs the WAL's group does not need (each member's WAL sync waits
// for the data log's, docs/design/rlog.md).
func (l *Log) flush() {
	defer close(l.done)
	timer := time.NewTimer(l.opts.SyncDelay)
	timer.Stop()
	armed := false
	for {
		select {
		case <-l.stop:
			timer.Stop()
			return
		case <-l.wrote:
			if !armed {
				timer.Reset(l.opts.SyncDelay)
				armed = true
			}
			continue
		case <-timer.C:
			armed = false
		case <-l.kick:
		}
		for {
			if _, err := l.syncOnce(); err != nil {
				break // sticky: every waiter and writer sees it
			}
			l.mu.Lock()
			inflight := l.wTotal - l.sTotal
			l.mu.Unlock()
			if inflight < l.opts.SyncBytes {
				// What was written during the sync waits for its delay
				// or a waiter.
				if inflight > 0 && !armed {
					timer.Reset(l.opts.SyncDelay)
					armed = true
				} else if inflight == 0 && armed {
					timer.Stop()
					armed = false
				}
				break
			}
		}
	}
}

// Read returns the meta and payload of the record at p, after checking its
// checksum.
func (l *Log) Read(p Pos) (Meta, []byte, error) {
	l.rmu.RLock()
	defer l.rmu.RUnlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return Meta{}, nil, ErrClosed
	}
	seg := l.findLocked(p.Seg)
	var limit int64
	if seg != nil {
		limit = seg.end
	}
	l.mu.Unlock()
	if seg == nil || p.Off < headerSize || p.Off+recordHeaderSize > limit {
		return Meta{}, nil, fmt.Errorf("%w: %s", ErrNotFound, p)
	}
	var h [recordHeaderSize]byte
	if _, err := seg.f.ReadAt(h[:], p.Off); err != nil {
		return Meta{}, nil, fmt.Errorf("datalog: reading %s at offset %d: %w", segmentName(seg.seq), p.Off, err)
	}
	ph, st, why := parseRecordHeader(h[:], limit-p.Off-recordHeaderSize)
	if st != recOK {
		if why == "" {
			why = "no record"
		}
		return Meta{}, nil, fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, segmentName(seg.seq), p.Off, why)
	}
	payload := make([]byte, ph.length)
	if _, err := seg.f.ReadAt(payload, p.Off+recordHeaderSize); err != nil {
		return Meta{}, nil, fmt.Errorf("datalog: reading %s at offset %d: %w", segmentName(seg.seq), p.Off, err)
	}
	if !checkPayload(h[:], ph, payload) {
		return Meta{}, nil, fmt.Errorf("%w: %s at offset %d: record checksum mismatch", ErrCorrupt, segmentName(seg.seq), p.Off)
	}
	return ph.meta, payload, nil
}

func (l *Log) findLocked(seq uint64) *segment {
	i, ok := slices.BinarySearchFunc(l.segs, seq, func(s *segment, seq uint64) int {
		switch {
		case s.seq < seq:
			return -1
		case s.seq > seq:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return l.segs[i]
}

// Release says that n bytes of records in segment seq (as counted by
// RecordSize) are no longer needed. A segment other than the current one
// whose records are all released is removed.
func (l *Log) Release(seq uint64, n int64) error {
	l.mu.Lock()
	seg := l.findLocked(seq)
	if seg == nil {
		l.mu.Unlock()
		return nil
	}
	seg.live -= n
	dead := seg.live <= 0 && seg != l.cur
	l.mu.Unlock()
	if dead {
		return l.drop(seg, false)
	}
	return nil
}

// drop removes a segment that is not the current one (or any, with
// force, which Cut uses holding wmu).
func (l *Log) drop(seg *segment, force bool) error {
	l.rmu.Lock()
	l.mu.Lock()
	i := slices.Index(l.segs, seg)
	if i < 0 || (seg == l.cur && !force) {
		l.mu.Unlock()
		l.rmu.Unlock()
		return nil
	}
	l.segs = slices.Delete(l.segs, i, i+1)
	l.mu.Unlock()
	seg.f.Close()
	err := l.fs.Remove(l.path(seg.seq))
	l.rmu.Unlock()
	if err == nil {
		err = l.fs.SyncDir(l.dir)
	}
	if err != nil {
		return fmt.Errorf("datalog: removing %s: %w", segmentName(seg.seq), err)
	}
	l.log.Debug("datalog: removed released segment", "segment", segmentName(seg.seq))
	return nil
}

// SegmentInfo describes one segment, for stats and tests.
type SegmentInfo struct {
	Seq  uint64
	End  int64
	Live int64
}

// Segments lists the segments.
func (l *Log) Segments() []SegmentInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]SegmentInfo, len(l.segs))
	for i, s := range l.segs {
		out[i] = SegmentInfo{Seq: s.seq, End: s.end, Live: s.live}
	}
	return out
}

// Close syncs what was written, stops the goroutines and closes the files.
func (l *Log) Close() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_, ferr := l.syncOnce()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	l.notifyLocked()
	l.mu.Unlock()
	if l.done != nil {
		close(l.stop)
		<-l.done
	}
	if l.prep != nil {
		l.prep.halt()
	}
	l.rmu.Lock()
	for _, s := range l.segs {
		s.f.Close()
	}
	l.rmu.Unlock()
	if ferr != nil && ferr != ErrClosed {
		return ferr
	}
	return nil
}

// ErrEndOfSegment is returned by Next at the end of a segment's records.
var ErrEndOfSegment = errors.New("datalog: end of segment")

// Next reads the header of the record at p (not its payload, nor its
// checksum: Read checks that) and returns its meta, payload length and the
// position after it. At the end of p's segment it returns ErrEndOfSegment.
func (l *Log) Next(p Pos) (m Meta, n int, next Pos, err error) {
	l.rmu.RLock()
	defer l.rmu.RUnlock()
	l.mu.Lock()
	seg := l.findLocked(p.Seg)
	var limit int64
	if seg != nil {
		limit = seg.end
	}
	l.mu.Unlock()
	if seg == nil || p.Off < headerSize {
		return Meta{}, 0, Pos{}, fmt.Errorf("%w: %s", ErrNotFound, p)
	}
	if p.Off+recordHeaderSize > limit {
		return Meta{}, 0, Pos{}, ErrEndOfSegment
	}
	var h [recordHeaderSize]byte
	if _, err := seg.f.ReadAt(h[:], p.Off); err != nil {
		return Meta{}, 0, Pos{}, fmt.Errorf("datalog: reading %s at offset %d: %w", segmentName(seg.seq), p.Off, err)
	}
	ph, st, why := parseRecordHeader(h[:], limit-p.Off-recordHeaderSize)
	if st != recOK {
		if why == "" {
			why = "no record"
		}
		return Meta{}, 0, Pos{}, fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, segmentName(seg.seq), p.Off, why)
	}
	return ph.meta, int(ph.length), Pos{p.Seg, p.Off + RecordSize(int(ph.length))}, nil
}
