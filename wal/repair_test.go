package wal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/corral-db/corral/vfs"
)

// TestRandomTornTailsAreRepaired runs many seeded histories of appends,
// syncs, flushes and random crashes (which keep a random prefix of the
// unsynced writes, the last one torn), and checks after each reopen that
// the log is a prefix of what was appended that contains everything
// synced, and that the log keeps working.
//
// With PrepareInline the order of file operations is fixed by the seed.
// With background preparation it is too, because the history waits for the
// spare before each crash: the preparer only runs between a Sync that
// follows a roll and the next roll, on a file of its own.
func TestRandomTornTailsAreRepaired(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			testRandomTornTails(t, inline)
		})
	}
}

func testRandomTornTails(t *testing.T, inline bool) {
	seeds := 150
	if testing.Short() {
		seeds = 30
	}
	repaired := 0
	for seed := 0; seed < seeds; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		m := newMemFS(t)
		var logs logBuffer
		opts := Options{SegmentSize: int64(512 + r.IntN(4096)), BufferSize: 1 + r.IntN(2048), Logger: logs.logger(), PrepareInline: inline}
		var durable []rec // the log as it must be at least
		for gen := 1; gen <= 4; gen++ {
			l, err := Open(m, testDir, opts)
			if err != nil {
				t.Fatalf("seed %d gen %d: Open: %v\n%s", seed, gen, err, logs.String())
			}
			got := readAll(t, l, 0)
			if len(got) < len(durable) || !sameRecs(got[:len(durable)], durable) {
				t.Fatalf("seed %d gen %d: synced records lost: have %d records, %d were durable", seed, gen, len(got), len(durable))
			}
			if len(got) > len(durable) {
				t.Fatalf("seed %d gen %d: log has %d records, only %d were ever appended as such", seed, gen, len(got), len(durable))
			}
			// What may survive the next crash: durable, then a prefix of pending.
			next := l.LastZxid() + 1
			var pending []rec
			for op := 0; op < 1+r.IntN(20); op++ {
				n := 1 + r.IntN(8)
				for i := 0; i < n; i++ {
					rc := rec{next, payload(next, gen, r.IntN(300))}
					next++
					mustAppend(t, l, rc)
					pending = append(pending, rc)
				}
				switch r.IntN(3) {
				case 0:
					mustSync(t, l)
					durable = append(durable, pending...)
					pending = nil
				case 1:
					if err := l.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := awaitSpare(l); err != nil {
				t.Fatal(err)
			}
			m.CrashRandom(r)
			kill(l)
			// Anything from pending may have survived (as a prefix), because
			// rolls sync; reopen and learn how much did.
			l2, err := Open(m, testDir, opts)
			if err != nil {
				t.Fatalf("seed %d gen %d: Open after crash: %v\n%s", seed, gen, err, logs.String())
			}
			got = readAll(t, l2, 0)
			all := append(slices.Clone(durable), pending...)
			if len(got) < len(durable) || len(got) > len(all) || !sameRecs(got, all[:len(got)]) {
				t.Fatalf("seed %d gen %d: after crash the log (%d records) is not a prefix of the %d appended holding the %d synced",
					seed, gen, len(got), len(all), len(durable))
			}
			durable = got
			if err := l2.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if logs.contains("truncated torn log tail") {
			repaired++
		}
	}
	if repaired == 0 {
		t.Fatal("no history needed a repair: the test does not exercise torn tails")
	}
	t.Logf("%d of %d histories repaired a torn tail", repaired, seeds)
}

func TestCorruptTailRecordIsTruncated(t *testing.T) {
	m := newMemFS(t)
	var logs logBuffer
	opts := Options{Logger: logs.logger(), SegmentSize: 1 << 16}
	l := mustOpen(t, m, opts)
	all := makeRecs(1, 10, 0, 50)
	mustAppend(t, l, all...)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Damage the payload of the last record.
	flipByte(t, m, "log.1", recordOffset(9, 50)+recordHeaderSize+20)

	l = mustOpen(t, m, opts)
	if got := readAll(t, l, 0); !sameRecs(got, all[:9]) {
		t.Fatalf("after corrupting record 10: %v", got)
	}
	if l.LastZxid() != 9 {
		t.Fatalf("LastZxid %d, want 9", l.LastZxid())
	}
	if !logs.contains("truncated torn log tail") || !logs.contains("checksum") {
		t.Fatalf("no repair logged:\n%s", logs.String())
	}
	// Reopen after truncation appends correctly, and it sticks.
	more := makeRecs(10, 12, 1, 50)
	mustAppend(t, l, more...)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	l = mustOpen(t, m, opts)
	defer l.Close()
	if got := readAll(t, l, 0); !sameRecs(got, append(all[:9], more...)) {
		t.Fatalf("after append and reopen: %v", got)
	}
}

func TestCorruptLengthInTailIsTruncated(t *testing.T) {
	m := newMemFS(t)
	opts := Options{SegmentSize: 1 << 16}
	l := mustOpen(t, m, opts)
	all := makeRecs(1, 10, 0, 50)
	mustAppend(t, l, all...)
	l.Close()
	flipByte(t, m, "log.1", recordOffset(7, 50)+3) // high byte of record 8's length
	l = mustOpen(t, m, opts)
	defer l.Close()
	if got := readAll(t, l, 0); !sameRecs(got, all[:7]) {
		t.Fatalf("got %v", got)
	}
}

func TestCorruptionInEarlierSegmentIsAnError(t *testing.T) {
	for _, where := range []string{"payload", "header", "lastCRC"} {
		t.Run(where, func(t *testing.T) {
			m := newMemFS(t)
			opts := Options{SegmentSize: 1024}
			l := mustOpen(t, m, opts)
			mustAppend(t, l, makeRecs(1, 100, 0, 50)...)
			l.Close()
			segs := segmentFiles(t, m)
			if len(segs) < 3 {
				t.Fatalf("segments %v", segs)
			}
			off := map[string]int64{
				"payload": recordOffset(3, 50) + recordHeaderSize + 1,
				"header":  2,
				"lastCRC": recordOffset(14, 50) + 5, // 15 records of 66 bytes fit in 1024
			}[where]
			flipByte(t, m, segs[0], off)
			_, err := Open(m, testDir, opts)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			if got := segmentFiles(t, m); !slices.Equal(got, segs) {
				t.Fatalf("a failed Open changed the directory: %v -> %v", segs, got)
			}
		})
	}
}

func TestOutOfOrderZxidsInEarlierSegmentAreAnError(t *testing.T) {
	m := newMemFS(t)
	opts := Options{SegmentSize: 1024}
	l := mustOpen(t, m, opts)
	mustAppend(t, l, makeRecs(1, 10, 0, 50)...)
	l.Roll()
	mustAppend(t, l, makeRecs(11, 20, 0, 50)...)
	l.Close()
	// A segment named as if it came between them, whose records overlap.
	f, _ := m.Create(filepath.Join(testDir, "log.5"))
	h := encodeHeader(5)
	b := appendRecord(h[:], 5, []byte("x"))
	f.Write(b)
	f.Sync()
	f.Close()
	m.SyncDir(testDir)
	if _, err := Open(m, testDir, opts); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open: %v, want ErrCorrupt", err)
	}
}

// TestStaleBytesAfterEndAreZeroed: pages that reached the disk out of order
// can leave valid-looking records after a zero gap. Open must zero them, or
// a later append of the same length would make them part of the log.
func TestStaleBytesAfterEndAreZeroed(t *testing.T) {
	m := newMemFS(t)
	var logs logBuffer
	opts := Options{SegmentSize: 1 << 16, Logger: logs.logger()}
	l := mustOpen(t, m, opts)
	mustAppend(t, l, makeRecs(1, 5, 0, 50)...)
	l.Close()

	// Stale records 7 and 8 where records 7 and 8 would go if 6 were 50 bytes.
	f, _ := m.OpenFile(filepath.Join(testDir, "log.1"), os.O_RDWR, 0)
	stale := appendRecord(nil, 7, payload(7, 0, 50))
	stale = appendRecord(stale, 8, payload(8, 0, 50))
	f.WriteAt(stale, recordOffset(6, 50))
	f.Sync()
	f.Close()

	l = mustOpen(t, m, opts)
	if !logs.contains("non-zero bytes after the last record") {
		t.Fatalf("stale bytes not reported:\n%s", logs.String())
	}
	mustAppend(t, l, rec{6, payload(6, 1, 50)})
	l.Close()
	l = mustOpen(t, m, opts)
	defer l.Close()
	if l.LastZxid() != 6 {
		t.Fatalf("stale records resurrected: LastZxid %d", l.LastZxid())
	}
}

func TestTornLastSegmentHeader(t *testing.T) {
	for _, content := range [][]byte{nil, make([]byte, 100), func() []byte { h := encodeHeader(11); return h[:13] }()} {
		t.Run(fmt.Sprint(len(content)), func(t *testing.T) {
			m := newMemFS(t)
			var logs logBuffer
			opts := Options{SegmentSize: 4096, Logger: logs.logger()}
			l := mustOpen(t, m, opts)
			mustAppend(t, l, makeRecs(1, 10, 0, 50)...)
			l.Close()
			f, _ := m.Create(filepath.Join(testDir, "log.b"))
			f.Write(content)
			f.Sync()
			f.Close()
			m.SyncDir(testDir)

			l = mustOpen(t, m, opts)
			defer l.Close()
			if got := segmentFiles(t, m); !slices.Equal(got, []string{"log.1"}) {
				t.Fatalf("segments %v, want the torn one removed", got)
			}
			if !logs.contains("removing last segment") {
				t.Fatalf("not logged:\n%s", logs.String())
			}
			if l.LastZxid() != 10 {
				t.Fatalf("LastZxid %d", l.LastZxid())
			}
			mustAppend(t, l, makeRecs(11, 12, 1, 50)...) // continues in log.1
			mustSync(t, l)
		})
	}
}

func TestTornHeaderBeforeValidRecordsIsSetAside(t *testing.T) {
	m := newMemFS(t)
	opts := Options{SegmentSize: 4096}
	l := mustOpen(t, m, opts)
	mustAppend(t, l, makeRecs(1, 10, 0, 50)...)
	l.Roll()
	mustAppend(t, l, makeRecs(11, 12, 0, 50)...)
	l.Close()
	// Zero the header of log.b, leaving its records.
	f, _ := m.OpenFile(filepath.Join(testDir, "log.b"), os.O_RDWR, 0)
	f.WriteAt(make([]byte, headerSize), 0)
	f.Sync()
	f.Close()
	l = mustOpen(t, m, opts)
	defer l.Close()
	names := otherFiles(t, m)
	if !slices.Equal(names, []string{"log.1", "log.b.corrupt"}) {
		t.Fatalf("files %v", names)
	}
	if l.LastZxid() != 10 {
		t.Fatalf("LastZxid %d", l.LastZxid())
	}
}

func TestForeignSegmentIsAnError(t *testing.T) {
	m := newMemFS(t)
	f, _ := m.Create(filepath.Join(testDir, "log.100000001"))
	f.Write([]byte("ZKLG\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00")) // a ZooKeeper log
	f.Write(make([]byte, 100))
	f.Sync()
	f.Close()
	m.SyncDir(testDir)
	if _, err := Open(m, testDir, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open: %v, want ErrCorrupt", err)
	}
	if ok, _ := vfs.Exists(m, filepath.Join(testDir, "log.100000001")); !ok {
		t.Fatal("a foreign file was removed")
	}
}

func TestIgnoresOtherFiles(t *testing.T) {
	m := newMemFS(t)
	for _, n := range []string{"log.1.corrupt", "log.0a", "log.", "log.xyz", "snapshot.1", "log.-1"} {
		f, _ := m.Create(filepath.Join(testDir, n))
		f.Write([]byte("junk"))
		f.Close()
	}
	l := mustOpen(t, m, Options{SegmentSize: 1 << 16})
	defer l.Close()
	if l.LastZxid() != 0 {
		t.Fatal("junk files read as segments")
	}
}

func TestSyncFailureIsSticky(t *testing.T) {
	m := newMemFS(t)
	ff := vfs.NewFaultFS(m)
	opts := Options{SegmentSize: 4096}
	l := mustOpen(t, ff, opts)
	synced := makeRecs(1, 5, 0, 50)
	mustAppend(t, l, synced...)
	mustSync(t, l)
	ff.Inject(vfs.Fault{Op: vfs.OpSync, Path: segmentName(1)}) // not the spare's
	mustAppend(t, l, makeRecs(6, 8, 0, 50)...)
	if err := l.Sync(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Sync: %v, want ErrInjected", err)
	}
	if err := l.Append(9, nil); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Append after failed Sync: %v, want the sticky failure", err)
	}
	if err := l.Sync(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Sync after failed Sync: %v, want the sticky failure", err)
	}
	if err := l.Close(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Close: %v", err)
	}
	m.Crash()
	l = mustOpen(t, m, opts)
	defer l.Close()
	if got := readAll(t, l, 0); !sameRecs(got, synced) {
		t.Fatalf("after failure and crash: %v", got)
	}
}

