package kv_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/corral-db/corral/admin/promcheck"
	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/internal/testport"
)

// runPrinting starts corral with args and returns the values of its
// "kv endpoints:" and "kv metrics:" lines; SIGINT stops it at the end.
func runPrinting(t *testing.T, args ...string) (endpoints, metrics string) {
	t.Helper()
	cmd := exec.Command(corralBin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	})
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		cmd.Wait()
		close(done)
	}()
	deadline := time.After(90 * time.Second)
	for endpoints == "" || metrics == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%v exited early; stderr:\n%s", args, stderr.String())
			}
			if v, ok := strings.CutPrefix(l, "kv endpoints: "); ok {
				endpoints = v
			}
			if v, ok := strings.CutPrefix(l, "kv metrics: "); ok {
				metrics = v
			}
		case <-deadline:
			t.Fatalf("%v printed no endpoints and metrics lines", args)
		}
	}
	go func() {
		for range lines {
		}
	}()
	return endpoints, metrics
}

func scrapeAll(t *testing.T, addrs string) []map[string]*dto.MetricFamily {
	t.Helper()
	var out []map[string]*dto.MetricFamily
	for _, a := range strings.Split(addrs, ",") {
		resp, err := http.Get("http://" + a + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s %v", a, resp.Status, err)
		}
		if err := promcheck.Check(body); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		fams, err := promcheck.Parse(body)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fams)
	}
	return out
}

// sum adds up name's samples over every scrape whose labels include
// want (label, value pairs).
func sum(scrapes []map[string]*dto.MetricFamily, name string, want ...string) float64 {
	var total float64
	for _, fams := range scrapes {
		f := fams[name]
		if f == nil {
			continue
		}
	next:
		for _, m := range f.Metric {
			for i := 0; i+1 < len(want); i += 2 {
				found := false
				for _, l := range m.Label {
					found = found || l.GetName() == want[i] && l.GetValue() == want[i+1]
				}
				if !found {
					continue next
				}
			}
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total
}

// TestMetricsEndpoints: `corral kv ensemble -metrics-port` and `corral
// kv cluster -spawn -metrics-port` serve every member's (node's) metrics
// on the ports they print; after a put and a get the calls are counted,
// exactly one member of each RG leads, and every scrape passes promlint.
func TestMetricsEndpoints(t *testing.T) {
	t.Run("ensemble", func(t *testing.T) {
		base := testport.Range(t, 3)
		eps, ms := runPrinting(t, "kv", "ensemble", "-n", "3", "-tick", "100ms", "-dir", t.TempDir(), "-metrics-port", strconv.Itoa(base))
		if want := fmt.Sprintf("127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d", base, base+1, base+2); ms != want {
			t.Fatalf("kv metrics: %s, want %s", ms, want)
		}
		checkMetrics(t, eps, ms, 1)
	})
	t.Run("cluster", func(t *testing.T) {
		base := testport.Range(t, 3)
		eps, ms := runPrinting(t, "kv", "cluster", "-groups", "2", "-replicas", "3", "-cm", "1", "-tick", "100ms",
			"-cm-port", strconv.Itoa(testport.Range(t, 3)), "-spawn", "-dir", t.TempDir(), "-metrics-port", strconv.Itoa(base))
		checkMetrics(t, eps, ms, 2)
	})
}

func checkMetrics(t *testing.T, endpoints, metrics string, groups int) {
	t.Helper()
	c, err := kvclient.New(kvclient.Config{Endpoints: strings.Split(endpoints, ","), RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		row := []byte("r" + strconv.Itoa(i))
		if _, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: row, Cells: []*kvpb.Cell{{Family: "f", Qualifier: []byte("q"), Value: row}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, &kvpb.GetRequest{Table: "t", Row: row}); err != nil {
			t.Fatal(err)
		}
	}
	s := scrapeAll(t, metrics)
	if got := sum(s, "corral_kv_requests_total", "op", "Put", "code", "OK"); got < 10 {
		t.Errorf("%v puts counted, 10 made", got)
	}
	if got := sum(s, "corral_kv_requests_total", "op", "Get", "code", "OK"); got < 10 {
		t.Errorf("%v gets counted, 10 made", got)
	}
	for g := 1; g <= groups; g++ {
		var labels []string
		if groups > 1 {
			labels = []string{"group", strconv.Itoa(g)}
		}
		if got := sum(s, "corral_kv_is_leader", labels...); got != 1 {
			t.Errorf("rg%d: %v members say they lead", g, got)
		}
		if got := sum(s, "corral_kv_leader_changes_total", append(labels, "reason", "elected")...); got < 1 {
			t.Errorf("rg%d: %v elections counted", g, got)
		}
	}
}
