package snapstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// A piece travels in a zab.MsgDriver, in Entries[0].Data:
//
//	pieceMagic | stream id (8 B BE) | piece number (8 B BE) | bytes
//
// The magic keeps pieces apart from an owner's other MsgDriver traffic.
var pieceMagic = [4]byte{'S', 'N', 'P', 1}

const pieceHeader = 4 + 16

// PieceMessage builds the message of piece seq of stream id.
func PieceMessage(from, to, id, seq uint64, b []byte) zab.Message {
	data := make([]byte, pieceHeader, pieceHeader+len(b))
	copy(data, pieceMagic[:])
	binary.BigEndian.PutUint64(data[4:], id)
	binary.BigEndian.PutUint64(data[12:], seq)
	return zab.Message{Type: zab.MsgDriver, From: from, To: to, Entries: []zab.Entry{{Data: append(data, b...)}}}
}

// DecodePiece returns a piece message's stream, number and bytes; ok is
// false for any other message.
func DecodePiece(m *zab.Message) (id, seq uint64, b []byte, ok bool) {
	if m.Type != zab.MsgDriver || len(m.Entries) != 1 {
		return 0, 0, nil, false
	}
	d := m.Entries[0].Data
	if len(d) < pieceHeader || !bytes.Equal(d[:4], pieceMagic[:]) {
		return 0, 0, nil, false
	}
	return binary.BigEndian.Uint64(d[4:]), binary.BigEndian.Uint64(d[12:]), d[pieceHeader:], true
}

// FromWriteSnapshot is a Produce for an owner whose image is what its
// StateMachine.WriteSnapshot writes: the stream cut into pieces of size
// bytes, refused if the image is older than the SNAP's zxid (the log's
// cut, which the learner's log will continue from).
func FromWriteSnapshot(write func(context.Context, io.Writer) (zab.Zxid, error), size int) Produce {
	return func(ctx context.Context, _ uint64, sn *zab.Snapshot, emit func([]byte) bool) error {
		w := NewWriter(emit, size)
		z, err := write(ctx, w)
		if err == nil {
			err = w.Flush()
		}
		if err == nil && z < sn.Zxid {
			err = fmt.Errorf("snapstream: image at %v is older than the log's cut %v", z, sn.Zxid)
		}
		return err
	}
}

// Writer cuts what is written to it into pieces of size bytes for emit,
// for a Produce that writes an image as a stream (an owner's
// WriteSnapshot). Flush emits the last piece.
type Writer struct {
	emit func([]byte) bool
	buf  []byte
	size int
}

// ErrStopped is returned by a Writer whose stream stopped.
var ErrStopped = errors.New("snapstream: the stream stopped")

// NewWriter returns a Writer of pieces of size bytes.
func NewWriter(emit func([]byte) bool, size int) *Writer {
	return &Writer{emit: emit, buf: make([]byte, 0, size), size: size}
}

func (w *Writer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), w.size-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == w.size {
			if err := w.Flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// Flush emits what is buffered.
func (w *Writer) Flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if !w.emit(w.buf) {
		return ErrStopped
	}
	w.buf = w.buf[:0]
	return nil
}

// Learner is a learner's side: it writes the pieces to a spool file and
// vets the SNAP (its Intercept is the driver's Config.Intercept), and
// Image reads the spool back for the install. It is safe for concurrent use (a driver's Step
// and an install may run on different goroutines); mu guards rx, f and
// lastProgress.
type Learner struct {
	ID uint64
	// Send hands the progress reports to the transport.
	Send func([]zab.Message)
	// FS and Path name the spool file.
	FS   vfs.FS
	Path string
	// ProgressEvery is how often it tells the leader the sync moves.
	ProgressEvery time.Duration
	Logger        *slog.Logger
	// Take, if set, sees each piece first and returns what of it to
	// spool (nil: nothing); an error breaks the stream. An owner whose
	// pieces are not all image bytes (the server's log payloads) stores
	// the others here.
	Take func(piece []byte) ([]byte, error)
	// Now, if set, replaces the clock of the progress reports.
	Now func() time.Time
	// Breaks breaks the receiving rules (the simulator's self-test).
	Breaks Breaks

	mu           sync.Mutex
	rx           Receiver
	f            vfs.File
	lastProgress time.Time
}

// Intercept stores a piece (and drops its message) or vets a SNAP with a
// header, stripping its snapshot if the stream is not whole; other
// messages pass.
func (l *Learner) Intercept(m *zab.Message) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	log := l.logger()
	if id, seq, b, ok := DecodePiece(m); ok {
		l.rx.Breaks = l.Breaks
		if !l.rx.Piece(id, seq, func(first bool) error { return l.store(first, b) }) {
			log.Warn("a piece of a streamed snapshot is missing or was not stored", "from", m.From, "piece", seq)
		} else if seq == 1 {
			log.Info("receiving a streamed snapshot", "from", m.From, "stream", id)
		}
		if t := l.now(); t.Sub(l.lastProgress) >= l.ProgressEvery {
			l.lastProgress = t
			l.Send([]zab.Message{{Type: zab.MsgSyncProgress, From: l.ID, To: m.From}})
		}
		return false
	}
	if m.Type == zab.MsgSync && m.Snapshot != nil && IsHeader(m.Snapshot.Data) {
		if l.rx.Complete(m.Snapshot.Data, false) {
			log.Info("a streamed snapshot arrived whole", "from", m.From, "zxid", m.Zxid, "pieces", l.rx.Pieces())
		} else {
			log.Warn("a streamed snapshot arrived incomplete; syncing again", "from", m.From, "zxid", m.Zxid)
			m.Snapshot = nil // zab opens a new session
		}
	}
	return true
}

// store spools piece b (what Take keeps of it); first starts the spool.
func (l *Learner) store(first bool, b []byte) error {
	if first {
		if l.f != nil {
			l.f.Close()
			l.f = nil
		}
		f, err := l.FS.Create(l.Path)
		if err != nil {
			return fmt.Errorf("snapstream: spool: %w", err)
		}
		l.f = f
	}
	if l.f == nil {
		return errors.New("snapstream: spool: a piece without its stream's first")
	}
	if l.Take != nil {
		var err error
		if b, err = l.Take(b); err != nil || b == nil {
			return err
		}
	}
	_, err := l.f.Write(b)
	return err
}

// Image returns the reader an install reads a SNAP's image from: the
// spool if r (the SNAP's bytes) is a header, else r itself. close
// removes the spool.
func (l *Learner) Image(r io.Reader) (img io.Reader, close func(), err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(headerSize); !IsHeader(head) {
		return br, func() {}, nil
	}
	f, err := l.OpenSpool()
	if err != nil {
		return nil, nil, err
	}
	return f, func() {
		f.Close()
		l.RemoveSpool()
	}, nil
}

// OpenSpool opens the spool of the stream received for reading, buffered,
// from its start. An owner may read it more than once (to build its state,
// then to keep the image) before RemoveSpool.
func (l *Learner) OpenSpool() (io.ReadCloser, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	f, err := l.FS.Open(l.Path)
	if err != nil {
		return nil, fmt.Errorf("snapstream: spool: %w", err)
	}
	return bufferedFile{bufio.NewReaderSize(f, 256<<10), f}, nil
}

// RemoveSpool removes the spool.
func (l *Learner) RemoveSpool() {
	if err := l.FS.Remove(l.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.logger().Warn("removing the snapshot spool", "err", err)
	}
}

// logger is Logger, or one that discards (the fields are set before use
// and not changed: no lock).
func (l *Learner) logger() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}

func (l *Learner) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// bufferedFile reads a file through a buffer and closes the file.
type bufferedFile struct {
	*bufio.Reader
	f vfs.File
}

func (b bufferedFile) Close() error { return b.f.Close() }
