package console

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MetricsSource samples one member's metrics: name → value, with mntr's
// names without the zk_ prefix (packets_received, avg_latency,
// outstanding_requests, znode_count, watch_count, cnt_fsynctime,
// p99_readlatency, ...).
// The default reads mntr; once the admin server exports Prometheus
// metrics, a source reading them can take its place.
type MetricsSource interface {
	Sample(ctx context.Context, id int, addr string) (map[string]float64, error)
}

// MntrSource samples a member with the mntr four-letter word on its
// client port.
type MntrSource struct{}

// Sample implements MetricsSource. Values that are not numbers
// (version, server_state) are left out.
func (MntrSource) Sample(ctx context.Context, _ int, addr string) (map[string]float64, error) {
	text, err := fourLetter(ctx, addr, "mntr")
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(text, notServing) {
		return nil, errNotServing
	}
	out := make(map[string]float64)
	for k, v := range parseMntr(text) {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[k] = f
		}
	}
	return out, nil
}

// point is one member in one sample; rates are over the interval since
// the previous sample of the same run (0 in a run's first sample).
type point struct {
	Up          bool    `json:"up"`
	Rps         float64 `json:"rps"`    // requests received per second
	LatAvg      float64 `json:"latAvg"` // ms, since start
	LatMax      float64 `json:"latMax"` // ms, since start
	Outstanding float64 `json:"outstanding"`
	Znodes      float64 `json:"znodes"`
	Watches     float64 `json:"watches"`
	Sessions    float64 `json:"sessions"`
	Connections float64 `json:"connections"`
	// FsyncAvg is the mean fsync time (ms) of the fsyncs in the interval;
	// null when none happened or the member reports no fsync times.
	FsyncAvg *float64 `json:"fsyncAvg"`
	// Read and update latency percentiles (ms) over the member's recent
	// window (mntr's p50_readlatency, p99_readlatency, p50_updatelatency,
	// p99_updatelatency, ZooKeeper's advanced summaries); null when the
	// member does not report them.
	ReadP50   *float64 `json:"readP50"`
	ReadP99   *float64 `json:"readP99"`
	UpdateP50 *float64 `json:"updateP50"`
	UpdateP99 *float64 `json:"updateP99"`
}

type sample struct {
	T      int64   `json:"t"` // ms since the epoch
	Points []point `json:"points"`
}

// sampler keeps the last Window of samples in a ring. It runs only while
// some page polls api/metrics: touch starts it; it stops itself once
// IdleStop passes without a touch. So the console costs the servers
// nothing while nobody looks.
type sampler struct {
	c *Console

	mu sync.Mutex
	// Guarded by mu.
	ring    []sample // capacity Window/SampleInterval
	next    int      // where the next sample goes
	full    bool
	touched time.Time
	running bool
	runs    int // sampler runs started (observable in tests)
}

func newSampler(c *Console) *sampler {
	n := int(c.cfg.Window / c.cfg.SampleInterval)
	if n < 2 {
		n = 2
	}
	return &sampler{c: c, ring: make([]sample, n)}
}

// touch records a poll and starts the sampling goroutine if it is not
// running.
func (s *sampler) touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touched = time.Now()
	if s.running || s.c.ctx.Err() != nil {
		return
	}
	s.running = true
	s.runs++
	s.c.wg.Add(1)
	go s.run()
}

