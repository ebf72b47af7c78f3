package datalog

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/corral-db/corral/vfs"
)

// crashWorkload appends records and flushes every few, on fsys, until a
// call fails (the crash). It returns every record it wrote (whether or not
// its write completed) and the synced end the log last reported.
func crashWorkload(fsys vfs.FS, seed uint64) (written []rec, acked Pos) {
	r := rand.New(rand.NewPCG(seed, 99))
	l, err := Open(fsys, dir, Options{SegmentSize: 2048, NoFlusher: true, PrepareInline: true, MaxInflight: 1 << 20})
	if err != nil {
		return nil, Pos{}
	}
	defer l.Close()
	for i := range 30 {
		m := Meta{Zxid: int64(i + 1), Log: uint64(i % 2), Offset: int64(i)}
		d := payload(r, 1+r.IntN(700))
		p, e, err := l.Append(context.Background(), m, d)
		if err != nil {
			return written, acked
		}
		written = append(written, rec{p, e, m, d})
		if i%3 == 2 {
			s, err := l.Flush()
			if err != nil {
				return written, acked
			}
			acked = s
		}
	}
	return written, acked
}

// TestCrashAtEveryStep crashes the file system before each mutating call
// an append workload makes (writes of headers and payloads, syncs, the
// spare's creation and allocation, renames, directory syncs), keeping a
// random part of what was not synced, and checks after reopening that
// every record the log reported synced reads back with its exact bytes,
// and that every record recovered is one that was written, intact.
func TestCrashAtEveryStep(t *testing.T) {
	probe := &crashFS{mem: vfs.NewMem()}
	written, _ := crashWorkload(probe, 1)
	steps := probe.steps
	t.Logf("%d mutating steps", steps)
	if len(written) != 30 || steps < 100 {
		t.Fatalf("probe run: %d records, %d steps", len(written), steps)
	}
	for seed := uint64(0); seed < 3; seed++ {
		for k := 1; k <= steps; k++ {
			mem := vfs.NewMem()
			var rng *rand.Rand
			if seed > 0 {
				rng = rand.New(rand.NewPCG(seed, uint64(k)))
			}
			c := &crashFS{mem: mem, crashAt: k, rng: rng}
			written, acked := crashWorkload(c, 1)
			byPos := map[Pos]rec{}
			for _, w := range written {
				byPos[w.pos] = w
			}
			var recovered []Pos
			l, err := Open(mem, dir, Options{SegmentSize: 2048, PrepareInline: true,
				OnRecover: func(p Pos, m Meta, n int) { recovered = append(recovered, p) }})
			if err != nil {
				t.Fatalf("seed %d crash at step %d: reopen: %v", seed, k, err)
			}
			for _, w := range written {
				if w.end.Less(acked) || w.end == acked {
					m, d, err := l.Read(w.pos)
					if err != nil || m != w.meta || !bytes.Equal(d, w.data) {
						t.Fatalf("seed %d crash at step %d: synced record at %v lost or damaged: %v", seed, k, w.pos, err)
					}
				}
			}
			for _, p := range recovered {
				w, ok := byPos[p]
				if !ok {
					t.Fatalf("seed %d crash at step %d: recovered a record at %v that was never written", seed, k, p)
				}
				m, d, err := l.Read(p)
				if err != nil || m != w.meta || !bytes.Equal(d, w.data) {
					t.Fatalf("seed %d crash at step %d: recovered record at %v differs from the one written: %v", seed, k, p, err)
				}
			}
			if s := l.Synced(); s.Less(acked) {
				t.Fatalf("seed %d crash at step %d: synced %v after reopen, below the acknowledged %v", seed, k, s, acked)
			}
			// The log goes on: an append after recovery reads back.
			more := appendN(t, l, rand.New(rand.NewPCG(uint64(k), 0)), 3, 300)
			checkRecs(t, l, more)
			l.Close()
		}
	}
}

// TestCrashWithFlusher runs appenders against the flusher goroutine,
// acknowledging a record once WaitSynced returns for it, and crashes at a
// random step; every acknowledged record survives.
func TestCrashWithFlusher(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		mem := vfs.NewMem()
		c := &crashFS{mem: mem, crashAt: 50 + int(seed*37%400), rng: rand.New(rand.NewPCG(seed, 7))}
		l, err := Open(c, dir, Options{SegmentSize: 8192, MaxInflight: 4096})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, 8))
		var acked []rec
		for i := range 500 {
			m := Meta{Zxid: int64(i + 1)}
			d := payload(r, 1+r.IntN(1000))
			p, e, err := l.Append(context.Background(), m, d)
			if err != nil {
				break
			}
			if i%4 == 0 {
				if err := l.WaitSynced(context.Background(), e); err != nil {
					break
				}
				acked = append(acked, rec{p, e, m, d})
			}
		}
		l.Close()
		if !c.crashed {
			t.Fatalf("seed %d: the workload ended before the crash at step %d", seed, c.crashAt)
		}
		l, err = Open(mem, dir, Options{SegmentSize: 8192})
		if err != nil {
			t.Fatalf("seed %d: reopen: %v", seed, err)
		}
		checkRecs(t, l, acked)
		l.Close()
	}
}
