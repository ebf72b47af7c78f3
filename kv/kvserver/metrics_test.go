package kvserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/corral-db/corral/admin/promcheck"
	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/replica"
)

// scrape reads addr's metrics, checks them with Prometheus's parser and
// promlint, and returns them by name.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s, %v", addr, resp.Status, err)
	}
	if err := promcheck.Check(body); err != nil {
		t.Fatalf("scrape %s: %v", addr, err)
	}
	fams, err := promcheck.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value is the metric's value (a counter's, a gauge's, or a summary's
// count) whose labels include want; -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == want[i] && l.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Summary != nil:
			return float64(m.Summary.GetSampleCount())
		}
	}
	return -1
}

// TestMetricsUnderLoad: every member of a 3-member group serves its
// metrics; under puts and gets the leader's request counters, latency
// summaries, applied zxid and confirmation rounds move, exactly one
// member says it leads, the leader's compaction gate (coolest policy)
// has turned to held, and every scrape passes promlint.
func TestMetricsUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member group")
	}
	logger := slog.New(slog.DiscardHandler)
	g, err := NewLocalGroup(3, t.TempDir(), replica.Sync, 100*time.Millisecond, logger)
	if err != nil {
		t.Fatal(err)
	}
	var maddrs []string
	for i := range g.Configs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		g.Configs[i].MetricsListener = l
		g.Configs[i].MetricsRuntime = true
		g.Configs[i].LeaderChange = kv.LeaderChangeConfig{Policy: kv.PolicyCoolest}
		maddrs = append(maddrs, l.Addr().String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, nil) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	c, err := kvclient.New(kvclient.Config{Endpoints: g.Endpoints(), RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	// The leader: the one member that says so.
	// While an election settles a deposed leader may still say it leads
	// (its gauge follows its own view); wait for one member alone to say so.
	leaderAt := -1
	testutil.Eventually(t, 10*time.Second, "one member says it leads", func() bool {
		n := 0
		for i, a := range maddrs {
			if value(scrape(t, a), "corral_kv_is_leader") == 1 {
				leaderAt, n = i, n+1
			}
		}
		return n == 1
	})
	before := scrape(t, maddrs[leaderAt])
	// The absent row's NotFound is counted by the member that answers
	// it: the leader, unless leadership moved after the load (the
	// compaction-aware change decides every 100 ms), so it is summed
	// over the members.
	notFound := func() float64 {
		var sum float64
		for _, a := range maddrs {
			sum += max(0, value(scrape(t, a), "corral_kv_requests_total", "op", "Get", "code", "NotFound"))
		}
		return sum
	}
	notFoundBefore := notFound()

	const workers, ops = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < ops; i++ {
				row := []byte(fmt.Sprintf("w%d-r%d", w, i))
				if _, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: row, Cells: []*kvpb.Cell{{Family: "f", Qualifier: []byte("q"), Value: row}}}); err != nil {
					errs <- err
					return
				}
				if _, err := c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: row}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	mid := scrape(t, maddrs[leaderAt]) // under load
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: []byte("absent")}); err == nil {
		t.Fatal("a get of an absent row succeeded")
	}
	after := scrape(t, maddrs[leaderAt])

	moved := func(name string, labels ...string) {
		t.Helper()
		b, a := value(before, name, labels...), value(after, name, labels...)
		if a <= b || a <= 0 {
			t.Errorf("%s%v: %v before the load, %v after", name, labels, b, a)
		}
	}
	moved("corral_kv_requests_total", "op", "Put", "code", "OK")
	moved("corral_kv_requests_total", "op", "Get", "code", "OK")
	if nf := notFound(); nf <= notFoundBefore {
		t.Errorf("Get NotFound counted %v times over the members before the absent get, %v after", notFoundBefore, nf)
	}
	moved("corral_kv_read_latency_seconds")
	moved("corral_kv_write_latency_seconds")
	moved("corral_kv_applied_zxid")
	moved("corral_kv_committed_zxid")
	moved("corral_kv_read_confirm_rounds_total")
	if got := value(after, "corral_kv_requests_total", "op", "Put", "code", "OK") - value(before, "corral_kv_requests_total", "op", "Put", "code", "OK"); got < workers*ops {
		t.Errorf("%v puts counted, %d made", got, workers*ops)
	}
	if m := value(mid, "corral_kv_requests_total", "op", "Put", "code", "OK"); m < value(before, "corral_kv_requests_total", "op", "Put", "code", "OK") {
		t.Errorf("the put counter went back under load: %v", m)
	}
	if r, c := value(after, "corral_kv_read_confirm_rounds_total"), value(after, "corral_kv_read_confirmed_total"); c < r {
		t.Errorf("%v reads confirmed by %v rounds", c, r)
	}
	if v := value(after, "corral_kv_leader_changes_total", "reason", "elected"); v < 1 {
		t.Errorf("the leader counts %v elections of its own", v)
	}
	// The leader change decides every 100 ms: its first hold may come
	// after a fast load.
	if !testutil.Within(5*time.Second, func() bool {
		return value(scrape(t, maddrs[leaderAt]), "corral_kv_compaction_gate_holds_total") >= 1
	}) {
		t.Error("the leader's compaction gate never turned to held")
	}
	if v := value(after, "corral_kv_pebble_level_tables", "level", "0"); v < 0 {
		t.Error("no L0 table count")
	}
	if value(after, "go_goroutines") <= 0 {
		t.Error("no Go runtime metrics")
	}
	for i, a := range maddrs {
		if i == leaderAt {
			continue
		}
		f := scrape(t, a)
		if value(f, "corral_kv_is_leader") != 0 || value(f, "corral_kv_leader_changes_total", "reason", "followed") < 1 {
			t.Errorf("member %d: is_leader %v, followed %v", i+1, value(f, "corral_kv_is_leader"), value(f, "corral_kv_leader_changes_total", "reason", "followed"))
		}
		if value(f, "corral_kv_applied_zxid") <= 0 {
			t.Errorf("member %d applied nothing", i+1)
		}
	}
}
