package ops

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/admin/promcheck"
	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/tests/harness"
)

const prometheusProvider = "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider"

func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %s\n%s", url, err, resp.Status, body)
	}
	return body
}

func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, ev, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.State == zk.StateHasSession {
				return c
			}
		case <-deadline:
			t.Fatal("no session")
		}
	}
}

// TestPrometheusScrapeUnderLoad scrapes a real corral with ZooKeeper's
// Prometheus keys before and after a bounded load of writes and reads: the
// scrape passes the linter and the parser, and the counters move.
func TestPrometheusScrapeUnderLoad(t *testing.T) {
	if env.Kind != harness.Corral {
		t.Skip("scrapes corral")
	}
	port := testport.Free(t)
	srv := env.StartWith(t, harness.Config{Extra: []string{
		"metricsProvider.className=" + prometheusProvider,
		"metricsProvider.httpPort=" + strconv.Itoa(port),
	}})
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)

	before := httpGet(t, url)
	if err := promcheck.Check(before); err != nil {
		t.Fatalf("idle scrape fails the checks:\n%v", err)
	}
	b, _ := promcheck.Parse(before)

	c := connect(t, srv.Addr())
	const n = 200
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("/load-%d", i)
		if _, err := c.Create(p, []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Get(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := c.GetW("/load-0"); err != nil {
		t.Fatal(err)
	}

	after := httpGet(t, url)
	if err := promcheck.Check(after); err != nil {
		t.Fatalf("scrape after load fails the checks:\n%v", err)
	}
	a, _ := promcheck.Parse(after)
	grew := func(name string, by float64) {
		t.Helper()
		x, okx := promcheck.Value(b, name)
		y, oky := promcheck.Value(a, name)
		if !okx || !oky || y-x < by {
			t.Errorf("%s went from %v (%v) to %v (%v); want it up by at least %v", name, x, okx, y, oky, by)
		}
	}
	grew("updatelatency", n) // a summary: its count
	grew("readlatency", n)   // a summary: its count
	grew("znode_count", n)   // a gauge
	grew("approximate_data_size", n)
	grew("watch_count", 1)
	grew("num_alive_connections", 1)
	grew("fsynctime", 1)
	for _, name := range []string{"go_goroutines", "process_open_fds", "commit_count", "looking_count", "corral_durability_info"} {
		if _, ok := promcheck.Value(a, name); !ok {
			t.Errorf("%s missing from the scrape", name)
		}
	}
	if v, ok := promcheck.Value(a, "uptime"); !ok || v <= 0 {
		t.Errorf("uptime = %v", v)
	}

	// mntr prints the same summaries the ZooKeeper way.
	mntr := srv.MustFourLetter("mntr")
	for _, k := range []string{"zk_cnt_updatelatency", "zk_avg_readlatency", "zk_p50_readlatency", "zk_p999_updatelatency",
		"zk_cnt_fsynctime", "zk_commit_count", "zk_looking_count"} {
		if !strings.Contains(mntr, "\n"+k+"\t") {
			t.Errorf("mntr lacks %s:\n%s", k, mntr)
		}
	}
}
