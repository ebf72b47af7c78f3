package kvserver

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/admin/promcheck"
	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/replica"
)

var readProfile = flag.String("readprofile", "", "BenchmarkGet: write a CPU profile of the reads alone (the last run's) to this file")

// BenchmarkGet reads 1 KiB rows of 10 columns (the ACaZoo paper's
// record) from a group of 1 and of 3 over loopback gRPC, as `corral
// bench kv` workload C does. cpu-µs/op is the process's CPU (members and
// client together) per read.
func BenchmarkGet(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) { benchmarkGet(b, n) })
	}
}

func benchmarkGet(b *testing.B, n int) {
	logger := slog.New(slog.DiscardHandler)
	g, err := NewLocalGroup(n, b.TempDir(), replica.Sync, 500*time.Millisecond, logger)
	if err != nil {
		b.Fatal(err)
	}
	var maddrs []string
	for i := range g.Configs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		g.Configs[i].MetricsListener = l
		maddrs = append(maddrs, l.Addr().String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, nil) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	c, err := kvclient.New(kvclient.Config{Endpoints: g.Endpoints(), RequestTimeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "f"}}}); err != nil {
		b.Fatal(err)
	}
	const rows = 1000
	val := make([]byte, 100)
	for i := 0; i < rows; i++ {
		req := &kvpb.PutRequest{Table: "t", Row: []byte(fmt.Sprintf("user%04d", i))}
		for q := 0; q < 10; q++ {
			req.Cells = append(req.Cells, &kvpb.Cell{Family: "f", Qualifier: []byte(fmt.Sprintf("field%d", q)), Value: val})
		}
		if _, err := c.Put(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Uint64
	b.SetParallelism(1) // GOMAXPROCS readers, as -threads of the bench
	if *readProfile != "" && b.N > 1 {
		f, err := os.Create(*readProfile)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	rounds0, reads0 := confirmCounts(b, maddrs)
	b.ResetTimer()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) % rows
			r, err := c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: []byte(fmt.Sprintf("user%04d", i))})
			if err != nil {
				b.Error(err)
				return
			}
			if len(r.Cells) != 10 {
				b.Errorf("row %d: %d cells", i, len(r.Cells))
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	if rounds, reads := confirmCounts(b, maddrs); rounds > rounds0 {
		b.ReportMetric((reads-reads0)/(rounds-rounds0), "reads/round")
	}
}

// confirmCounts sums the members' confirmation rounds and the reads they
// confirmed, from their metrics.
func confirmCounts(b *testing.B, addrs []string) (rounds, reads float64) {
	for _, a := range addrs {
		resp, err := http.Get("http://" + a + MetricsPath)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		fams, err := promcheck.Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		rounds += value(fams, "corral_kv_read_confirm_rounds_total")
		reads += value(fams, "corral_kv_read_confirmed_total")
	}
	return rounds, reads
}

// processCPU is this process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
