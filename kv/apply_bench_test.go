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

// benchStore is a store of benchRows records of ten 100 B columns (one
// version kept), flushed to sstables: `corral bench kv`'s records;
// newBenchStore's rowCache is Options.RowCacheSize.
type benchStore struct {
	*Store
	b     *testing.B
	z     zab.Zxid
	value []byte
}

const benchRows = 10000

func newBenchStore(b *testing.B, memTable uint64, rowCache int64) *benchStore {
	s, err := Open(Options{Dir: b.TempDir(), Logger: slog.New(slog.DiscardHandler), CacheSize: 64 << 20, MemTableSize: memTable, RowCacheSize: rowCache})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	bs := &benchStore{Store: s, b: b, z: 1, value: make([]byte, 100)}
	bs.apply(&Mutation{Op: OpCreateTable, Table: "t", Families: []FamilySpec{{Name: "f", MaxVersions: 1}}})
	for r := 0; r < benchRows; r += 100 {
		var ms []*Mutation
		for i := r; i < r+100; i++ {
			ms = append(ms, bs.record(i))
		}
		bs.apply(ms...)
	}
	if _, err := s.Snapshot(context.Background()); err != nil {
		b.Fatal(err)
	}
	return bs
}

// apply applies ms as one batch of entries.
func (bs *benchStore) apply(ms ...*Mutation) {
	ents := make([]zab.Entry, len(ms))
	for i, m := range ms {
		data, err := m.Encode()
		if err != nil {
			bs.b.Fatal(err)
		}
		ents[i] = zab.Entry{Zxid: bs.z, Data: data}
		bs.z++
	}
	if err := bs.Apply(ents); err != nil {
		bs.b.Fatal(err)
	}
}

func benchRowKey(row int) []byte { return fmt.Appendf(nil, "user%08d", row) }

// record is a put of the whole record row.
func (bs *benchStore) record(row int) *Mutation {
	m := &Mutation{Op: OpPut, Table: "t", Row: benchRowKey(row)}
	for c := range 10 {
		m.Cells = append(m.Cells, Cell{Family: "f", Qualifier: fmt.Appendf(nil, "field%d", c), Value: bs.value})
	}
	return m
}

// BenchmarkPut applies puts of whole 1 KiB records (ten 100 B columns, one
// version kept: `corral bench kv` workload W) to a store of 10,000 records
// flushed to sstables, 16 puts an Apply, rows drawn at random.
func BenchmarkPut(b *testing.B) { benchPuts(b, false) }

// BenchmarkPutRequestID is BenchmarkPut with request ids, as kvclient
// sends them: 16 writers, each a client id whose sequence grows by one a
// put, so each put also replaces its client's deduplication record.
func BenchmarkPutRequestID(b *testing.B) { benchPuts(b, true) }

func benchPuts(b *testing.B, ids bool) {
	bs := newBenchStore(b, 16<<20, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	var seqs [16]uint64
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for i := 0; i < b.N; i += 16 {
		ms := make([]*Mutation, 0, 16)
		for w := range min(16, b.N-i) {
			m := bs.record(rng.IntN(benchRows))
			if ids {
				seqs[w]++
				m.Client, m.Seq = uint64(w)+1, seqs[w]
			}
			ms = append(ms, m)
		}
		bs.apply(ms...)
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
