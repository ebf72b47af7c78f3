package admin

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/corral-db/corral/internal/metric"
	"github.com/corral-db/corral/server/flw"
)

// MetricsPath is where ZooKeeper's PrometheusMetricsProvider serves.
const MetricsPath = "/metrics"

// MetricsSource is what the Prometheus endpoint reads from a server
// (*server.Server implements it): mntr's gauges, the registry of counters
// and summaries it feeds, and its durability mode.
type MetricsSource interface {
	Gauges() []flw.Metric
	Metrics() *metric.Registry
	DurabilityMode() string
}

// NewMetricsRegistry returns the Prometheus registry of one server: its
// ZooKeeper metrics, read from src at each scrape, and, with runtime
// (metricsProvider.exportJvmInfo, true by default), the Go runtime's and
// the process's collectors, the counterpart of the JVM's DefaultExports.
func NewMetricsRegistry(src MetricsSource, runtime bool) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&zkCollector{src: src})
	if runtime {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return reg
}

// MetricsHandler serves reg in Prometheus's text format.
func MetricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Quantiles PrometheusMetricsProvider gives a summary: an advanced
// (AvgMinMaxPercentileCounter) one the median, 90th and 99th percentiles;
// a basic one the median.
var (
	advancedQuantiles = []float64{0.5, 0.9, 0.99}
	basicQuantiles    = []float64{0.5}
)

// zkCollector turns a server's figures into Prometheus metrics at each
// scrape, with ZooKeeper's names and types: mntr's numeric figures are
// gauges (as ZooKeeper registers them), the registry's counters counters,
// its counter sets counters labelled by kind, and its summaries summaries. It is unchecked (Describe sends nothing):
// a leader has gauges a follower lacks.
type zkCollector struct{ src MetricsSource }

func (c *zkCollector) Describe(chan<- *prometheus.Desc) {}

func (c *zkCollector) Collect(ch chan<- prometheus.Metric) {
	reg := c.src.Metrics()
	taken := map[string]bool{}
	for _, m := range reg.Counters() {
		taken[m.Name()] = true
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(m.Name(), m.Help(), nil, nil),
			prometheus.CounterValue, float64(m.Load()))
	}
	for _, set := range reg.CounterSets() {
		taken[set.Name()] = true
		desc := prometheus.NewDesc(set.Name(), set.Help(), []string{set.Label()}, nil)
		set.Each(func(value string, c *metric.Counter) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(c.Load()), value)
		})
	}
	for _, s := range reg.Summaries() {
		taken[s.Name()] = true
		sn := s.Snapshot()
		qs := basicQuantiles
		if s.Detail() == metric.DetailAdvanced {
			qs = advancedQuantiles
		}
		quantiles := make(map[float64]float64, len(qs))
		for _, q := range qs {
			quantiles[q] = sn.Quantile(q)
		}
		ch <- prometheus.MustNewConstSummary(prometheus.NewDesc(s.Name(), s.Help(), nil, nil),
			uint64(sn.Count), float64(sn.Sum), quantiles)
	}
	for _, g := range c.src.Gauges() {
		v, ok := number(g.Value)
		// go_* figures are mntr's stand-ins for JVM figures; the Go
		// collector exports the real ones under the same names.
		if !ok || taken[g.Name] || strings.HasPrefix(g.Name, "go_") {
			continue
		}
		taken[g.Name] = true
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(g.Name, gaugeHelp(g.Name), nil, nil),
			prometheus.GaugeValue, v)
	}
	ch <- prometheus.MustNewConstMetric(durabilityDesc, prometheus.GaugeValue, 1, c.src.DurabilityMode())
}

var durabilityDesc = prometheus.NewDesc("corral_durability_info",
	"corral's durability mode (sync, async or diskless), as the mode label; the value is always 1", []string{"mode"}, nil)

// number converts an mntr value to a float; strings are not numbers.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// gaugeHelp describes the gauges dashboards use most; ZooKeeper's
// provider uses the name as help text, and so does corral for the rest.
func gaugeHelp(name string) string {
	if h, ok := gaugeHelps[name]; ok {
		return h
	}
	return name
}

var gaugeHelps = map[string]string{
	"znode_count":                "Number of znodes, the root's alias included",
	"watch_count":                "Number of data and child watches",
	"ephemerals_count":           "Number of ephemeral znodes",
	"approximate_data_size":      "Approximate bytes of znode paths and data",
	"num_alive_connections":      "Open client connections",
	"outstanding_requests":       "Requests in the pipeline",
	"avg_latency":                "Average request latency in milliseconds since the last reset",
	"min_latency":                "Least request latency in milliseconds since the last reset",
	"max_latency":                "Greatest request latency in milliseconds since the last reset",
	"open_file_descriptor_count": "Open file descriptors",
	"max_file_descriptor_count":  "File descriptor limit",
	"uptime":                     "Milliseconds since the server started",
	"learners":                   "Leader: connected learners",
	"synced_followers":           "Leader: followers in sync",
	"synced_observers":           "Leader: observers in sync",
	"global_sessions":            "Sessions",
}
