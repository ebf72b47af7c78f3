package rlog

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/zab"
)

// Two images share one encoding (little-endian, varints as in Encode):
//
//	magic "corralrs" | kind u8 | applied zxid i64 | logs uvarint |
//	per log: name | id | start | end | sealed u8 | last (off, n, sum u32) |
//	  local kind:    points (n | off seg pos ...) | segs (n | seg bytes end ...) |
//	                 dead (n | zxid seg ...)
//	portable kind, after every log's metadata: per log, its bytes from
//	  start to end in chunks: length uvarint (0 ends the log) | bytes
//	CRC32C of everything before u32
//
// The local image (Snapshot) holds this member's data-log positions and
// no payload: the data log is beside it. The portable image
// (WriteSnapshot, for a learner's SNAP) holds no position, only bytes.
const (
	snapLocal    = 1
	snapPortable = 2
	snapFile     = "rlog.snap"
	snapTmp      = "rlog.snap.tmp"
	chunkSize    = 1 << 20
)

var snapMagic = [8]byte{'c', 'o', 'r', 'r', 'a', 'l', 'r', 's'}

type imageLog struct {
	st   Stat
	last lastAppend
	x    index
}

type image struct {
	kind    byte
	applied zab.Zxid
	logs    []imageLog
}

// captureLocked copies what an image needs; slices are copied, so the
// image stays valid while Apply goes on.
func (s *State) captureLocked(kind byte) image {
	img := image{kind: kind, applied: s.applied}
	for _, st := range s.listLocked() {
		l := s.logs[st.Name]
		il := imageLog{st: st, last: l.last}
		il.x.points = append([]point(nil), l.x.points...)
		il.x.segs = append([]segUse(nil), l.x.segs...)
		il.x.dead = append([]deadRecord(nil), l.x.dead...)
		img.logs = append(img.logs, il)
	}
	return img
}

type imageWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	buf []byte
	err error
}

func newImageWriter(w io.Writer) *imageWriter {
	iw := &imageWriter{crc: crc32.New(castagnoli)}
	iw.w = bufio.NewWriterSize(io.MultiWriter(w, iw.crc), 1<<16)
	return iw
}

func (iw *imageWriter) uvarint(v uint64) { iw.raw(binary.AppendUvarint(iw.buf[:0], v)) }
func (iw *imageWriter) varint(v int64)   { iw.raw(binary.AppendVarint(iw.buf[:0], v)) }
func (iw *imageWriter) raw(b []byte) {
	if iw.err == nil {
		_, iw.err = iw.w.Write(b)
	}
}

func (iw *imageWriter) header(img *image) {
	iw.raw(snapMagic[:])
	iw.raw([]byte{img.kind})
	iw.raw(binary.LittleEndian.AppendUint64(nil, uint64(img.applied)))
	iw.uvarint(uint64(len(img.logs)))
	for _, l := range img.logs {
		iw.uvarint(uint64(len(l.st.Name)))
		iw.raw([]byte(l.st.Name))
		iw.uvarint(l.st.ID)
		iw.varint(l.st.Start)
		iw.varint(l.st.End)
		sealed := byte(0)
		if l.st.Sealed {
			sealed = 1
		}
		iw.raw([]byte{sealed})
		iw.varint(l.last.off)
		iw.varint(l.last.n)
		iw.uvarint(uint64(l.last.sum))
		if img.kind != snapLocal {
			continue
		}
		iw.uvarint(uint64(len(l.x.points)))
		for _, p := range l.x.points {
			iw.varint(p.off)
			iw.uvarint(p.pos.Seg)
			iw.varint(p.pos.Off)
		}
		iw.uvarint(uint64(len(l.x.segs)))
		for _, u := range l.x.segs {
			iw.uvarint(u.seg)
			iw.varint(u.bytes)
			iw.varint(u.end)
		}
		iw.uvarint(uint64(len(l.x.dead)))
		for _, d := range l.x.dead {
			iw.varint(d.zxid)
			iw.uvarint(d.seg)
		}
	}
}

