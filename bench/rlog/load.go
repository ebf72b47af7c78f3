package rlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/bench/stats"
)

// Point is one measured phase: appends (or creates, or reads) of Size
// bytes with Outstanding in flight.
type Point struct {
	// Figure names what the point feeds: "5.1", "5.2", "5.4", "read",
	// "zookeeper".
	Figure      string `json:"figure"`
	Setup       string `json:"setup"`
	System      string `json:"system"`
	Members     int    `json:"members"`
	Durability  string `json:"durability"`
	GroupCommit string `json:"group_commit,omitempty"`
	Size        int    `json:"size"`
	Outstanding int    `json:"outstanding"`
	// Ops and Bytes completed in the measured interval, Seconds its
	// length (shorter than asked when PhaseBytes ended it).
	Ops     int64   `json:"ops"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	MBps    float64 `json:"mbps"`
	OpsPerS float64 `json:"ops_per_s"`
	// Latency in microseconds (nearest rank).
	P50us int64 `json:"p50_us"`
	P99us int64 `json:"p99_us"`
	MaxUs int64 `json:"max_us"`
	// Errors counted; FirstError names the first.
	Errors     int64  `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
	// CeilingMBps and OfCeiling: the point's ceiling (disk ÷ members for
	// a corral disk configuration) and MBps as a fraction of it; 0 where
	// there is none.
	CeilingMBps float64 `json:"ceiling_mbps,omitempty"`
	OfCeiling   float64 `json:"of_ceiling,omitempty"`
	// ServerCPUmsPerMB is the CPU time (user + system) of every member
	// process together in the measured interval per MB moved; 0 where it
	// was not read (ZooKeeper, a /proc without the members).
	ServerCPUmsPerMB float64 `json:"server_cpu_ms_per_mb,omitempty"`
}

// opFunc does one operation of n bytes; writer is the goroutine's index.
type opFunc func(ctx context.Context, writer int) (n int, err error)

// phase runs outstanding goroutines doing op in a closed loop: warmup
// unmeasured, then up to d measured, ended early once maxBytes (if > 0)
// completed in the measured interval. Every goroutine stops with ctx or
// the interval's end.
func phase(ctx context.Context, outstanding int, warmup, d time.Duration, maxBytes int64, opTimeout time.Duration, op opFunc) Point {
	return meteredPhase(ctx, outstanding, warmup, d, maxBytes, opTimeout, nil, op)
}

// meteredPhase is phase reading cpu (the servers' CPU time so far; nil
// for none) at the measured interval's start and end.
func meteredPhase(ctx context.Context, outstanding int, warmup, d time.Duration, maxBytes int64, opTimeout time.Duration, cpu func() (time.Duration, error), op opFunc) Point {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		measuring atomic.Bool
		bytes     atomic.Int64
		errs      atomic.Int64
		firstErr  atomic.Value
		wg        sync.WaitGroup
		hists     = make([]*stats.Hist, outstanding)
		ops       = make([]int64, outstanding)
	)
	for w := range outstanding {
		hists[w] = stats.NewHist()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				octx, ocancel := context.WithTimeout(ctx, opTimeout)
				t0 := time.Now()
				n, err := op(octx, w)
				lat := time.Since(t0)
				ocancel()
				if ctx.Err() != nil {
					return // the interval ended under it: not counted
				}
				if !measuring.Load() {
					if err != nil {
						time.Sleep(10 * time.Millisecond)
					}
					continue
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					time.Sleep(10 * time.Millisecond)
					continue
				}
				hists[w].Record(lat)
				ops[w]++
				if b := bytes.Add(int64(n)); maxBytes > 0 && b >= maxBytes {
					cancel()
				}
			}
		}()
	}
	select {
	case <-time.After(warmup):
	case <-ctx.Done():
	}
	var cpu0 time.Duration
	cpuErr := errors.New("not read")
	if cpu != nil {
		cpu0, cpuErr = cpu()
	}
	measuring.Store(true)
	start := time.Now()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	el := time.Since(start)
	measuring.Store(false)
	var cpuUsed time.Duration
	if cpuErr == nil {
		var cpu1 time.Duration
		cpu1, cpuErr = cpu()
		cpuUsed = cpu1 - cpu0
	}
	cancel()
	wg.Wait()
	h := stats.NewHist()
	var total int64
	for w := range outstanding {
		h.Merge(hists[w])
		total += ops[w]
	}
	p := Point{Outstanding: outstanding, Ops: total, Bytes: bytes.Load(), Seconds: el.Seconds(), Errors: errs.Load()}
	if s, ok := firstErr.Load().(string); ok {
		p.FirstError = s
	}
	p.MBps = MBps(p.Bytes, el)
	if cpuErr == nil && p.Bytes > 0 {
		p.ServerCPUmsPerMB = float64(cpuUsed.Milliseconds()) / (float64(p.Bytes) / 1e6)
	}
	if el > 0 {
		p.OpsPerS = float64(total) / el.Seconds()
	}
	if total > 0 {
		p.P50us, p.P99us, p.MaxUs = h.PercentileMicros(50), h.PercentileMicros(99), h.MaxMicros()
	}
	return p
}

