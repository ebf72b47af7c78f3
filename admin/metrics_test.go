package admin

import (
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/corral-db/corral/admin/promcheck"
	"github.com/corral-db/corral/internal/metric"
	"github.com/corral-db/corral/server/flw"
)

type fakeSource struct {
	reg    *metric.Registry
	gauges []flw.Metric
}

func (f *fakeSource) Gauges() []flw.Metric      { return f.gauges }
func (f *fakeSource) Metrics() *metric.Registry { return f.reg }
func (f *fakeSource) DurabilityMode() string    { return "diskless" }
func scrape(t *testing.T, h http.Handler) []byte {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %v %s", err, resp.Status)
	}
	return body
}

func TestScrapeHasZooKeeperNamesAndTypes(t *testing.T) {
	reg := metric.NewRegistry(nil)
	read := reg.Summary("readlatency", "Read request latency in milliseconds", metric.DetailAdvanced)
	fsync := reg.Summary("fsynctime", "fsync time", metric.DetailBasic)
	commits := reg.Counter("commit_count", "Leader: proposals committed")
	own := reg.CounterSet("corral_snapshots_total", "Snapshots written, by kind", "kind", "busy", "idle")
	for i := int64(0); i < 100; i++ {
		read.Observe(i)
	}
	fsync.Observe(3)
	commits.Add(7)
	own.With("busy").Add(2)
	own.With("checkpoint").Inc()
	src := &fakeSource{reg: reg, gauges: []flw.Metric{
		{Name: "version", Value: "3.9.3-corral"},
		{Name: "server_state", Value: "leader"},
		{Name: "znode_count", Value: 12},
		{Name: "avg_latency", Value: 0.5},
		{Name: "approximate_data_size", Value: int64(300)},
		{Name: "go_goroutines", Value: 10}, // the Go collector's, not mntr's
		{Name: "learners", Value: 2},
	}}
	h := NewHTTPServer("metrics", 0, nil)
	h.Handle(MetricsPath, MetricsHandler(NewMetricsRegistry(src, true)))
	body := scrape(t, h.srv.Handler)
	if err := promcheck.Check(body); err != nil {
		t.Fatalf("scrape fails the checks:\n%v\n%s", err, body)
	}
	fams, err := promcheck.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]dto.MetricType{
		"readlatency":            dto.MetricType_SUMMARY,
		"fsynctime":              dto.MetricType_SUMMARY,
		"commit_count":           dto.MetricType_COUNTER,
		"corral_snapshots_total": dto.MetricType_COUNTER,
		"znode_count":            dto.MetricType_GAUGE,
		"avg_latency":            dto.MetricType_GAUGE,
		"approximate_data_size":  dto.MetricType_GAUGE,
		"learners":               dto.MetricType_GAUGE,
		"corral_durability_info": dto.MetricType_GAUGE,
		"go_goroutines":          dto.MetricType_GAUGE,
		"process_open_fds":       dto.MetricType_GAUGE,
	}
	for name, typ := range types {
		f, ok := fams[name]
		if !ok {
			t.Errorf("%s missing from the scrape", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
		}
	}
	for _, name := range []string{"version", "server_state"} {
		if _, ok := fams[name]; ok {
			t.Errorf("string figure %s exported", name)
		}
	}
	// One family, the kind as a label; every kind registered shows, at 0
	// until it happens.
	kinds := map[string]float64{}
	for _, m := range fams["corral_snapshots_total"].GetMetric() {
		if l := m.GetLabel(); len(l) == 1 && l[0].GetName() == "kind" {
			kinds[l[0].GetValue()] = m.GetCounter().GetValue()
		} else {
			t.Errorf("corral_snapshots_total labels %v, want kind only", l)
		}
	}
	if want := map[string]float64{"busy": 2, "idle": 0, "checkpoint": 1}; !maps.Equal(kinds, want) {
		t.Errorf("corral_snapshots_total by kind %v, want %v", kinds, want)
	}
	if v, _ := promcheck.Value(fams, "commit_count"); v != 7 {
		t.Errorf("commit_count = %v, want 7", v)
	}
	if v, _ := promcheck.Value(fams, "znode_count"); v != 12 {
		t.Errorf("znode_count = %v, want 12", v)
	}
	rs := fams["readlatency"].GetMetric()[0].GetSummary()
	if rs.GetSampleCount() != 100 || rs.GetSampleSum() != 4950 || len(rs.GetQuantile()) != 3 {
		t.Errorf("readlatency = %v; want count 100, sum 4950, quantiles 0.5, 0.9, 0.99", rs)
	}
	if q := rs.GetQuantile(); len(q) == 3 && (q[0].GetQuantile() != 0.5 || q[0].GetValue() < 40 || q[0].GetValue() > 60) {
		t.Errorf("readlatency median = %v", q[0])
	}
	if q := fams["fsynctime"].GetMetric()[0].GetSummary().GetQuantile(); len(q) != 1 || q[0].GetQuantile() != 0.5 {
		t.Errorf("fsynctime quantiles = %v, want the median only (a basic summary)", q)
	}
	if m := fams["corral_durability_info"].GetMetric()[0]; m.GetLabel()[0].GetValue() != "diskless" {
		t.Errorf("durability label = %v", m.GetLabel())
	}
}

// The exemption is only for ZooKeeper's names: a corral_ counter without
// _total, or any other lint problem, fails the check.
func TestCheckRejectsOwnBadNames(t *testing.T) {
	bad := []string{
		"# HELP corral_things things\n# TYPE corral_things counter\ncorral_things 1\n",
		"# HELP someMetric x\n# TYPE someMetric gauge\nsomeMetric 1\n",
		"# TYPE commit_count counter\ncommit_count 1\n", // no help
		"not a scrape {\n",
	}
	for _, b := range bad {
		if err := promcheck.Check([]byte(b)); err == nil {
			t.Errorf("Check accepted %q", b)
		}
	}
	good := "# HELP commit_count c\n# TYPE commit_count counter\ncommit_count 1\n# HELP znode_count z\n# TYPE znode_count gauge\nznode_count 5\n"
	if err := promcheck.Check([]byte(good)); err != nil {
		t.Errorf("Check refused ZooKeeper's names: %v", err)
	}
}

func TestTraceRefused(t *testing.T) {
	h := NewHTTPServer("metrics", 0, nil)
	h.Handle(MetricsPath, http.NotFoundHandler())
	srv := httptest.NewServer(h.srv.Handler)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodTrace, srv.URL+MetricsPath, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("TRACE answered %s", resp.Status)
	}
}