func (iw *imageWriter) finish() error {
	if iw.err != nil {
		return iw.err
	}
	if err := iw.w.Flush(); err != nil {
		return err
	}
	_, err := iw.w.Write(binary.LittleEndian.AppendUint32(nil, iw.crc.Sum32()))
	if err == nil {
		err = iw.w.Flush()
	}
	return err
}

type imageReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	err error
}

var errBadImage = errors.New("rlog: bad snapshot image")

func (ir *imageReader) fail(why string) {
	if ir.err == nil {
		ir.err = fmt.Errorf("%w: %s", errBadImage, why)
	}
}

func (ir *imageReader) ReadByte() (byte, error) {
	b, err := ir.r.ReadByte()
	if err == nil {
		ir.crc.Write([]byte{b})
	}
	return b, err
}

func (ir *imageReader) uvarint() uint64 {
	if ir.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(ir)
	if err != nil {
		ir.fail("truncated")
	}
	return v
}

func (ir *imageReader) varint() int64 {
	if ir.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(ir)
	if err != nil {
		ir.fail("truncated")
	}
	return v
}

func (ir *imageReader) full(b []byte) {
	if ir.err != nil {
		return
	}
	if _, err := io.ReadFull(ir.r, b); err != nil {
		ir.fail("truncated")
		return
	}
	ir.crc.Write(b)
}

// count reads a length no larger than limit.
func (ir *imageReader) count(limit uint64) int {
	n := ir.uvarint()
	if n > limit {
		ir.fail("count out of range")
		return 0
	}
	return int(n)
}

func (ir *imageReader) header() image {
	var img image
	var m [8]byte
	ir.full(m[:])
	if ir.err == nil && m != snapMagic {
		ir.fail("bad magic")
	}
	var k [9]byte
	ir.full(k[:])
	img.kind = k[0]
	if ir.err == nil && img.kind != snapLocal && img.kind != snapPortable {
		ir.fail("unknown kind")
	}
	img.applied = zab.Zxid(binary.LittleEndian.Uint64(k[1:]))
	n := ir.count(1 << 24)
	for i := 0; i < n && ir.err == nil; i++ {
		var l imageLog
		name := make([]byte, ir.count(MaxNameLen))
		ir.full(name)
		l.st.Name = string(name)
		l.st.ID = ir.uvarint()
		l.st.Start, l.st.End = ir.varint(), ir.varint()
		var sealed [1]byte
		ir.full(sealed[:])
		l.st.Sealed = sealed[0] == 1
		l.last.off, l.last.n = ir.varint(), ir.varint()
		l.last.sum = uint32(ir.uvarint())
		if ir.err == nil && (!ValidName(l.st.Name) || l.st.Start < 0 || l.st.End < l.st.Start) {
			ir.fail(fmt.Sprintf("bad log %q", l.st.Name))
		}
		if img.kind == snapLocal {
			np := ir.count(1 << 32)
			for j := 0; j < np && ir.err == nil; j++ {
				l.x.points = append(l.x.points, point{off: ir.varint(), pos: datalog.Pos{Seg: ir.uvarint(), Off: ir.varint()}})
			}
			ns := ir.count(1 << 32)
			for j := 0; j < ns && ir.err == nil; j++ {
				l.x.segs = append(l.x.segs, segUse{seg: ir.uvarint(), bytes: ir.varint(), end: ir.varint()})
			}
			nd := ir.count(1 << 32)
			for j := 0; j < nd && ir.err == nil; j++ {
				l.x.dead = append(l.x.dead, deadRecord{zxid: ir.varint(), seg: ir.uvarint()})
			}
		}
		img.logs = append(img.logs, l)
	}
	return img
}