func TestShortWriteThenReopen(t *testing.T) {
	m := newMemFS(t)
	ff := vfs.NewFaultFS(m)
	opts := Options{SegmentSize: 4096}
	l := mustOpen(t, ff, opts)
	synced := makeRecs(1, 5, 0, 50)
	mustAppend(t, l, synced...)
	mustSync(t, l)
	ff.Inject(vfs.Fault{Op: vfs.OpWrite, Partial: true, Path: segmentName(1)}) // not the spare's
	mustAppend(t, l, makeRecs(6, 9, 0, 50)...)
	if err := l.Flush(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Flush: %v", err)
	}
	l.Close()
	// No crash: the half-written batch is in the file; reopen must cut it
	// at a record boundary.
	l = mustOpen(t, m, opts)
	defer l.Close()
	got := readAll(t, l, 0)
	all := makeRecs(1, 9, 0, 50)
	if len(got) < 5 || !sameRecs(got, all[:len(got)]) {
		t.Fatalf("got %v", got)
	}
	mustAppend(t, l, rec{l.LastZxid() + 1, []byte("next")})
	mustSync(t, l)
}

func TestSegmentCreationFailure(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			m := newMemFS(t)
			ff := vfs.NewFaultFS(m)
			// Writing zeros into the spare fails, in the background and inline.
			ff.Inject(vfs.Fault{Op: vfs.OpWrite, Path: spareName, Sticky: true, Partial: true})
			opts := Options{SegmentSize: 1 << 16, PrepareInline: inline}
			l := mustOpen(t, ff, opts)
			if err := l.Append(1, nil); !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("Append: %v", err)
			}
			if got := segmentFiles(t, m); len(got) != 0 {
				t.Fatalf("a segment was created from a spare that failed: %v", got)
			}
			l.Close()
			m.Crash()
			// Whatever the failure left behind is removed by the next Open.
			l = mustOpen(t, m, opts)
			defer l.Close()
			mustAppend(t, l, rec{1, []byte("x")})
			mustSync(t, l)
			if got := segmentFiles(t, m); !slices.Equal(got, []string{"log.1"}) {
				t.Fatalf("segments %v", got)
			}
		})
	}
}
