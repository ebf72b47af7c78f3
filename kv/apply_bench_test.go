package kv

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/zab"
)

// BenchmarkPut applies puts of whole 1 KiB records (ten 100 B columns, one
// version kept: `corral bench kv` workload W) to a store of 10,000 records
// flushed to sstables, 16 puts an Apply, rows drawn at random.
func BenchmarkPut(b *testing.B) {
	s, err := Open(Options{Dir: b.TempDir(), Logger: slog.New(slog.DiscardHandler), CacheSize: 64 << 20, MemTableSize: 16 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	z := zab.Zxid(1)
	apply := func(ms ...*Mutation) {
		ents := make([]zab.Entry, len(ms))
		for i, m := range ms {
			data, err := m.Encode()
			if err != nil {
				b.Fatal(err)
			}
			ents[i] = zab.Entry{Zxid: z, Data: data}
			z++
		}
		if err := s.Apply(ents); err != nil {
			b.Fatal(err)
		}
	}
	apply(&Mutation{Op: OpCreateTable, Table: "t", Families: []FamilySpec{{Name: "f", MaxVersions: 1}}})
	value := make([]byte, 100)
	record := func(row int) *Mutation {
		m := &Mutation{Op: OpPut, Table: "t", Row: fmt.Appendf(nil, "user%08d", row)}
		for c := range 10 {
			m.Cells = append(m.Cells, Cell{Family: "f", Qualifier: fmt.Appendf(nil, "field%d", c), Value: value})
		}
		return m
	}
	const rows = 10000
	for r := 0; r < rows; r += 100 {
		var ms []*Mutation
		for i := r; i < r+100; i++ {
			ms = append(ms, record(i))
		}
		apply(ms...)
	}
	if _, err := s.Snapshot(context.Background()); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for i := 0; i < b.N; i += 16 {
		ms := make([]*Mutation, 0, 16)
		for range min(16, b.N-i) {
			ms = append(ms, record(rng.IntN(rows)))
		}
		apply(ms...)
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
