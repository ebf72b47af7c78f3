package rlog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// RSSSample is every member's resident memory when the log held Bytes.
type RSSSample struct {
	Bytes int64   `json:"log_bytes"`
	RSS   []int64 `json:"rss_bytes"`
}

// Growth is the memory phase: one log grown to a target size while each
// member's resident memory is sampled.
type Growth struct {
	Setup   string      `json:"setup"`
	Target  int64       `json:"target_bytes"`
	Size    int         `json:"size"`
	Samples []RSSSample `json:"samples"`
	Seconds float64     `json:"seconds"`
	Errors  int64       `json:"errors"`
	// FirstError is the first failed append's error, if any.
	FirstError string `json:"first_error,omitempty"`
	// Spread is, per member, (max - min) / min of its RSS over the
	// samples: the first is taken when the log holds Target/GrowSamples
	// (1 GiB of 8 GiB with 8 samples), the last at Target.
	Spread []float64 `json:"spread"`
}

// RSSSpread is (max - min) / min of v; 0 for fewer than two values or a
// zero minimum.
func RSSSpread(v []int64) float64 {
	if len(v) < 2 {
		return 0
	}
	lo, hi := v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo <= 0 {
		return 0
	}
	return float64(hi-lo) / float64(lo)
}

// growPhase appends cfg.Size-byte payloads to a new log from
// cfg.Outstanding writers until it holds cfg.GrowBytes, sampling every
// member's VmRSS each time another GrowBytes/GrowSamples were appended.
func (c *cluster) growPhase(ctx context.Context, cfg *Config, name string) (*Growth, error) {
	if err := checkGrowSpace(c.dir, len(c.members), cfg.GrowBytes); err != nil {
		// The sweeps' logs took the room; the report says so and the
		// other setups still run.
		return &Growth{Setup: c.setup.Name, Target: cfg.GrowBytes, Size: cfg.Size, FirstError: err.Error()}, err
	}
	if _, err := c.client.Create(ctx, name); err != nil {
		return nil, fmt.Errorf("bench: create log %s: %w", name, err)
	}
	g := &Growth{Setup: c.setup.Name, Target: cfg.GrowBytes, Size: cfg.Size}
	step := max(cfg.GrowBytes/int64(cfg.GrowSamples), int64(cfg.Size))
	data := payload(cfg.Size, 'g')
	var (
		appended, errs atomic.Int64
		mu             sync.Mutex
		next           = step
		wg             sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sample := func(at int64) {
		s := RSSSample{Bytes: at}
		for _, pid := range c.pids() {
			r, err := ResidentBytes(pid)
			if err != nil {
				r = 0
			}
			s.RSS = append(s.RSS, r)
		}
		g.Samples = append(g.Samples, s)
	}
	start := time.Now()
	for range cfg.Outstanding {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				actx, acancel := context.WithTimeout(ctx, cfg.OpTimeout)
				_, err := c.client.Append(actx, name, data, nil)
				acancel()
				if err != nil {
					if ctx.Err() != nil {
						continue
					}
					mu.Lock()
					if g.FirstError == "" {
						g.FirstError = err.Error()
						cfg.Log.Warn("append failed in the memory phase", "err", err)
					}
					mu.Unlock()
					if errs.Add(1) > 100 {
						cancel()
					}
					continue
				}
				at := appended.Add(int64(len(data)))
				mu.Lock()
				if at >= next {
					sample(at)
					next += step
				}
				mu.Unlock()
				if at >= cfg.GrowBytes {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	g.Seconds, g.Errors = time.Since(start).Seconds(), errs.Load()
	for m := range c.members {
		var v []int64
		for _, s := range g.Samples {
			if m < len(s.RSS) {
				v = append(v, s.RSS[m])
			}
		}
		g.Spread = append(g.Spread, RSSSpread(v))
	}
	if g.Errors > 100 {
		return g, fmt.Errorf("bench: the memory phase failed %d appends, the first with %s", g.Errors, g.FirstError)
	}
	return g, nil
}