// payload is a size-byte append whose bytes are not all alike (no
// layer can compress them away).
func payload(size int, seed byte) []byte {
	b := make([]byte, size)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// appendPhase appends size-byte payloads to a new log named name.
func (c *cluster) appendPhase(ctx context.Context, cfg *Config, name string, size, outstanding int) (Point, error) {
	cctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	_, err := c.client.Create(cctx, name)
	cancel()
	if err != nil {
		return Point{}, fmt.Errorf("bench: create log %s on %s: %w", name, c.setup.Name, err)
	}
	data := payload(size, byte(len(name)))
	p := meteredPhase(ctx, outstanding, cfg.Warmup, cfg.Duration, cfg.PhaseBytes, cfg.OpTimeout, c.serverCPU, func(ctx context.Context, _ int) (int, error) {
		_, err := c.client.Append(ctx, name, data, nil)
		return size, err
	})
	c.fill(&p, size)
	return p, ctx.Err()
}

func (c *cluster) fill(p *Point, size int) {
	p.Setup, p.System, p.Members, p.Durability, p.GroupCommit, p.Size = c.setup.Name, "corral", c.setup.Members, c.setup.Durability, c.setup.GroupCommit, size
}

// readPhase reads log name from its start to its committed end in
// chunk-byte reads (one reader: a sequential scan), at most d.
func (c *cluster) readPhase(ctx context.Context, cfg *Config, name string, chunk int64) (Point, error) {
	st, err := c.client.Stat(ctx, name)
	if err != nil {
		return Point{}, fmt.Errorf("bench: stat %s: %w", name, err)
	}
	p := Point{Outstanding: 1}
	c.fill(&p, int(chunk))
	h := stats.NewHist()
	start := time.Now()
	for off := st.Start; off < st.Committed && time.Since(start) < cfg.Duration; {
		rctx, cancel := context.WithTimeout(ctx, cfg.OpTimeout)
		t0 := time.Now()
		b, next, _, err := c.client.Read(rctx, name, off, chunk, 0)
		cancel()
		if err != nil {
			p.Errors++
			p.FirstError = err.Error()
			break
		}
		if len(b) == 0 || next <= off {
			p.Errors++
			p.FirstError = fmt.Sprintf("read at %d returned nothing below the committed end %d", off, st.Committed)
			break
		}
		h.Record(time.Since(t0))
		p.Ops++
		p.Bytes += int64(len(b))
		off = next
	}
	el := time.Since(start)
	p.Seconds, p.MBps = el.Seconds(), MBps(p.Bytes, el)
	if el > 0 {
		p.OpsPerS = float64(p.Ops) / el.Seconds()
	}
	if p.Ops > 0 {
		p.P50us, p.P99us, p.MaxUs = h.PercentileMicros(50), h.PercentileMicros(99), h.MaxMicros()
	}
	if p.Ops == 0 && p.Errors == 0 {
		return p, errors.New("bench: the read phase found nothing to read")
	}
	return p, ctx.Err()
}
