//go:build linux

package datalog

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corral-db/corral/vfs"
)

var (
	spareBenchDir     = flag.String("datalog.spare.dir", "", "directory BenchmarkSparePrep writes its segments in (a temporary directory if empty)")
	spareBenchSeg     = flag.Int64("datalog.spare.segment", 64<<20, "segment size of BenchmarkSparePrep")
	spareBenchWriters = flag.Int("datalog.spare.writers", 1, "BenchmarkSparePrep's data logs appending at once (a member each)")
)

// spareCandidate prepares a spare of size bytes at name, durable (data,
// size and name) when it returns, and reports how many fdatasyncs it made.
type spareCandidate struct {
	name    string
	prepare func(dir, name string, size int64) (syncs int, err error)
}

var spareCandidates = []spareCandidate{
	{"zero", prepareZeroBench},
	{"falloc", prepareFallocSpare},
	{"zerorange", prepareFallocBench(unix.FALLOC_FL_ZERO_RANGE)},
	{"writezeroes", prepareFallocBench(0x80)}, // FALLOC_FL_WRITE_ZEROES, Linux 6.17
	{"zerodirect", prepareZeroDirectBench},
}

// prepareZeroBench is how the data log prepared a spare before it used
// fallocate (and how wal/spare.go still does): 64 KiB zero writes, an
// fdatasync every MiB, a directory sync.
func prepareZeroBench(dir, name string, size int64) (int, error) {
	const syncEvery = 1 << 20
	f, err := vfs.OS().Create(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	syncs := 0
	for off := int64(0); off < size; off += syncEvery {
		if err := vfs.WriteZeros(f, off, min(off+syncEvery, size), nil); err != nil {
			return 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, err
		}
		syncs++
	}
	return syncs, vfs.OS().SyncDir(dir)
}

// prepareFallocSpare is the data log's prepareSpare: fallocate, one
// fdatasync, a directory sync.
func prepareFallocSpare(dir, name string, size int64) (int, error) {
	return 1, prepareSpare(vfs.OS(), dir, size, nil)
}

// prepareFallocBench allocates the spare with fallocate(mode) (unwritten
// extents on ext4: they read as zeros until written), then one fdatasync
// and a directory sync.
func prepareFallocBench(mode uint32) func(dir, name string, size int64) (int, error) {
	return func(dir, name string, size int64) (int, error) {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		if err := unix.Fallocate(int(f.Fd()), mode, 0, size); err != nil {
			return 0, fmt.Errorf("fallocate mode %#x: %w", mode, err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return 0, err
		}
		return 1, vfs.OS().SyncDir(dir)
	}
}

// prepareZeroDirectBench writes the zeros with O_DIRECT, 1 MiB per write,
// past the page cache, and syncs once at the end.
func prepareZeroDirectBench(dir, name string, size int64) (int, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_DIRECT, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return 0, err
	}
	defer unix.Munmap(buf)
	for off := int64(0); off < size; off += int64(len(buf)) {
		if _, err := f.WriteAt(buf[:min(int64(len(buf)), size-off)], off); err != nil {
			return 0, err
		}
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return 0, err
	}
	return 1, vfs.OS().SyncDir(dir)
}

// BenchmarkSparePrep appends 64 KiB records, as the data log writes them
// (a 32-byte header each), into segments prepared by each candidate, with
// an fdatasync every n records; the next segment's spare is prepared by a
// goroutine meanwhile, as the preparer does; -datalog.spare.writers such
// logs append at once, as the members of a group sharing one disk do. One
// op is one segment per writer. It
// reports, per payload MB, the fdatasyncs (appends' and the spare's), the
// bytes this process had written to disk (/proc/self/io write_bytes: page
// cache dirtying and direct writes; the journal is not counted there) and
// the disk's sectors written (/sys/dev/block: every writer on that disk,
// the journal included, so noisy on a shared machine), the process's CPU,
// and the p50/p99 of one group's fdatasync.
//
//	go test -run '^$' -bench SparePrep -benchtime 4x ./rlog/datalog/ -args -datalog.spare.dir=DIR
func BenchmarkSparePrep(b *testing.B) {
	for _, c := range spareCandidates {
		for _, n := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("prep=%s/n=%d", c.name, n), func(b *testing.B) { benchSparePrep(b, c, n) })
		}
	}
}

