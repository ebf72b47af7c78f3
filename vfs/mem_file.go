package vfs

import (
	"io"
	"io/fs"
)

// change applies op to the file's visible content and remembers it until
// the next Sync.
func (n *memNode) change(op fileOp) {
	n.data = applyFileOp(n.data, op)
	n.pending = append(n.pending, op)
}

// sync makes every pending change durable.
func (n *memNode) sync() {
	for _, op := range n.pending {
		n.durable = applyFileOp(n.durable, op)
	}
	n.pending = nil
}

func applyFileOp(b []byte, op fileOp) []byte {
	if op.trunc {
		return resize(b, op.size)
	}
	end := op.off + int64(len(op.data))
	if end > int64(len(b)) {
		b = resize(b, end)
	}
	copy(b[op.off:], op.data)
	return b
}

// resize sets len(b) to size; bytes beyond the old length read as zeros
// even when the backing array held older data.
func resize(b []byte, size int64) []byte {
	old := int64(len(b))
	if size <= old {
		return b[:size]
	}
	if size <= int64(cap(b)) {
		b = b[:size]
		clear(b[old:])
		return b
	}
	nb := make([]byte, size, max(size, 2*int64(cap(b))))
	copy(nb, b)
	return nb
}

// memFile is a handle on a memNode.
type memFile struct {
	m      *MemFS
	node   *memNode
	name   string
	gen    uint64
	pos    int64
	read   bool
	write  bool
	closed bool
}

// check returns why the handle cannot be used for op, if it cannot. The
// caller holds m.mu.
func (f *memFile) check(op string) error {
	switch {
	case f.closed:
		return pathErr(op, f.name, fs.ErrClosed)
	case f.gen != f.m.gen:
		return pathErr(op, f.name, ErrCrashed)
	}
	return nil
}

func (f *memFile) checkWrite(op string) error {
	if err := f.check(op); err != nil {
		return err
	}
	if !f.write {
		return pathErr(op, f.name, fs.ErrPermission)
	}
	return nil
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) Read(p []byte) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	n, err := f.readAt(p, f.pos)
	f.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return f.readAt(p, off)
}

func (f *memFile) readAt(p []byte, off int64) (int, error) {
	if err := f.check("read"); err != nil {
		return 0, err
	}
	if !f.read {
		return 0, pathErr("read", f.name, fs.ErrPermission)
	}
	if off < 0 {
		return 0, pathErr("read", f.name, fs.ErrInvalid)
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	n, err := f.writeAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return f.writeAt(p, off)
}

func (f *memFile) writeAt(p []byte, off int64) (int, error) {
	if err := f.checkWrite("write"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("write", f.name, fs.ErrInvalid)
	}
	if len(p) == 0 {
		return 0, nil
	}
	f.node.change(fileOp{off: off, data: append([]byte(nil), p...)})
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("sync"); err != nil {
		return err
	}
	f.node.sync()
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.checkWrite("truncate"); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, fs.ErrInvalid)
	}
	f.node.change(fileOp{trunc: true, size: size})
	return nil
}

func (f *memFile) Preallocate(size int64) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.checkWrite("preallocate"); err != nil {
		return err
	}
	if size > int64(len(f.node.data)) {
		f.node.change(fileOp{trunc: true, size: size})
	}
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("stat"); err != nil {
		return 0, err
	}
	return int64(len(f.node.data)), nil
}

func (f *memFile) Close() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, fs.ErrClosed)
	}
	f.closed = true
	return nil
}
