package kv

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The share of time members compact (the ACaZoo paper's Figs. 13-15):
// during each measured interval of a one-RG corral run the harness reads
// every member's Prometheus endpoint each -compaction-sample and counts,
// per sample, the members with a data-rewriting compaction running
// (corral_kv_compactions_running) and whether the leader
// (corral_kv_is_leader) is one of them. The members serve the endpoint
// because the harness adds metricsProvider.* lines to their zoo.cfg.

// Metric names the sampler reads (kv/kvserver/metrics.go).
const (
	metricCompacting = "corral_kv_compactions_running"
	metricIsLeader   = "corral_kv_is_leader"
)

// compactionSample is one reading of every member.
type compactionSample struct {
	// compacting is how many members had a compaction running.
	compacting int
	// leaderCompacting: the member that said it leads was one of them.
	leaderCompacting bool
}

// CompactionShare is the share of a measured interval's samples in which
// no member, a minority (1 to quorum-1) or a quorum of the members
// compacted, and in which the leader did.
type CompactionShare struct {
	Members  int     `json:"members"`
	EveryMs  float64 `json:"sample_every_ms"`
	Samples  int     `json:"samples"`
	Failed   int     `json:"failed_samples"`
	None     float64 `json:"none"`
	Minority float64 `json:"minority"`
	Quorum   float64 `json:"quorum"`
	Leader   float64 `json:"leader"`
}

// ShareOf summarizes samples of members members taken every every;
// failed is how many readings were dropped (a member did not answer).
func ShareOf(samples []compactionSample, members, failed int, every time.Duration) CompactionShare {
	s := CompactionShare{Members: members, EveryMs: float64(every) / float64(time.Millisecond), Samples: len(samples), Failed: failed}
	if len(samples) == 0 {
		return s
	}
	q := members/2 + 1
	var none, minority, quorum, leader int
	for _, x := range samples {
		switch {
		case x.compacting == 0:
			none++
		case x.compacting < q:
			minority++
		default:
			quorum++
		}
		if x.leaderCompacting {
			leader++
		}
	}
	n := float64(len(samples))
	s.None, s.Minority, s.Quorum, s.Leader = float64(none)/n, float64(minority)/n, float64(quorum)/n, float64(leader)/n
	return s
}

// memberState is one member's reading.
type memberState struct {
	compacting, leader bool
}

// parseMemberState reads the two gauges out of a Prometheus text page.
func parseMemberState(r io.Reader) (memberState, error) {
	var st memberState
	var seen int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, name := range []string{metricCompacting, metricIsLeader} {
			rest, ok := strings.CutPrefix(line, name+" ")
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				return st, fmt.Errorf("%s: %q: %w", name, rest, err)
			}
			seen++
			if name == metricCompacting {
				st.compacting = v > 0
			} else {
				st.leader = v > 0
			}
		}
	}
	if err := sc.Err(); err != nil {
		return st, err
	}
	if seen < 2 {
		return st, fmt.Errorf("no %s and %s on the page", metricCompacting, metricIsLeader)
	}
	return st, nil
}

// compactionSampler reads the members' endpoints (host:port) every every
// until its context ends, keeping at most limit samples.
type compactionSampler struct {
	addrs []string
	every time.Duration
	limit int
	hc    *http.Client
}

func newCompactionSampler(addrs []string, every time.Duration, limit int) *compactionSampler {
	// A busy member (one CPU, compacting) may answer late; a sample
	// dropped for that would bias the share toward idle moments, so the
	// bound is generous and a late sample only delays the next tick.
	return &compactionSampler{addrs: addrs, every: every, limit: limit, hc: &http.Client{Timeout: max(10*every, time.Second)}}
}

// run samples until ctx ends and returns the samples and the failed
// readings.
func (cs *compactionSampler) run(ctx context.Context) (samples []compactionSample, failed int) {
	t := time.NewTicker(cs.every)
	defer t.Stop()
	for len(samples) < cs.limit {
		select {
		case <-ctx.Done():
			return samples, failed
		case <-t.C:
		}
		x, err := cs.sample(ctx)
		if err != nil {
			if ctx.Err() == nil {
				failed++
			}
			continue
		}
		samples = append(samples, x)
	}
	return samples, failed
}

// sample reads every member at once, so the sample is of one moment
// (within the slowest answer).
func (cs *compactionSampler) sample(ctx context.Context) (compactionSample, error) {
	states := make([]memberState, len(cs.addrs))
	errs := make([]error, len(cs.addrs))
	var wg sync.WaitGroup
	for i, a := range cs.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			states[i], errs[i] = cs.read(ctx, a)
		}()
	}
	wg.Wait()
	var x compactionSample
	for i, st := range states {
		if errs[i] != nil {
			return x, errs[i]
		}
		if st.compacting {
			x.compacting++
			x.leaderCompacting = x.leaderCompacting || st.leader
		}
	}
	return x, nil
}

func (cs *compactionSampler) read(ctx context.Context, addr string) (memberState, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return memberState{}, err
	}
	resp, err := cs.hc.Do(req)
	if err != nil {
		return memberState{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return memberState{}, fmt.Errorf("%s: %s", addr, resp.Status)
	}
	return parseMemberState(io.LimitReader(resp.Body, 4<<20))
}

// metricsLines are the zoo.cfg lines that make a member serve its
// Prometheus endpoint on 127.0.0.1:port, without the runtime's
// collectors (less to read at each sample).
func metricsLines(port int) []string {
	return []string{
		"metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider",
		"metricsProvider.httpHost=127.0.0.1",
		"metricsProvider.httpPort=" + strconv.Itoa(port),
		"metricsProvider.exportJvmInfo=false",
	}
}