func benchSparePrep(b *testing.B, c spareCandidate, n int) {
	base := *spareBenchDir
	if base == "" {
		base = b.TempDir()
	}
	segSize := *spareBenchSeg
	writers := max(*spareBenchWriters, 1)
	const payloadSize = 64 << 10
	perSeg := (segSize - headerSize) / (recordHeaderSize + payloadSize)
	dirs := make([]string, writers)
	for w := range dirs {
		dirs[w] = filepath.Join(base, fmt.Sprintf("spare-%s-%d-w%d", c.name, n, w))
		if err := os.MkdirAll(dirs[w], 0o755); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dirs[w])
		if _, err := c.prepare(dirs[w], filepath.Join(dirs[w], spareName), segSize); err != nil {
			b.Skipf("%s: %v", c.name, err)
		}
	}
	ioBefore := procWriteBytes(b)
	devDisk := diskSectorsWritten(base)
	cpu := processCPU()
	b.SetBytes(int64(writers) * perSeg * payloadSize)
	b.ResetTimer()
	type result struct {
		syncs int
		lats  []time.Duration
		err   error
	}
	results := make(chan result, writers)
	for _, dir := range dirs {
		go func() {
			s, l, err := appendSegments(c, dir, segSize, perSeg, payloadSize, n, b.N)
			results <- result{s, l, err}
		}()
	}
	var (
		syncs int
		lats  []time.Duration
	)
	for range dirs {
		r := <-results
		if r.err != nil {
			b.Fatal(r.err)
		}
		syncs += r.syncs
		lats = append(lats, r.lats...)
	}
	b.StopTimer()
	payloadMB := float64(int64(writers)*int64(b.N)*perSeg*payloadSize) / (1 << 20)
	b.ReportMetric(float64(syncs)/payloadMB, "syncs/MB")
	b.ReportMetric(float64(procWriteBytes(b)-ioBefore)/(payloadMB*(1<<20)), "wbytes/B")
	if devDisk >= 0 {
		b.ReportMetric(float64(diskSectorsWritten(base)-devDisk)*512/(payloadMB*(1<<20)), "diskbytes/B")
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/payloadMB, "cpu-ms/MB")
	slices.Sort(lats)
	b.ReportMetric(float64(lats[len(lats)/2].Microseconds()), "sync-p50-us")
	b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds()), "sync-p99-us")
}

// appendSegments fills segs segments in dir (whose spare is ready) with
// perSeg records of payloadSize bytes, an fdatasync every n records,
// preparing each next spare in a goroutine while it appends. It returns
// the fdatasyncs made (the spares' included) and each append sync's time.
func appendSegments(c spareCandidate, dir string, segSize, perSeg int64, payloadSize, n, segs int) (int, []time.Duration, error) {
	rec := make([]byte, recordHeaderSize+payloadSize)
	for i := range rec {
		rec[i] = byte(i*7 + 1)
	}
	type prepResult struct {
		syncs int
		err   error
	}
	var (
		syncs   int
		lats    []time.Duration
		prev    string
		pending chan prepResult
	)
	spare := filepath.Join(dir, spareName)
	for seq := range segs {
		if pending != nil {
			r := <-pending
			if r.err != nil {
				return 0, nil, r.err
			}
			syncs += r.syncs
		}
		name := filepath.Join(dir, segmentName(uint64(seq+1)))
		if err := os.Rename(spare, name); err != nil {
			return 0, nil, err
		}
		if err := vfs.OS().SyncDir(dir); err != nil {
			return 0, nil, err
		}
		if prev != "" {
			os.Remove(prev)
		}
		prev = name
		pending = make(chan prepResult, 1)
		go func(ch chan<- prepResult) {
			s, err := c.prepare(dir, spare, segSize)
			ch <- prepResult{s, err}
		}(pending)

		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			return 0, nil, err
		}
		h := encodeHeader(uint64(seq + 1))
		if _, err := f.WriteAt(h[:], 0); err != nil {
			f.Close()
			return 0, nil, err
		}
		off := int64(headerSize)
		for i := int64(1); i <= perSeg; i++ {
			if _, err := f.WriteAt(rec, off); err != nil {
				f.Close()
				return 0, nil, err
			}
			off += int64(len(rec))
			if i%int64(n) == 0 || i == perSeg {
				t0 := time.Now()
				if err := unix.Fdatasync(int(f.Fd())); err != nil {
					f.Close()
					return 0, nil, err
				}
				lats = append(lats, time.Since(t0))
				syncs++
			}
		}
		f.Close()
	}
	r := <-pending
	if r.err != nil {
		return 0, nil, r.err
	}
	return syncs + r.syncs, lats, nil
}

// procWriteBytes is this process's write_bytes from /proc/self/io.
func procWriteBytes(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Skipf("no /proc/self/io: %v", err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Skip("no write_bytes in /proc/self/io")
	return 0
}

// diskSectorsWritten is the sectors written to the whole disk holding dir
// (or its partition), or -1 if unknown.
func diskSectorsWritten(dir string) int64 {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return -1
	}
	f, err := os.Open(fmt.Sprintf("/sys/dev/block/%d:%d/stat", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return -1
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 7 {
		return -1
	}
	n, err := strconv.ParseInt(fields[6], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// processCPU is the user and system time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
