// Package promcheck checks a Prometheus scrape the way the acceptance
// tests want it checked: it must parse with Prometheus's text parser
// (expfmt) and pass client_golang's linter (testutil/promlint, the same
// checks as promtool check metrics). It is for tests; the server does not
// link it.
//
// One class of lint problem is tolerated, for ZooKeeper's own names only:
// ZooKeeper's dashboards and alerts query counters and gauges named before
// Prometheus's conventions (commit_count, a counter without "_total";
// znode_count, a gauge ending in "_count"), and renaming them would break
// every dashboard built for ZooKeeper. Metrics of corral's own (corral_*)
// and of the Go runtime (go_*, process_*, promhttp_*) get no exemption.
package promcheck

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// zooKeeperNamingProblems are the promlint findings tolerated on
// ZooKeeper's names.
var zooKeeperNamingProblems = map[string]bool{
	`counter metrics should have "_total" suffix`:                           true,
	`non-histogram and non-summary metrics should not have "_count" suffix`: true,
}

var ownPrefixes = []string{"corral_", "go_", "process_", "promhttp_"}

// Parse parses a text-format scrape into metric families by name.
func Parse(body []byte) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(body))
}

// Check parses body and lints it, returning every problem not tolerated
// (see the package comment) as one error.
func Check(body []byte) error {
	if _, err := Parse(body); err != nil {
		return fmt.Errorf("the Prometheus text parser rejects the scrape: %w", err)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		return fmt.Errorf("promlint: %w", err)
	}
	var errs []error
	for _, p := range problems {
		if Tolerated(p) {
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %s", p.Metric, p.Text))
	}
	return errors.Join(errs...)
}

// Tolerated reports whether p is a ZooKeeper naming problem on a
// ZooKeeper name.
func Tolerated(p promlint.Problem) bool {
	for _, pre := range ownPrefixes {
		if strings.HasPrefix(p.Metric, pre) {
			return false
		}
	}
	return zooKeeperNamingProblems[p.Text]
}

// Value returns the value of the unlabelled sample of family name: a
// gauge's or counter's value, a summary's count; ok is false if absent.
func Value(fams map[string]*dto.MetricFamily, name string) (float64, bool) {
	f, ok := fams[name]
	if !ok || len(f.GetMetric()) == 0 {
		return 0, false
	}
	m := f.GetMetric()[0]
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue(), true
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), true
	case dto.MetricType_SUMMARY:
		return float64(m.GetSummary().GetSampleCount()), true
	}
	return 0, false
}
