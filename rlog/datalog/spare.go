package datalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/corral-db/corral/vfs"
)

type spareState int

const (
	spareNone    spareState = iota // no spare, none being prepared
	sparePending                   // the preparer owes a result on res
	spareReady                     // the spare is allocated and durable
)

// preparer allocates the next segment's file ahead of time. It touches
// only the spare file and the directory; the Log, holding wmu, sends one
// request on kick and takes its outcome from res, so neither blocks.
type preparer struct {
	kick chan struct{}
	res  chan error
	stop chan struct{}
	done chan struct{}
}

func startPreparer(fsys vfs.FS, dir string, size int64) *preparer {
	p := &preparer{
		kick: make(chan struct{}, 1),
		res:  make(chan error, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			case <-p.kick:
			}
			p.res <- prepareSpare(fsys, dir, size, p.stop)
		}
	}()
	return p
}

func (p *preparer) halt() {
	close(p.stop)
	<-p.done
}

// prepareSpare creates (or truncates) the spare, allocates size bytes
// that read as zeros (fallocate: unwritten extents, no data written; see
// "Preallocation" in doc.go), makes them and the size durable, then the
// name. stop is checked before each step that writes.
func prepareSpare(fsys vfs.FS, dir string, size int64, stop <-chan struct{}) error {
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	if stopped() {
		return vfs.ErrStopped
	}
	name := filepath.Join(dir, spareName)
	// A disk without room for the spare fails it before the allocation:
	// an allocation that runs out of room takes the last free blocks
	// while it runs (tmpfs gives them back after; ext4 may keep what it
	// got), failing a small write meanwhile, such as the epochs a member
	// writes as it starts.
	if ok, avail := vfs.AvailableAtLeast(fsys, dir, size); !ok {
		if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("preparing %s: removing the old one: %w", spareName, err)
		}
		return fmt.Errorf("preparing %s: %d bytes available in %s, a segment needs %d: %w",
			spareName, avail, dir, size, syscall.ENOSPC)
	}
	f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s: %w", spareName, err)
	}
	err = f.Preallocate(size)
	if err == nil && stopped() {
		err = vfs.ErrStopped
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil && !errors.Is(err, vfs.ErrStopped) {
		// Best effort: a partly allocated file must not keep the disk's
		// last free blocks from the writes that could still succeed.
		fsys.Remove(name)
		return fmt.Errorf("preparing %s: %w", spareName, err)
	}
	return err
}

// kickPreparer asks for the next spare. wmu is held.
func (l *Log) kickPreparer() {
	if l.prep == nil || l.spare != spareNone {
		return
	}
	l.prep.kick <- struct{}{}
	l.spare = sparePending
}

// takeSpare returns once the spare file exists, allocated and durable,
// with at least size bytes. wmu is held.
func (l *Log) takeSpare(size int64) error {
	if l.spare == sparePending {
		if err := <-l.prep.res; err == nil {
			l.spare = spareReady
		} else {
			l.spare = spareNone
			l.log.Warn("datalog: spare preparation failed; preparing inline", "err", err)
		}
	}
	if l.spare != spareReady || size > l.opts.SegmentSize {
		if err := prepareSpare(l.fs, l.dir, size, nil); err != nil {
			return err
		}
		l.spare = spareReady
	}
	return nil
}
