package snap

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/corral-db/corral/vfs"
)

const readBufferSize = 256 << 10

// Info describes a snapshot file.
type Info struct {
	Name string // file name within the directory
	Zxid int64
	Size int64 // file size in bytes
}

// Newest lists the snapshots in dir, newest (highest zxid) first. It lists
// by name only (snapshot.<hex>; .tmp and .corrupt files are not
// snapshots); whether a candidate is intact is learnt by reading it. A
// missing directory has no snapshots.
func Newest(fsys vfs.FS, dir string) ([]Info, error) {
	names, err := fsys.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snap: %w", err)
	}
	var infos []Info
	for _, name := range names {
		zxid, ok := parseName(name)
		if !ok {
			continue
		}
		st, err := fsys.Stat(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("snap: %w", err)
		}
		if st.IsDir() {
			continue
		}
		infos = append(infos, Info{Name: name, Zxid: zxid, Size: st.Size()})
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Zxid > infos[j].Zxid })
	return infos, nil
}

// Reader reads a snapshot's body and checks it against the trailer.
type Reader struct {
	f        vfs.File
	info     Info
	br       *bufio.Reader
	bodyLen  int64
	n        int64
	crc      uint32
	verified bool
	err      error
}

// Open opens the snapshot info (from Newest) in dir and checks its header.
// A damaged header or a file too short to hold header and trailer gives an
// error wrapping ErrCorrupt.
func Open(fsys vfs.FS, dir string, info Info) (*Reader, error) {
	f, err := fsys.Open(filepath.Join(dir, info.Name))
	if err != nil {
		return nil, fmt.Errorf("snap: %w", err)
	}
	r, err := newReader(f, info)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return r, nil
}

func newReader(f vfs.File, info Info) (*Reader, error) {
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("snap: %w", err)
	}
	if size < headerSize+trailerSize {
		return nil, fmt.Errorf("%w: %s: %d bytes, too short", ErrCorrupt, info.Name, size)
	}
	var h [headerSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("snap: reading %s: %w", info.Name, err)
	}
	if why := checkHeader(h, info.Zxid); why != "" {
		return nil, fmt.Errorf("%w: %s: %s", ErrCorrupt, info.Name, why)
	}
	bodyLen := size - headerSize - trailerSize
	return &Reader{
		f:       f,
		info:    info,
		bodyLen: bodyLen,
		br:      bufio.NewReaderSize(io.NewSectionReader(f, headerSize, bodyLen), int(min(readBufferSize, max(bodyLen, 16)))),
	}, nil
}

// Zxid returns the snapshot's zxid.
func (r *Reader) Zxid() int64 { return r.info.Zxid }

// Read reads the body. The read that reaches the end of the body first
// checks the trailer; on a mismatch it returns no bytes and an error
// wrapping ErrCorrupt, as does every later call.
func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	rem := r.bodyLen - r.n
	if rem == 0 {
		if !r.verified { // an empty body: nothing was read to trigger the check
			if err := r.verify(); err != nil {
				r.err = err
				return 0, err
			}
			r.verified = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := r.br.Read(p)
	r.crc = crc32.Update(r.crc, castagnoli, p[:n])
	r.n += int64(n)
	if err != nil && err != io.EOF {
		r.err = fmt.Errorf("snap: reading %s: %w", r.info.Name, err)
		return 0, r.err
	}
	if r.n == r.bodyLen {
		if err := r.verify(); err != nil {
			r.err = err
			return 0, err
		}
		r.verified = true
		return n, nil
	}
	if err == io.EOF { // the file shrank under us
		r.err = fmt.Errorf("%w: %s: body ends early", ErrCorrupt, r.info.Name)
		return 0, r.err
	}
	return n, nil
}

func (r *Reader) verify() error {
	var t [trailerSize]byte
	if _, err := r.f.ReadAt(t[:], headerSize+r.bodyLen); err != nil {
		return fmt.Errorf("snap: reading %s: %w", r.info.Name, err)
	}
	switch {
	case [4]byte(t[12:16]) != trailerMagic:
		return fmt.Errorf("%w: %s: no trailer (truncated?)", ErrCorrupt, r.info.Name)
	case int64(le.Uint64(t[0:])) != r.bodyLen:
		return fmt.Errorf("%w: %s: body is %d bytes, trailer says %d", ErrCorrupt, r.info.Name, r.bodyLen, le.Uint64(t[0:]))
	case le.Uint32(t[8:]) != r.crc:
		return fmt.Errorf("%w: %s: body checksum mismatch", ErrCorrupt, r.info.Name)
	}
	return nil
}

// Verified reports whether the whole body has been read and matched the
// trailer.
func (r *Reader) Verified() bool { return r.verified }

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }
