package server

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// benchEntries is 20k entries of 230 bytes, about a Fig. 5.4 survivor's
// checkpoint (a 128-byte create is a 230-byte transaction).
func benchEntries() []zab.Entry {
	ents := make([]zab.Entry, 20000)
	for i := range ents {
		ents[i] = zab.Entry{Zxid: zab.Zxid(i + 1), Data: make([]byte, 230)}
	}
	return ents
}

// BenchmarkEncodeCheckpoint is the encoding alone, into io.Discard.
func BenchmarkEncodeCheckpoint(b *testing.B) {
	ents := benchEntries()
	b.SetBytes(int64(len(ents)) * 233)
	for b.Loop() {
		if err := encodeCheckpoint(io.Discard, ents); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteCheckpointFile writes and fsyncs a checkpoint of 20k
// entries (4.6 MB) in the system's temporary directory, with each
// chunk's writeback started as it is written (as the server does) and
// without (the file hidden behind an io.Writer). On a disk, the first
// leaves the fsync little to do; on tmpfs both are the same.
func BenchmarkWriteCheckpointFile(b *testing.B) {
	ents := benchEntries()
	for _, c := range []struct {
		name string
		wrap func(vfs.File) io.Writer
	}{
		{"writeback", func(f vfs.File) io.Writer { return f }},
		{"plain", func(f vfs.File) io.Writer { return struct{ io.Writer }{f} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			fs := vfs.OS()
			path := filepath.Join(b.TempDir(), "checkpoint")
			b.SetBytes(int64(len(ents)) * 233)
			for b.Loop() {
				f, err := fs.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				if err := encodeCheckpoint(c.wrap(f), ents); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
				if err := fs.Remove(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriteSidecar is a checkpoint's sidecar of 20k entries as
// writeCheckpoint writes it, in the system's temporary directory: over the
// recycled spare (checkpoint_spare.go) and into a new file. Between
// iterations, untimed, the sidecar is invalidated (renamed back to the
// spare) or removed.
func BenchmarkWriteSidecar(b *testing.B) {
	ents := benchEntries()
	for _, spare := range []bool{true, false} {
		name := map[bool]string{true: "spare", false: "new"}[spare]
		b.Run(name, func(b *testing.B) {
			st := &storage{fs: vfs.OS(), snapDir: b.TempDir(), log: slog.New(slog.DiscardHandler)}
			if spare {
				if err := st.makeSpareCheckpoint(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(ents)) * 233)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := st.writeSidecar(int64(i+1), ents); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				var err error
				if spare {
					err = st.invalidateCheckpoints()
				} else {
					err = st.fs.Remove(filepath.Join(st.snapDir, checkpointName(int64(i+1))))
				}
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
