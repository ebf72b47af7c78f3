package kv

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestShareOf(t *testing.T) {
	s := func(n int, leader bool) compactionSample {
		return compactionSample{compacting: n, leaderCompacting: leader}
	}
	// 3 members: quorum 2. 10 samples: 5 none, 3 minority (1 with the
	// leader), 2 quorum (both with the leader).
	samples := []compactionSample{s(0, false), s(0, false), s(0, false), s(0, false), s(0, false),
		s(1, false), s(1, false), s(1, true), s(2, true), s(3, true)}
	got := ShareOf(samples, 3, 2, 100*time.Millisecond)
	want := CompactionShare{Members: 3, EveryMs: 100, Samples: 10, Failed: 2, None: 0.5, Minority: 0.3, Quorum: 0.2, Leader: 0.3}
	if got != want {
		t.Errorf("3 members: %+v, want %+v", got, want)
	}
	// 5 members: quorum 3, so 2 compacting is a minority.
	if got := ShareOf([]compactionSample{s(2, false), s(3, false)}, 5, 0, time.Second); got.Minority != 0.5 || got.Quorum != 0.5 {
		t.Errorf("5 members: %+v", got)
	}
	if got := ShareOf(nil, 3, 4, time.Second); got.Samples != 0 || got.None != 0 || got.Failed != 4 {
		t.Errorf("no samples: %+v", got)
	}
}

func TestParseMemberState(t *testing.T) {
	page := `# HELP corral_kv_compactions_running Data-rewriting compactions running
# TYPE corral_kv_compactions_running gauge
corral_kv_compactions_running 2
corral_kv_compactions_total 17
# TYPE corral_kv_is_leader gauge
corral_kv_is_leader 1
`
	st, err := parseMemberState(strings.NewReader(page))
	if err != nil || !st.compacting || !st.leader {
		t.Fatalf("state %+v, %v", st, err)
	}
	idle := strings.NewReplacer("running 2", "running 0", "is_leader 1", "is_leader 0").Replace(page)
	if st, err := parseMemberState(strings.NewReader(idle)); err != nil || st.compacting || st.leader {
		t.Fatalf("idle state %+v, %v", st, err)
	}
	for name, bad := range map[string]string{
		"missing":   "corral_kv_compactions_running 1\n",
		"malformed": "corral_kv_compactions_running x\ncorral_kv_is_leader 0\n",
	} {
		if _, err := parseMemberState(strings.NewReader(bad)); err == nil {
			t.Errorf("%s page accepted", name)
		}
	}
}

func TestMetricsLinesParse(t *testing.T) {
	dir := t.TempDir()
	zc := corralZooCfg(1, dir, 500, "sync", []int{1001}, []int{2001}, []int{3001}, metricsLines(4001))
	if !strings.Contains(zc, "metricsProvider.httpPort=4001\n") || !strings.Contains(zc, "PrometheusMetricsProvider\n") {
		t.Fatalf("zoo.cfg lacks the metrics lines:\n%s", zc)
	}
}

// TestCompactionSampler reads two fake members' endpoints: one leads and
// compacts, one is idle; a third that does not answer drops the samples.
func TestCompactionSampler(t *testing.T) {
	page := func(compacting, leader int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %d\n%s %d\n", metricCompacting, compacting, metricIsLeader, leader)
		}
	}
	hot := httptest.NewServer(page(1, 1))
	defer hot.Close()
	idle := httptest.NewServer(page(0, 0))
	defer idle.Close()
	addr := func(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cs := newCompactionSampler([]string{addr(hot), addr(idle)}, 10*time.Millisecond, 3)
	samples, failed := cs.run(ctx)
	if len(samples) != 3 || failed != 0 {
		t.Fatalf("%d samples, %d failed", len(samples), failed)
	}
	if sh := ShareOf(samples, 2, failed, cs.every); sh.Quorum != 0 || sh.Minority != 1 || sh.Leader != 1 {
		// Two members: quorum 2, so one compacting is a minority.
		t.Errorf("share %+v", sh)
	}

	gone := httptest.NewServer(page(0, 0))
	gone.Close()
	sctx, scancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer scancel()
	samples, failed = newCompactionSampler([]string{addr(idle), addr(gone)}, 10*time.Millisecond, 100).run(sctx)
	if len(samples) != 0 || failed == 0 {
		t.Errorf("with a member down: %d samples, %d failed", len(samples), failed)
	}
}
