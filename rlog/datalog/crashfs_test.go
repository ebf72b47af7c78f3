package datalog

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/corral-db/corral/vfs"
)

var errCrashed = errors.New("crashed")

// crashFS wraps a MemFS and crashes it (CrashRandom, or Crash when rng is
// nil) just before its crashAt-th mutating call (write, sync, truncate,
// preallocate, create, rename, remove, syncdir); that call and every later
// one fail. crashAt 0 never crashes; steps counts the mutating calls.
type crashFS struct {
	mem     *vfs.MemFS
	rng     *rand.Rand
	mu      sync.Mutex
	crashAt int
	steps   int
	crashed bool
}

func (c *crashFS) step() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return errCrashed
	}
	c.steps++
	if c.crashAt > 0 && c.steps == c.crashAt {
		c.crashed = true
		if c.rng != nil {
			c.mem.CrashRandom(c.rng)
		} else {
			c.mem.Crash()
		}
		return errCrashed
	}
	return nil
}

func (c *crashFS) dead() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return errCrashed
	}
	return nil
}

func (c *crashFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	var err error
	if flag&(os.O_CREATE|os.O_TRUNC) != 0 {
		err = c.step()
	} else {
		err = c.dead()
	}
	if err != nil {
		return nil, err
	}
	f, err := c.mem.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &crashFile{File: f, c: c}, nil
}

func (c *crashFS) Create(name string) (vfs.File, error) {
	return c.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}
func (c *crashFS) Open(name string) (vfs.File, error) { return c.OpenFile(name, os.O_RDONLY, 0) }
func (c *crashFS) Remove(name string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.mem.Remove(name)
}
func (c *crashFS) Rename(o, n string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.mem.Rename(o, n)
}
func (c *crashFS) MkdirAll(dir string, perm fs.FileMode) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.mem.MkdirAll(dir, perm)
}
func (c *crashFS) List(dir string) ([]string, error) {
	if err := c.dead(); err != nil {
		return nil, err
	}
	return c.mem.List(dir)
}
func (c *crashFS) Stat(name string) (fs.FileInfo, error) {
	if err := c.dead(); err != nil {
		return nil, err
	}
	return c.mem.Stat(name)
}
func (c *crashFS) SyncDir(dir string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.mem.SyncDir(dir)
}

type crashFile struct {
	vfs.File
	c *crashFS
}

func (f *crashFile) Write(p []byte) (int, error) {
	if err := f.c.step(); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}
func (f *crashFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.c.step(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}
func (f *crashFile) Sync() error {
	if err := f.c.step(); err != nil {
		return err
	}
	return f.File.Sync()
}
func (f *crashFile) Truncate(size int64) error {
	if err := f.c.step(); err != nil {
		return err
	}
	return f.File.Truncate(size)
}
func (f *crashFile) Preallocate(size int64) error {
	if err := f.c.step(); err != nil {
		return err
	}
	return f.File.Preallocate(size)
}
