package paper

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/launch"
)

func msDur(v ...int) []time.Duration {
	d := make([]time.Duration, len(v))
	for i, x := range v {
		d[i] = time.Duration(x) * time.Millisecond
	}
	return d
}

func TestAggregateCreates(t *testing.T) {
	c := CreateCell{Target: launch.TargetCorral, Servers: 3, Workers: 2, Planned: 10}
	samples := []createSample{
		{latencies: msDur(1, 2, 3, 4, 5)},
		{latencies: msDur(6, 7, 8, 9, 10), deleteErrors: 2},
	}
	aggregateCreates(&c, samples, 2*time.Second)
	if c.Creates != 10 || c.DeleteErrors != 2 || c.Truncated || c.Err != "" {
		t.Fatalf("counts: %+v", c)
	}
	if c.AvgMs != 5.5 || c.P50Ms != 5 || c.P99Ms != 10 || c.MaxMs != 10 {
		t.Errorf("latencies: avg %v p50 %v p99 %v max %v, want 5.5 5 10 10", c.AvgMs, c.P50Ms, c.P99Ms, c.MaxMs)
	}
	if c.PerSec != 5 || c.WallMs != 2000 {
		t.Errorf("throughput %v over %v ms, want 5 over 2000", c.PerSec, c.WallMs)
	}
	if c.PaperPerSec != 0 {
		t.Errorf("the paper has no 2-worker cell, got %v", c.PaperPerSec)
	}

	d := CreateCell{Servers: 5, Workers: 20, Planned: 100}
	aggregateCreates(&d, []createSample{{latencies: msDur(3, 1, 2)}}, time.Second)
	if !d.Truncated || d.Creates != 3 || d.P50Ms != 2 || d.PaperPerSec != 2336 {
		t.Errorf("truncated cell: %+v", d)
	}

	e := CreateCell{Servers: 3, Workers: 1, Planned: 5}
	boom := errors.New("boom")
	aggregateCreates(&e, []createSample{{err: boom}, {err: boom}, {latencies: msDur(1)}}, time.Second)
	if e.Err != "boom" || e.Truncated || e.PaperPerSec != 776 {
		t.Errorf("failed cell: %+v", e)
	}

	var z CreateCell
	aggregateCreates(&z, nil, 0)
	if z.Creates != 0 || z.AvgMs != 0 || z.PerSec != 0 {
		t.Errorf("empty cell: %+v", z)
	}
}

func TestAggregateBarriers(t *testing.T) {
	c := BarrierCell{Clients: 4, Barriers: 40}
	aggregateBarriers(&c, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 2 * time.Second}, make([]error, 4), 4*time.Second)
	if c.Finished != 4 || c.AvgClientSec != 2 || c.WallSec != 4 {
		t.Errorf("times: %+v", c)
	}
	if c.BarriersPerSec != 10 || c.OpsPerSec != 80 {
		t.Errorf("rates: %v barriers/s, %v ops/s; want 10 and 80", c.BarriersPerSec, c.OpsPerSec)
	}
	if c.PaperClients != 20 || c.PaperBarriers != 400 || c.PaperSec != 0 {
		t.Errorf("paper cell %d×%d = %v, want 20×400 absent", c.PaperClients, c.PaperBarriers, c.PaperSec)
	}

	d := BarrierCell{Clients: 20, Barriers: 40}
	errs := make([]error, 20)
	for i := range errs {
		errs[i] = errors.New("e" + string(rune('a'+i%5)))
	}
	finish := make([]time.Duration, 20)
	finish[0] = time.Second
	aggregateBarriers(&d, finish, errs, 5*time.Second)
	if d.Finished != 1 || d.BarriersPerSec != 0 || d.OpsPerSec != 0 {
		t.Errorf("unfinished cell has rates: %+v", d)
	}
	if d.PaperSec != 34.1 {
		t.Errorf("paper cell 100×400 = %v, want 34.1", d.PaperSec)
	}
	if d.Err != "ea; eb; ec; and 2 more" {
		t.Errorf("errors joined as %q", d.Err)
	}
}

func TestPaperReportFormats(t *testing.T) {
	r := &Report{
		Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "corral bench paper -creates 7",
		Creates: 7, ValueSize: 1024, CellTimeout: 20 * time.Second,
		Ensembles: []PaperEnsemble{{Target: launch.TargetCorral, Servers: 3, Version: "v1"}, {Target: launch.TargetZooKeeper, Servers: 3, Err: "no java"}},
		Creates2: []CreateCell{{Target: launch.TargetCorral, Servers: 3, Workers: 1, Creates: 7, Planned: 7, AvgMs: 1.234,
			PerSec: 800, PaperPerSec: 776}, {Target: launch.TargetCorral, Servers: 3, Workers: 10, Creates: 3, Planned: 70, Truncated: true}},
		Barriers3: []BarrierCell{{Target: launch.TargetCorral, Servers: 3, Clients: 10, Barriers: 20, Finished: 10,
			AvgClientSec: 1.5, WallSec: 2, BarriersPerSec: 10, OpsPerSec: 200, PaperClients: 50, PaperBarriers: 200, PaperSec: 9.4}},
	}
	var md bytes.Buffer
	WritePaperMarkdown(&md, r)
	for _, want := range []string{
		"Command: `corral bench paper -creates 7`",
		"each worker makes 7 creates of 1024 bytes",
		"scaled down 5× and 10×",
		"| corral | 3 | 1 | 7 | 1.23 | 0.00 | 0.00 | 0.00 | 800 | 776 |  |",
		"cut short at 3 of 70",
		"| corral | 3 | 10 | 20 | 1.50 | 2.00 | 10.0 | 200 | 50×200 | 9.4 |  |",
		"| zookeeper | 3 | failed: no java |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	var jl bytes.Buffer
	if err := WritePaperJSONLines(&jl, r); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(&jl)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		k, _ := m["kind"].(string)
		kinds[k]++
		if k == "table3" && m["paper_sec"] != 9.4 {
			t.Errorf("table3 line: %v", m)
		}
		if k == "run" && m["command"] != r.Command {
			t.Errorf("run line: %v", m)
		}
	}
	if kinds["run"] != 1 || kinds["ensemble"] != 2 || kinds["table2"] != 2 || kinds["table3"] != 1 {
		t.Errorf("line kinds %v", kinds)
	}
}

func TestParseInts(t *testing.T) {
	got, err := launch.ParseInts(" 1, 10 ,20,")
	if err != nil || launch.JoinInts(got) != "1,10,20" {
		t.Errorf("parseInts = %v, %v", got, err)
	}
	if got, err := launch.ParseInts(""); err != nil || len(got) != 0 {
		t.Errorf("empty list = %v, %v", got, err)
	}
}
