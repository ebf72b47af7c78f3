package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/wire"
)

// The write benchmarks measure a standalone server's write path in
// process: CPU time (user+system, of the whole test process: server and
// clients) and allocations per write, which compare two builds of the
// server better than throughput on a shared machine. The transaction log
// is on the test's temporary directory (real fsyncs).
//
//	go test ./server -run '^$' -bench Write -benchtime 20000x

// BenchmarkWriteSequential: one client, one create at a time (a lone
// write finds the pipeline empty).
func BenchmarkWriteSequential(b *testing.B) { benchWrites(b, 1, 1) }

// BenchmarkWritePipelined: 16 clients with 8 creates in flight each
// (writes share log syncs).
func BenchmarkWritePipelined(b *testing.B) { benchWrites(b, 16, 8) }

func benchWrites(b *testing.B, conns, inflight int) {
	o := Options{
		ListenAddr: "127.0.0.1:0",
		DataDir:    b.TempDir(),
		Logger:     slog.New(slog.DiscardHandler),
		TickTime:   200 * time.Millisecond,
		OnFatal:    func(err error) { panic(err) },
	}
	s, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	cs := make([]*benchConn, conns)
	for i := range cs {
		if cs[i], err = dialBench(s.Addr().String()); err != nil {
			b.Fatal(err)
		}
		defer cs[i].nc.Close()
	}
	data := make([]byte, 1024)
	per := (b.N + conns - 1) / conns
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.creates(i, per, inflight, data); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	cpu := processCPU() - cpu0
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(per*conns), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type benchConn struct {
	nc  net.Conn
	r   *bufio.Reader
	buf []byte
}

func dialBench(addr string) (*benchConn, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &benchConn{nc: nc, r: bufio.NewReader(nc)}
	var e wire.Encoder
	e.Int(0)
	(&wire.ConnectRequest{Timeout: 30000, Passwd: make([]byte, 16)}).Encode(&e)
	if err := c.send(e.B); err != nil {
		return nil, err
	}
	if _, err := c.frame(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *benchConn) send(b []byte) error {
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	_, err := c.nc.Write(b)
	return err
}

func (c *benchConn) frame() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(h[:])
	if cap(c.buf) < int(n) {
		c.buf = make([]byte, n)
	}
	c.buf = c.buf[:n]
	_, err := io.ReadFull(c.r, c.buf)
	return c.buf, err
}

// creates makes n nodes /b<id>-<i>, inflight requests at a time.
func (c *benchConn) creates(id, n, inflight int, data []byte) error {
	var e wire.Encoder
	for sent, got := 0, 0; got < n; {
		e.B = e.B[:0]
		k := 0
		for ; k < inflight && sent < n && sent-got < inflight; k++ {
			start := len(e.B)
			e.Int(0)
			sent++
			(&wire.RequestHeader{Xid: int32(sent), Type: wire.OpCreate}).Encode(&e)
			(&wire.CreateRequest{Path: fmt.Sprintf("/b%d-%d", id, sent), Data: data, ACL: wire.OpenACLUnsafe}).Encode(&e)
			binary.BigEndian.PutUint32(e.B[start:], uint32(len(e.B)-start-4))
		}
		if k > 0 {
			if _, err := c.nc.Write(e.B); err != nil {
				return err
			}
		}
		f, err := c.frame()
		if err != nil {
			return err
		}
		var h wire.ReplyHeader
		h.Decode(wire.NewDecoder(f))
		if h.Err != 0 {
			return fmt.Errorf("create: error %d", h.Err)
		}
		got++
	}
	return nil
}