// run samples every SampleInterval until idle or the console closes. The
// previous raw counters are this goroutine's alone.
func (s *sampler) run() {
	defer s.c.wg.Done()
	prev := make([]map[string]float64, len(s.c.cfg.Servers))
	var prevT time.Time
	t := time.NewTicker(s.c.cfg.SampleInterval)
	defer t.Stop()
	s.sampleOnce(prev, &prevT)
	for {
		select {
		case <-s.c.ctx.Done():
			s.mu.Lock()
			s.running = false
			s.mu.Unlock()
			return
		case <-t.C:
		}
		s.mu.Lock()
		if time.Since(s.touched) > s.c.cfg.IdleStop {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.sampleOnce(prev, &prevT)
	}
}

func (s *sampler) sampleOnce(prev []map[string]float64, prevT *time.Time) {
	ctx, cancel := context.WithTimeout(s.c.ctx, s.c.cfg.SampleInterval)
	defer cancel()
	now := time.Now()
	raw := make([]map[string]float64, len(s.c.cfg.Servers))
	var wg sync.WaitGroup
	for i, addr := range s.c.cfg.Servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := s.c.cfg.Metrics.Sample(ctx, i+1, addr)
			if err == nil {
				raw[i] = m
			}
		}()
	}
	wg.Wait()
	smp := sample{T: now.UnixMilli(), Points: make([]point, len(raw))}
	dt := now.Sub(*prevT).Seconds()
	for i, m := range raw {
		smp.Points[i] = toPoint(m, prev[i], dt)
		prev[i] = m
	}
	*prevT = now
	s.mu.Lock()
	s.ring[s.next] = smp
	s.next = (s.next + 1) % len(s.ring)
	if s.next == 0 {
		s.full = true
	}
	s.mu.Unlock()
}

// toPoint derives a point from a member's raw metrics and the previous
// ones (nil when the member was down or this is the first sample).
func toPoint(m, prev map[string]float64, dt float64) point {
	if m == nil {
		return point{}
	}
	p := point{
		Up:          true,
		LatAvg:      m["avg_latency"],
		LatMax:      m["max_latency"],
		Outstanding: m["outstanding_requests"],
		Znodes:      m["znode_count"],
		Watches:     m["watch_count"],
		Sessions:    m["global_sessions"],
		Connections: m["num_alive_connections"],
	}
	opt := func(k string) *float64 {
		if v, ok := m[k]; ok {
			return &v
		}
		return nil
	}
	p.ReadP50, p.ReadP99 = opt("p50_readlatency"), opt("p99_readlatency")
	p.UpdateP50, p.UpdateP99 = opt("p50_updatelatency"), opt("p99_updatelatency")
	if prev != nil && dt > 0 {
		if d := m["packets_received"] - prev["packets_received"]; d >= 0 {
			p.Rps = d / dt
		}
		n := m["cnt_fsynctime"] - prev["cnt_fsynctime"]
		if n > 0 {
			avg := (m["sum_fsynctime"] - prev["sum_fsynctime"]) / n
			p.FsyncAvg = &avg
		}
	}
	return p
}

// since returns the samples newer than t, oldest first.
func (s *sampler) since(t int64) []sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []sample{}
	start, n := 0, s.next
	if s.full {
		start, n = s.next, len(s.ring)
	}
	for k := 0; k < n; k++ {
		smp := s.ring[(start+k)%len(s.ring)]
		if smp.T > t {
			out = append(out, smp)
		}
	}
	return out
}

// handleMetrics: GET api/metrics?since=T returns the samples after T (ms
// since the epoch) and keeps the sampler running.
func (c *Console) handleMetrics(cl *call) (any, error) {
	var since int64
	if s := cl.r.URL.Query().Get("since"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, badRequest("since must be milliseconds since the epoch")
		}
		since = v
	}
	c.sampler.touch()
	members := make([]map[string]any, len(c.cfg.Servers))
	for i, a := range c.cfg.Servers {
		members[i] = map[string]any{"id": i + 1, "serverId": c.cfg.IDs[i], "addr": a}
	}
	return map[string]any{
		"interval": c.cfg.SampleInterval.Milliseconds(),
		"window":   c.cfg.Window.Milliseconds(),
		"members":  members,
		"samples":  c.sampler.since(since),
	}, nil
}

// state reports whether the sampling goroutine is alive and how
// many times it has started.
func (s *sampler) state() (running bool, runs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, s.runs
}
