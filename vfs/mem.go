package vfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"
)

// MemFS is an in-memory FS that models what a crash keeps. It is safe for
// concurrent use.
//
// Model: a file's content is durable as of its last File.Sync; a directory's
// entries (creations, renames, removals of files) are durable as of its
// last SyncDir. Directories themselves are durable as soon as MkdirAll
// returns (a simplification: wal and snap create their directory once).
// Crash and CrashRandom replace the volatile state with what a crash would
// leave, and invalidate every open handle.
type MemFS struct {
	mu   sync.Mutex
	gen  uint64 // incremented by each crash; handles of older generations are dead
	dirs map[string]*memDir
}

// memDir is one directory's file entries.
type memDir struct {
	live    map[string]*memNode
	durable map[string]*memNode
	pending []dirOp // changes to live since the last SyncDir, in order
}

// dirOp sets name to node (node nil: removes name) and, if del is set, also
// removes del: a rename within one directory is one atomic op.
type dirOp struct {
	name string
	node *memNode
	del  string
}

// memNode is a file's content.
type memNode struct {
	data    []byte   // what reads see
	durable []byte   // what a crash keeps; never aliases data
	pending []fileOp // changes since the last Sync, in order
}

// fileOp is a write of data at off, or (trunc) a resize to size.
type fileOp struct {
	trunc bool
	off   int64
	size  int64
	data  []byte
}

// NewMem returns an empty MemFS with the roots "." and "/".
func NewMem() *MemFS {
	m := &MemFS{dirs: map[string]*memDir{}}
	m.dirs["."] = newMemDir()
	m.dirs[string(filepath.Separator)] = newMemDir()
	return m
}

func newMemDir() *memDir {
	return &memDir{live: map[string]*memNode{}, durable: map[string]*memNode{}}
}

func (d *memDir) apply(op dirOp) {
	applyDirOp(d.live, op)
}

func applyDirOp(entries map[string]*memNode, op dirOp) {
	if op.node == nil {
		delete(entries, op.name)
	} else {
		entries[op.name] = op.node
	}
	if op.del != "" {
		delete(entries, op.del)
	}
}

func (d *memDir) change(op dirOp) {
	d.apply(op)
	d.pending = append(d.pending, op)
}

func split(name string) (dir, base string) {
	name = filepath.Clean(name)
	return filepath.Dir(name), filepath.Base(name)
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// lookup returns the directory holding name and name's base, or an error
// if the directory does not exist.
func (m *MemFS) lookup(op, name string) (*memDir, string, error) {
	dir, base := split(name)
	d, ok := m.dirs[dir]
	if !ok {
		return nil, "", pathErr(op, name, fs.ErrNotExist)
	}
	return d, base, nil
}

func (m *MemFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag&^supportedFlags != 0 {
		return nil, pathErr("open", name, fmt.Errorf("vfs: unsupported open flags %#x", flag&^supportedFlags))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, isDir := m.dirs[filepath.Clean(name)]; isDir {
		return nil, pathErr("open", name, fmt.Errorf("vfs: is a directory"))
	}
	d, base, err := m.lookup("open", name)
	if err != nil {
		return nil, err
	}
	acc := flag & accessFlags
	n, ok := d.live[base]
	switch {
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, pathErr("open", name, fs.ErrExist)
	case !ok && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, fs.ErrNotExist)
	case !ok:
		n = &memNode{}
		d.change(dirOp{name: base, node: n})
	}
	f := &memFile{
		m:     m,
		node:  n,
		name:  name,
		gen:   m.gen,
		read:  acc == os.O_RDONLY || acc == os.O_RDWR,
		write: acc == os.O_WRONLY || acc == os.O_RDWR,
	}
	if flag&os.O_TRUNC != 0 && f.write && len(n.data) > 0 {
		n.change(fileOp{trunc: true, size: 0})
	}
	return f, nil
}

func (m *MemFS) Create(name string) (File, error) {
	return m.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (m *MemFS) Open(name string) (File, error) { return m.OpenFile(name, os.O_RDONLY, 0) }

func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	clean := filepath.Clean(name)
	if d, ok := m.dirs[clean]; ok {
		if len(d.live) > 0 || len(m.subdirs(clean)) > 0 {
			return pathErr("remove", name, fmt.Errorf("vfs: directory not empty"))
		}
		delete(m.dirs, clean)
		return nil
	}
	d, base, err := m.lookup("remove", name)
	if err != nil {
		return err
	}
	if _, ok := d.live[base]; !ok {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	d.change(dirOp{name: base})
	return nil
}

func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, isDir := m.dirs[filepath.Clean(oldname)]; isDir {
		return pathErr("rename", oldname, fmt.Errorf("vfs: MemFS cannot rename directories"))
	}
	if _, isDir := m.dirs[filepath.Clean(newname)]; isDir {
		return pathErr("rename", newname, fmt.Errorf("vfs: is a directory"))
	}
	od, obase, err := m.lookup("rename", oldname)
	if err != nil {
		return err
	}
	nd, nbase, err := m.lookup("rename", newname)
	if err != nil {
		return err
	}
	n, ok := od.live[obase]
	if !ok {
		return pathErr("rename", oldname, fs.ErrNotExist)
	}
	switch {
	case od == nd && obase == nbase:
	case od == nd:
		od.change(dirOp{name: nbase, node: n, del: obase})
	default:
		nd.change(dirOp{name: nbase, node: n})
		od.change(dirOp{name: obase})
	}
	return nil
}

func (m *MemFS) MkdirAll(dir string, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = filepath.Clean(dir)
	var chain []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, ok := m.dirs[p]; ok {
			break
		}
		chain = append(chain, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for _, p := range slices.Backward(chain) {
		parent, base := split(p)
		if pd, ok := m.dirs[parent]; ok {
			if _, isFile := pd.live[base]; isFile {
				return pathErr("mkdir", p, fmt.Errorf("vfs: not a directory"))
			}
		}
		m.dirs[p] = newMemDir()
	}
	return nil
}

// subdirs returns the names of dir's direct subdirectories.
func (m *MemFS) subdirs(dir string) []string {
	var names []string
	for p := range m.dirs {
		if p != dir && filepath.Dir(p) == dir {
			names = append(names, filepath.Base(p))
		}
	}
	return names
}

func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	clean := filepath.Clean(dir)
	d, ok := m.dirs[clean]
	if !ok {
		return nil, pathErr("open", dir, fs.ErrNotExist)
	}
	names := m.subdirs(clean)
	for name := range d.live {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

func (m *MemFS) Stat(name string) (fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	clean := filepath.Clean(name)
	if _, ok := m.dirs[clean]; ok {
		return memInfo{name: filepath.Base(clean), dir: true}, nil
	}
	d, base, err := m.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	n, ok := d.live[base]
	if !ok {
		return nil, pathErr("stat", name, fs.ErrNotExist)
	}
	return memInfo{name: base, size: int64(len(n.data))}, nil
}

func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.dirs[filepath.Clean(dir)]
	if !ok {
		return pathErr("sync", dir, fs.ErrNotExist)
	}
	for _, op := range d.pending {
		applyDirOp(d.durable, op)
	}
	d.pending = nil
	return nil
}

// memInfo is the fs.FileInfo of a MemFS entry.
type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return time.Time{} } // MemFS has no clock
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