func (ir *imageReader) trailer() {
	if ir.err != nil {
		return
	}
	want := ir.crc.Sum32()
	var b [4]byte
	if _, err := io.ReadFull(ir.r, b[:]); err != nil {
		ir.fail("truncated")
		return
	}
	if binary.LittleEndian.Uint32(b[:]) != want {
		ir.fail("checksum mismatch")
	}
}

func newImageReader(r io.Reader) *imageReader {
	return &imageReader{r: bufio.NewReaderSize(r, 1<<16), crc: crc32.New(castagnoli)}
}

// WriteSnapshot writes a portable image of every log, metadata then bytes,
// for a learner (SNAP), and returns the zxid it reflects. The metadata is
// captured at once; the bytes are read while Apply goes on, so a trim or
// delete of a log meanwhile fails the image (the caller tries again).
func (s *State) WriteSnapshot(ctx context.Context, w io.Writer) (zab.Zxid, error) {
	s.mu.Lock()
	img := s.captureLocked(snapPortable)
	s.mu.Unlock()
	iw := newImageWriter(w)
	iw.header(&img)
	for _, l := range img.logs {
		for off := l.st.Start; off < l.st.End && iw.err == nil; {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			lim := min(l.st.End, off+chunkSize)
			data, err := s.walk(l.x.points[l.x.find(off):], l.st.ID, l.x.dead, off, lim)
			if err != nil {
				return 0, fmt.Errorf("rlog: snapshot of %q at %d: %w", l.st.Name, off, err)
			}
			iw.uvarint(uint64(len(data)))
			iw.raw(data)
			off = lim
		}
		iw.uvarint(0)
	}
	if err := iw.finish(); err != nil {
		return 0, err
	}
	return img.applied, nil
}

// InstallSnapshot replaces every log with a portable image's. The
// image's bytes are appended to the data log after what is there, synced,
// and a local snapshot naming only them is written; only then are the old
// logs' records released. A crash midway leaves the old local snapshot,
// WAL and records intact, and the new records an unreferenced suffix that
// the next Open cuts (CutOrphans). It returns once the new state is
// durable (Durable reports the image's zxid).
func (s *State) InstallSnapshot(ctx context.Context, r io.Reader) (zab.Zxid, error) {
	z, old, err := s.install(ctx, r)
	if err != nil {
		return 0, err
	}
	if _, err := s.Snapshot(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range old {
		for _, u := range l.x.segs {
			if err := s.dl.Release(u.seg, u.bytes); err != nil {
				return 0, err
			}
		}
	}
	return z, nil
}

// install reads an image into new logs and, once their bytes are synced,
// makes them the state; it returns the logs they replace.
func (s *State) install(ctx context.Context, r io.Reader) (zab.Zxid, map[string]*logState, error) {
	ir := newImageReader(r)
	img := ir.header()
	if ir.err == nil && img.kind != snapPortable {
		ir.fail("not a portable image")
	}
	if ir.err != nil {
		return 0, nil, ir.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	logs, byID := map[string]*logState{}, map[uint64]*logState{}
	last := s.dl.Written()
	for _, il := range img.logs {
		l := &logState{name: il.st.Name, id: il.st.ID, start: il.st.Start, end: il.st.Start, sealed: il.st.Sealed, last: il.last}
		for ir.err == nil {
			n := ir.count(uint64(chunkSize))
			if n == 0 {
				break
			}
			buf := make([]byte, n)
			ir.full(buf)
			if ir.err != nil {
				break
			}
			pos, end, err := s.dl.Append(ctx, datalog.Meta{Zxid: int64(img.applied), Log: l.id, Offset: l.end}, buf)
			if err != nil {
				return 0, nil, err
			}
			l.x.add(l.end, int64(n), pos, s.opts.IndexEvery)
			l.end += int64(n)
			last = end
		}
		if ir.err == nil && l.end != il.st.End {
			ir.fail(fmt.Sprintf("log %q: %d bytes, its end says %d", l.name, l.end-l.start, il.st.End-il.st.Start))
		}
		l.committed = l.end
		logs[l.name], byID[l.id] = l, l
	}
	ir.trailer()
	if ir.err != nil {
		// The records written stay unreferenced: garbage the next Open
		// releases or cuts.
		return 0, nil, ir.err
	}
	if err := s.dl.WaitSynced(ctx, last); err != nil {
		return 0, nil, err
	}
	old := s.logs
	s.logs, s.byID = logs, byID
	s.pending, s.persisted, s.early = nil, map[zab.Zxid]datalog.Pos{}, map[zab.Zxid]datalog.Pos{}
	clear(s.prep)
	s.applied = img.applied
	s.applyMark = 0
	s.wake()
	return img.applied, old, nil
}

// Snapshot writes the local image (metadata and this member's index, no
// payload) once the data log has synced everything applied; Durable
// reports the zxid it covers from then on. It returns that zxid, except
// after an InstallSnapshot and before the next Apply, when it returns the
// last zxid Apply was handed (0 if none): the driver cuts its in-memory
// log at what Snapshot returns, and an image may reflect a later zxid
// than the SNAP it came in, whose entries the driver has not yet walked
// past (cutting there left zab unable to read entries it still had to
// hand out; docs/design/rlog.md).
func (s *State) Snapshot(ctx context.Context) (zab.Zxid, error) {
	s.mu.Lock()
	img := s.captureLocked(snapLocal)
	mark := min(s.applyMark, img.applied)
	s.mu.Unlock()
	if err := s.dl.WaitSynced(ctx, s.dl.Written()); err != nil {
		return 0, err
	}
	fsys, dir := s.opts.FS, s.opts.Dir
	tmp := filepath.Join(dir, snapTmp)
	f, err := fsys.Create(tmp)
	if err != nil {
		return 0, fmt.Errorf("rlog: snapshot: %w", err)
	}
	iw := newImageWriter(f)
	iw.header(&img)
	err = iw.finish()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, filepath.Join(dir, snapFile))
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		return 0, fmt.Errorf("rlog: snapshot: %w", err)
	}
	s.mu.Lock()
	s.durable = max(s.durable, img.applied)
	onDurable := s.onDurable
	s.mu.Unlock()
	if onDurable != nil {
		onDurable(img.applied)
	}
	return mark, nil
}

