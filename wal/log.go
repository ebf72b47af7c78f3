package wal

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/corral-db/corral/vfs"
)

// Log is an open transaction log. Its methods are safe for concurrent use,
// but the intended use is one writer goroutine doing Append* then Sync.
type Log struct {
	fs   vfs.FS
	dir  string
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	segs     []*segment // oldest first; the last one is cur when cur != nil
	cur      *segment   // the segment open for appending, nil before the first Append or after Roll
	f        vfs.File   // cur's file
	buf      []byte     // encoded records (and a new segment's header) not yet written
	last     int64      // zxid of the last record appended
	dirDirty bool       // a segment was created since the directory was last synced
	err      error      // sticky I/O failure
	closed   bool
	prep     *preparer // nil with Options.PrepareInline

	// ReadAt's own state, under rmu (taken after mu where both are held):
	// its handle on a segment file (or nil), that segment's base, and
	// whether Close has run.
	rmu     sync.Mutex
	rf      vfs.File
	rfBase  int64
	rclosed bool
	spare   spareState
	stats   Stats
}

// Stats counts segment creations since Open.
type Stats struct {
	// Segments is how many segments the Log created.
	Segments int64
	// SpareMisses is how many of those creations made an Append wait for
	// a zero-fill: the background preparation of the spare was not done
	// yet or had failed, Options.PrepareInline is set, or the first record
	// did not fit a segment of Options.SegmentSize.
	SpareMisses int64
}

// fail records err as the Log's sticky failure.
func (l *Log) fail(err error) error {
	if l.err == nil {
		l.err = fmt.Errorf("wal: log failed, reopen to recover: %w", err)
	}
	return l.err
}

func (l *Log) usable() error {
	if l.closed {
		return ErrClosed
	}
	return l.err
}

// Append adds a record. zxid must be greater than every zxid in the log.
// The record is buffered: Flush writes it to the OS, Sync makes it durable.
// data is copied; the caller may reuse it. Append does file I/O only when
// its buffer fills (a write) or a segment fills (the old segment is synced
// and closed, a new one created).
func (l *Log) Append(zxid int64, data []byte) error {
	return l.appendRec(zxid, data, nil)
}

// appendRec is Append, and stores where the record goes in pos if not
// nil. It takes l.mu.
func (l *Log) appendRec(zxid int64, data []byte, pos *Pos) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	if zxid <= l.last {
		return fmt.Errorf("%w: %#x after %#x", ErrOutOfOrder, zxid, l.last)
	}
	if len(data) > l.opts.MaxRecordSize {
		return fmt.Errorf("%w: %d bytes", ErrTooLarge, len(data))
	}
	n := int64(recordHeaderSize + len(data))
	if l.cur != nil && l.cur.end+int64(len(l.buf))+n > l.cur.cap {
		if err := l.sealLocked(); err != nil {
			return err
		}
	}
	if l.cur == nil {
		if err := l.createSegmentLocked(zxid, n); err != nil {
			return err
		}
	}
	if pos != nil {
		*pos = Pos{Base: l.cur.base, Off: l.cur.end + int64(len(l.buf)), Len: len(data)}
	}
	l.buf = appendRecord(l.buf, zxid, data)
	l.cur.last, l.last = zxid, zxid
	if len(l.buf) >= l.opts.BufferSize {
		return l.flushLocked()
	}
	return nil
}

// Flush writes the buffered records to the OS: they survive the process
// dying, not the machine losing power.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	return l.flushLocked()
}

func (l *Log) flushLocked() error {
	if len(l.buf) == 0 {
		return nil
	}
	if _, err := l.f.WriteAt(l.buf, l.cur.end); err != nil {
		return l.fail(fmt.Errorf("writing segment %s: %w", segmentName(l.cur.base), err))
	}
	l.cur.end += int64(len(l.buf))
	if cap(l.buf) > 4*l.opts.BufferSize {
		l.buf = nil // one huge record must not pin its buffer forever
	} else {
		l.buf = l.buf[:0]
	}
	return nil
}

// Sync flushes and makes every appended record durable: one fdatasync of
// the current segment, and a sync of the directory if a segment was created
// since the last one.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	return l.syncLocked()
}

func (l *Log) syncLocked() error {
	if err := l.flushLocked(); err != nil {
		return err
	}
	if l.f != nil {
		if err := l.f.Sync(); err != nil {
			return l.fail(fmt.Errorf("syncing segment %s: %w", segmentName(l.cur.base), err))
		}
	}
	if l.dirDirty {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return l.fail(fmt.Errorf("syncing directory: %w", err))
		}
		l.dirDirty = false
	}
	// After a roll, ask for the next spare only now that the new segment's
	// name is durable: the directory sync above then does not compete with
	// the spare's zero-fill for the journal.
	l.kickLocked()
	return nil
}

// Roll syncs and closes the current segment; the next Append starts a new
// one.
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	return l.sealLocked()
}

// LastZxid returns the zxid of the last record in the log (appended, if not
// yet durable), or 0 if the log is empty.
func (l *Log) LastZxid() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// FirstZxid returns the zxid of the first record in the log, or 0 if the
// log is empty.
func (l *Log) FirstZxid() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.segs) == 0 {
		return 0
	}
	return l.segs[0].base
}

// Close syncs the log and closes its files. After a failure it only
// closes, and returns the failure.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.prep != nil {
		l.prep.halt() // first, so that the final sync asks for no spare
		l.prep = nil
	}
	err := l.err
	if err == nil {
		err = l.syncLocked()
	}
	if cerr := l.closeFile(); err == nil && cerr != nil {
		err = fmt.Errorf("wal: %w", cerr)
	}
	if cerr := l.closeReader(true); err == nil && cerr != nil {
		err = cerr
	}
	// The spare, ready or half-filled, is not part of the log; Open would
	// remove it anyway.
	if _, rerr := removeSpare(l.fs, l.dir); rerr != nil {
		l.log.Warn("wal: removing spare segment file", "err", rerr)
	}
	l.closed = true
	return err
}

// Stats returns the Log's counters.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

func (l *Log) closeFile() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.cur, l.f = nil, nil
	return err
}
