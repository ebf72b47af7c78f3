package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/client"
)

// BenchmarkPipelined measures how many getData requests (1 KiB node) one
// connection carries per second, this client against go-zookeeper/zk, on
// a server started by the harness (CORRAL_E2E_TARGET picks corral or
// ZooKeeper):
//
//	go test -run '^$' -bench Pipelined ./client/
//
// "sync-N" runs N goroutines making blocking calls on one shared
// connection; "async-W" (this client only) keeps W futures in flight from
// a single goroutine.
func BenchmarkPipelined(b *testing.B) {
	srv := env.Start(b)
	const path = "/bench"
	payload := bytes.Repeat([]byte("x"), 1024)
	ctx := context.Background()

	ours, err := client.Connect(ctx, []string{srv.Addr()}, client.SessionTimeout(30*time.Second),
		client.Logger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		b.Fatal(err)
	}
	defer ours.Close()
	if _, err := ours.Create(ctx, path, payload, client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
		b.Fatal(err)
	}

	theirs, events, err := zk.Connect([]string{srv.Addr()}, 30*time.Second, zk.WithLogInfo(false),
		zk.WithLogger(discardLogger{}))
	if err != nil {
		b.Fatal(err)
	}
	defer theirs.Close()
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}

	for _, n := range []int{1, 16, 64, 256} {
		b.Run(fmt.Sprintf("client=ours/sync-%d", n), func(b *testing.B) {
			parallelGets(b, n, func() error {
				d, _, err := ours.Get(ctx, path)
				if err == nil && len(d) != len(payload) {
					err = fmt.Errorf("%d bytes", len(d))
				}
				return err
			})
		})
		b.Run(fmt.Sprintf("client=gozk/sync-%d", n), func(b *testing.B) {
			parallelGets(b, n, func() error {
				d, _, err := theirs.Get(path)
				if err == nil && len(d) != len(payload) {
					err = fmt.Errorf("%d bytes", len(d))
				}
				return err
			})
		})
	}
	for _, w := range []int{64, 1024} {
		b.Run(fmt.Sprintf("client=ours/async-%d", w), func(b *testing.B) {
			b.ReportAllocs()
			window := make([]*client.Future[client.GetResult], 0, w)
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if len(window) == w {
					if _, err := window[0].Result(); err != nil {
						b.Fatal(err)
					}
					window = window[1:]
				}
				window = append(window, ours.GetAsync(path))
			}
			for _, f := range window {
				if _, err := f.Result(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}

// parallelGets shares b.N calls among n goroutines and reports req/s.
func parallelGets(b *testing.B, n int, get func() error) {
	b.ReportAllocs()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := get(); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}
