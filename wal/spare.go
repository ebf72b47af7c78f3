package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/corral-db/corral/vfs"
)

// spareName is the file a new segment is prepared in. It is not a segment
// name (parseSegmentName rejects it), so Open never reads it as one; Open
// removes it, since a crash may have left it half zero-filled.
const spareName = "log.next.tmp"

// zeroWrite is the size of the spare's zero writes (vfs.ZeroWrite says why
// 64 KiB).
const zeroWrite = vfs.ZeroWrite

// zeroSyncEvery is how many zero bytes the preparer writes between two
// fdatasyncs of the spare. A foreground fdatasync flushes the disk's queue,
// so the less of the spare that is queued, the less an append waits for
// it. Measured here with a 64 MiB spare filled over and over behind 1 KiB
// append+fdatasync commits: one sync at the end put p90 at 4-23 ms and p99
// at 36-144 ms; a sync every MiB, p90 0.7-1.4 ms and p99 2-7 ms, a 64 MiB
// fill taking ~100-200 ms; every 256 KiB lowered p99 to ~1 ms but raised
// p50 by half and slowed the fill.
const zeroSyncEvery = 1 << 20

// spareState is where the Log stands with its spare file.
type spareState int

const (
	spareNone    spareState = iota // no spare, and none being prepared
	sparePending                   // the preparer is preparing one; its result is due on res
	spareReady                     // the spare is zero-filled and durable
)

// preparer is the goroutine that zero-fills the next segment's file ahead
// of time, so that a roll only renames it. It works on one request at a
// time and touches only the spare file and the directory, never the Log:
// the Log, under its lock, sends a request on kick and takes the outcome
// from res, one request outstanding at most, so neither channel ever
// blocks a sender.
type preparer struct {
	kick chan struct{} // a request to prepare a spare
	res  chan error    // the outcome of a request
	stop chan struct{} // closed by Close
	done chan struct{} // closed when the goroutine has returned
}

func startPreparer(fsys vfs.FS, dir string, size int64) *preparer {
	p := &preparer{
		kick: make(chan struct{}, 1),
		res:  make(chan error, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go p.run(fsys, dir, size)
	return p
}

func (p *preparer) run(fsys vfs.FS, dir string, size int64) {
	defer close(p.done)
	for {
		select {
		case <-p.stop:
			return
		case <-p.kick:
		}
		p.res <- prepareSpare(fsys, dir, size, p.stop)
	}
}

// halt stops the goroutine, interrupting a preparation between two writes,
// and waits for it to return.
func (p *preparer) halt() {
	close(p.stop)
	<-p.done
}

// prepareSpare creates (or truncates) the spare file, fills it with size
// zero bytes, and makes them durable: fdatasync every zeroSyncEvery bytes,
// then SyncDir for its name. Blocks written with zeros, unlike fallocated
// (unwritten) ones, need no metadata update when a record is later written
// over them, so the fdatasync of an append writes data only. A stop closed
// midway returns vfs.ErrStopped; the half-filled file is left for the next
// preparation (which truncates it) or Open (which removes it).
//
// A disk without room for the whole spare fails it before anything is
// written (where the file system reports its free space), and a
// preparation that fails otherwise removes the file: zeros in the last
// free blocks would leave nothing for the writes that could still
// succeed. A member whose log cannot roll stops; the epochs it writes
// when it starts again, before any segment is needed, need that room.
func prepareSpare(fsys vfs.FS, dir string, size int64, stop <-chan struct{}) error {
	name := filepath.Join(dir, spareName)
	if ok, avail := vfs.AvailableAtLeast(fsys, dir, size); !ok {
		if _, err := removeSpare(fsys, dir); err != nil {
			return fmt.Errorf("preparing %s: removing the old one: %w", spareName, err)
		}
		return fmt.Errorf("preparing %s: %d bytes available in %s, a segment needs %d: %w",
			spareName, avail, dir, size, syscall.ENOSPC)
	}
	f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s: %w", spareName, err)
	}
	for off := int64(0); off < size && err == nil; off += zeroSyncEvery {
		err = vfs.WriteZeros(f, off, min(off+zeroSyncEvery, size), stop)
		if err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil && !errors.Is(err, vfs.ErrStopped) {
		fsys.Remove(name) // best effort: its blocks back to the disk
		return fmt.Errorf("preparing %s: %w", spareName, err)
	}
	return err
}

// kickLocked asks the preparer for a spare, if there is a preparer and the
// Log has no spare and none coming.
func (l *Log) kickLocked() {
	if l.prep == nil || l.spare != spareNone {
		return
	}
	l.prep.kick <- struct{}{}
	l.spare = sparePending
}

// takeSpareLocked makes sure the spare is ready: prepared ahead by the
// preparer, or now. It reports whether the caller had to wait for a
// zero-fill: for a preparation still under way, or for one done here
// because the preparer failed or there is none (PrepareInline).
func (l *Log) takeSpareLocked() (waited bool, err error) {
	if l.spare == sparePending {
		select {
		case err = <-l.prep.res:
		default:
			waited = true
			err = <-l.prep.res
		}
		if err == nil {
			l.spare = spareReady
			return waited, nil
		}
		l.spare = spareNone
		l.log.Warn("wal: preparing the next segment in the background failed; preparing it inline", "err", err)
	}
	if l.spare == spareReady {
		return false, nil
	}
	if err := prepareSpare(l.fs, l.dir, l.opts.SegmentSize, nil); err != nil {
		return true, err
	}
	l.spare = spareReady
	return true, nil
}

// growSpare extends the ready spare with zeros to size bytes, durably, for
// a record that does not fit a segment of the usual size.
func (l *Log) growSpare(size int64) error {
	f, err := l.fs.OpenFile(filepath.Join(l.dir, spareName), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = vfs.WriteZeros(f, l.opts.SegmentSize, size, nil)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeSpare removes a spare file, if there is one.
func removeSpare(fsys vfs.FS, dir string) (bool, error) {
	name := filepath.Join(dir, spareName)
	ok, err := vfs.Exists(fsys, name)
	if err != nil || !ok {
		return false, err
	}
	return true, fsys.Remove(name)
}