// readLocalSnapshot reads the local image, if there is one.
func readLocalSnapshot(opts Options) (*image, error) {
	f, err := opts.FS.OpenFile(filepath.Join(opts.Dir, snapFile), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rlog: %w", err)
	}
	defer f.Close()
	ir := newImageReader(f)
	img := ir.header()
	if ir.err == nil && img.kind != snapLocal {
		ir.fail("not a local image")
	}
	ir.trailer()
	if ir.err != nil {
		return nil, fmt.Errorf("rlog: %s: %w", snapFile, ir.err)
	}
	return &img, nil
}

// recKey is a log's share of a segment.
type recKey struct {
	seg uint64
	log uint64
}

// restoreLocked installs a local image at open and releases the data-log
// records nothing references: a deleted log's, a failed append's, those
// of appends a trim passed, that the snapshot covers (zxid at or below
// its own). Records after it are the WAL's to claim as it replays.
func (s *State) restoreLocked(img *image, covered map[recKey]int64) error {
	referenced := map[recKey]int64{}
	if img != nil {
		s.applied, s.durable, s.applyMark = img.applied, img.applied, img.applied
		for _, il := range img.logs {
			l := &logState{name: il.st.Name, id: il.st.ID, start: il.st.Start, end: il.st.End,
				committed: il.st.End, sealed: il.st.Sealed, last: il.last, x: il.x}
			s.logs[l.name], s.byID[l.id] = l, l
			for _, u := range l.x.segs {
				referenced[recKey{u.seg, l.id}] += u.bytes
			}
		}
	}
	for k, n := range covered {
		if extra := n - referenced[k]; extra > 0 {
			if err := s.dl.Release(k.seg, extra); err != nil {
				return err
			}
		}
	}
	return nil
}
