package kv

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/bench/ycsb"
	"github.com/corral-db/corral/config"
)

func workload(t *testing.T, name string) Workload {
	t.Helper()
	ws, err := ParseWorkloads(name)
	if err != nil || len(ws) != 1 {
		t.Fatalf("ParseWorkloads(%q) = %v, %v", name, ws, err)
	}
	return ws[0]
}

func TestChooseBoundaries(t *testing.T) {
	cases := []struct {
		w    string
		u    float64
		want OpKind
	}{
		{"A", 0, OpRead}, {"A", 0.4999, OpRead}, {"A", 0.5, OpUpdate}, {"A", 0.9999, OpUpdate},
		{"B", 0.9499, OpRead}, {"B", 0.95, OpUpdate},
		{"C", 0, OpRead}, {"C", 0.99999999, OpRead},
		{"F", 0.4999, OpRead}, {"F", 0.5, OpRMW},
		{"W", 0, OpUpdate}, {"W", 0.99999999, OpUpdate},
		{"D", 0.9499, OpRead}, {"D", 0.95, OpInsert},
		{"E", 0.0499, OpInsert}, {"E", 0.05, OpScan}, {"E", 0.9999, OpScan},
	}
	for _, c := range cases {
		if got := workload(t, c.w).Choose(c.u); got != c.want {
			t.Errorf("%s.Choose(%v) = %v, want %v", c.w, c.u, got, c.want)
		}
	}
}

func TestChooseShares(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, w := range Workloads() {
		var n [opKinds]int
		const draws = 100_000
		for range draws {
			n[w.Choose(r.Float64())]++
		}
		for k := range opKinds {
			got := float64(n[k]) / draws
			if d := got - w.Mix[k]; d > 0.01 || d < -0.01 {
				t.Errorf("%s: %v share %.3f, want %.2f", w.Name, OpKind(k), got, w.Mix[k])
			}
		}
	}
}

func TestParseWorkloads(t *testing.T) {
	ws, err := ParseWorkloads(" a, w ,F")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
	}
	if strings.Join(names, ",") != "A,W,F" {
		t.Errorf("names %v, want A,W,F in order", names)
	}
	for _, bad := range []string{"", ",", "G", "A,A", "S"} {
		if _, err := ParseWorkloads(bad); err == nil {
			t.Errorf("ParseWorkloads(%q) accepted", bad)
		}
	}
	if got := workload(t, "B").Describe(); got != "95% read, 5% update" {
		t.Errorf("B described as %q", got)
	}
}

func TestRecordMapping(t *testing.T) {
	rec := NewRecord(rand.New(rand.NewPCG(3, 4)))
	if len(rec) != Fields {
		t.Fatalf("%d fields", len(rec))
	}
	put := CorralPut("user42", rec)
	if put.Table != Table || string(put.Row) != "user42" || len(put.Cells) != Fields {
		t.Fatalf("put %v", put)
	}
	total := 0
	for i, c := range put.Cells {
		if c.Family != Family || string(c.Qualifier) != "field"+string(rune('0'+i)) || !bytes.Equal(c.Value, rec[i]) || len(c.Value) != FieldSize {
			t.Errorf("cell %d: %s:%s (%d B)", i, c.Family, c.Qualifier, len(c.Value))
		}
		total += len(c.Value)
	}
	v := EtcdValue(rec)
	if len(v) != total || len(v) != Fields*FieldSize {
		t.Fatalf("etcd value %d B, corral cells %d B", len(v), total)
	}
	for i := range rec {
		if !bytes.Equal(v[i*FieldSize:(i+1)*FieldSize], rec[i]) {
			t.Errorf("etcd value's field %d differs", i)
		}
	}
	if EtcdKey("user42") != "usertable/user42" {
		t.Errorf("etcd key %q", EtcdKey("user42"))
	}
}

func TestCorralZooCfgParses(t *testing.T) {
	dir := t.TempDir()
	zc := corralZooCfg(2, dir, 500, "async", []int{1001, 1002, 1003}, []int{2001, 2002, 2003}, []int{3001, 3002, 3003},
		extraLines("coolest", []string{"snapCount=5000"}))
	c, _, err := config.Parse(strings.NewReader(zc), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, zc)
	}
	if c.Store != "kv" || c.APIPort != 3002 || len(c.Servers) != 3 || c.APIAddrs[3] != "127.0.0.1:3003" || c.Durability != config.DurabilityAsync || c.SnapCount != 5000 {
		t.Errorf("parsed %+v", c)
	}
	if !strings.Contains(zc, "\nkv.leaderPolicy=coolest\n") {
		t.Errorf("no leader policy line in\n%s", zc)
	}
	if strings.Contains(corralZooCfg(1, dir, 500, "sync", []int{1}, []int{2}, []int{3}, extraLines("", nil)), LeaderPolicyKey) {
		t.Error("empty policy wrote a kv.leaderPolicy line")
	}
}

func TestEtcdArgv(t *testing.T) {
	argv := strings.Join(etcdArgv("etcd", 2, "/d", []int{11, 12, 13}, []int{21, 22, 23}), " ")
	for _, want := range []string{
		"--name e2", "--listen-client-urls http://127.0.0.1:12", "--initial-advertise-peer-urls http://127.0.0.1:22",
		"--initial-cluster e1=http://127.0.0.1:21,e2=http://127.0.0.1:22,e3=http://127.0.0.1:23", "--data-dir /d",
	} {
		if !strings.Contains(argv, want) {
			t.Errorf("argv lacks %q: %s", want, argv)
		}
	}
}

func TestFillRejects(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"policy":     func(c *Config) { c.LeaderPolicies = []string{"hottest"} },
		"opt":        func(c *Config) { c.ServerOpts = []string{"novalue"} },
		"opt-nl":     func(c *Config) { c.ServerOpts = []string{"a=b\nc=d"} },
		"durability": func(c *Config) { c.Durability = "fast" },
		"system":     func(c *Config) { c.Systems = []string{"redis"} },
		"threads":    func(c *Config) { c.Threads = 0 },
		"records":    func(c *Config) { c.Records = MaxRecords + 1 },
		"duration":   func(c *Config) { c.Duration = 0 },
	} {
		c := DefaultConfig()
		mut(&c)
		if err := c.Fill(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := DefaultConfig()
	if err := c.Fill(); err != nil || len(c.LeaderPolicies) != 1 || c.LeaderPolicies[0] != "" {
		t.Errorf("default: %v, policies %q", err, c.LeaderPolicies)
	}
}

func TestBudgetTaskset(t *testing.T) {
	b := &budgeter{enabled: true, mode: "taskset"}
	var cpus []string
	for i := range 3 {
		bg, err := b.assign("m")
		if err != nil {
			t.Fatal(err)
		}
		if len(bg.Wrapper) != 5 || bg.Wrapper[0] != "taskset" || bg.Wrapper[3] != "env" || bg.Wrapper[4] != "GOMAXPROCS=1" {
			t.Fatalf("member %d wrapper %v", i, bg.Wrapper)
		}
		cpus = append(cpus, bg.Wrapper[2])
	}
	if cpus[0] != "0" {
		t.Errorf("first member on CPU %s", cpus[0])
	}
	off, _ := (&budgeter{}).assign("m")
	if len(off.Wrapper) != 0 || off.Cgroup != "" {
		t.Errorf("disabled budget %+v", off)
	}
}

func hist(us ...int64) *stats.Hist {
	h := stats.NewHist()
	for _, v := range us {
		h.RecordMicros(v)
	}
	return h
}

func TestMerge(t *testing.T) {
	mk := func(read, update []int64, series []int64, errs int64) *threadResult {
		tr := &threadResult{series: series, errs: errs}
		for k := range tr.hist {
			tr.hist[k] = stats.NewHist()
		}
		tr.hist[OpRead] = hist(read...)
		tr.hist[OpUpdate] = hist(update...)
		return tr
	}
	s := &System{Name: "corral", Kind: "corral"}
	res := merge(s, workload(t, "A"), 2*time.Second, []*threadResult{
		mk([]int64{100, 200}, []int64{1000}, []int64{1, 2, 0}, 0),
		mk([]int64{300}, nil, []int64{0, 1, 1}, 2),
	})
	if res.Ops != 4 || res.Throughput != 2 || res.Errors != 2 {
		t.Errorf("ops %d, throughput %v, errors %d", res.Ops, res.Throughput, res.Errors)
	}
	if res.PerOp["read"].Count != 3 || res.PerOp["update"].Count != 1 || len(res.PerOp) != 2 {
		t.Errorf("per op %+v", res.PerOp)
	}
	if want := []int64{1, 3, 1}; !slices.Equal(res.Series, want) {
		t.Errorf("series %v, want %v", res.Series, want)
	}
	if res.Latency.Mean != 400 {
		t.Errorf("mean %v µs, want 400", res.Latency.Mean)
	}
}

func TestReportRatios(t *testing.T) {
	lat := func(mean float64, p50, p99 int64) stats.Latency {
		return stats.Latency{Count: 1, Mean: mean, P50: p50, P99: p99}
	}
	rep := &Report{
		Config:     ConfigSummary{Threads: 8, Workloads: []string{"W (100% update)"}, CommandLine: "corral bench kv"},
		BudgetMode: "taskset",
		Results: []Result{
			{System: "corral[coolest]", Kind: "corral", Workload: "W", Throughput: 3000, Latency: lat(2000, 1500, 9000), ServerCPUPerOpUs: 50, Series: []int64{300, 0}},
			{System: "etcd", Kind: "etcd", Workload: "W", Throughput: 1200, Latency: lat(5000, 4000, 18000), ServerCPUPerOpUs: 200, Series: []int64{120}},
		},
	}
	var md bytes.Buffer
	rep.Markdown(&md)
	for _, want := range []string{
		"| metric | corral[coolest] | etcd | corral[coolest]/etcd |",
		"| throughput (ops/s) | 3000 | 1200 | 2.50× |",
		"| mean latency (ms) | 2.00 | 5.00 | 0.40× |",
		"| p99 latency (ms) | 9.00 | 18.00 | 0.50× |",
		"| server CPU µs/op | 50.0 | 200.0 | 0.25× |",
		"| errors | 0 | 0 | – |",
		"taskset",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
	var jl bytes.Buffer
	if err := rep.JSONLines(&jl); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(jl.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d JSON lines", len(lines))
	}
	var got struct {
		System     string  `json:"system"`
		Throughput float64 `json:"ops_per_sec"`
		Series     []int64 `json:"series_ops_per_100ms"`
		Budget     string  `json:"cpu_budget"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	if got.System != "corral[coolest]" || got.Throughput != 3000 || !slices.Equal(got.Series, []int64{300, 0}) || got.Budget != "taskset" {
		t.Errorf("first line %+v", got)
	}
	var csv bytes.Buffer
	rep.SeriesCSV(&csv)
	if want := "system,workload,t_ms,ops\ncorral[coolest],W,0,300\ncorral[coolest],W,100,0\netcd,W,0,120\n"; csv.String() != want {
		t.Errorf("series CSV\n%s\nwant\n%s", csv.String(), want)
	}
	if Ratio(1, 0) != 0 {
		t.Error("Ratio(1, 0) != 0")
	}
}

func TestIgnoredKeys(t *testing.T) {
	dir := t.TempDir()
	log := dir + "/m1.log"
	text := `time=x level=WARN msg="zoo.cfg: line 17: kv.leaderPolicy: ignored: unknown key"
time=x level=WARN msg="line 17: kv.leaderPolicy: ignored: unknown key"
time=x level=WARN msg="zoo.cfg: line 17: kv.leaderPolicy: ignored: unknown key"
time=x level=INFO msg="kv member serving"
`
	if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &System{Members: []*Member{{logPath: log}}}
	got := s.ignoredKeys()
	if len(got) != 1 || got[0] != "line 17: kv.leaderPolicy: ignored: unknown key" {
		t.Errorf("ignoredKeys = %q", got)
	}
}

func TestCorralName(t *testing.T) {
	for _, c := range []struct {
		p    string
		g    int
		want string
	}{{"", 1, "corral"}, {"coolest", 1, "corral[coolest]"}, {"", 4, "corral[g=4]"}, {"fixed", 2, "corral[fixed,g=2]"}} {
		if got := corralName(c.p, c.g); got != c.want {
			t.Errorf("corralName(%q, %d) = %q, want %q", c.p, c.g, got, c.want)
		}
		if got := policyOf(c.want); got != c.p {
			t.Errorf("policyOf(%q) = %q, want %q", c.want, got, c.p)
		}
	}
}

func TestFitScaling(t *testing.T) {
	// Throughput exactly X(N) = 1000 N / (1 + 0.1 (N-1)): σ = 0.1, κ = 0.
	x := func(n float64) float64 { return 1000 * n / (1 + 0.1*(n-1)) }
	var results []Result
	for _, g := range []int{1, 2, 4} {
		results = append(results, Result{System: corralName("", g), Kind: SystemCorral, Workload: "C", Groups: g, Throughput: x(float64(g))})
	}
	// Two counts only: no fit. etcd: never.
	results = append(results,
		Result{System: corralName("coolest", 1), Kind: SystemCorral, Workload: "C", Groups: 1, Throughput: 5},
		Result{System: corralName("coolest", 2), Kind: SystemCorral, Workload: "C", Groups: 2, Throughput: 9},
		Result{System: SystemEtcd, Kind: SystemEtcd, Workload: "C", Groups: 1, Throughput: 7})
	sc := fitScaling(results)
	if len(sc) != 1 || sc[0].Policy != "" || sc[0].Workload != "C" || len(sc[0].Points) != 3 || sc[0].Fit == nil {
		t.Fatalf("fits %+v", sc)
	}
	f := sc[0].Fit
	if d := f.Lambda - 1000; d > 1 || d < -1 {
		t.Errorf("λ = %v, want 1000", f.Lambda)
	}
	if d := f.Sigma - 0.1; d > 0.001 || d < -0.001 {
		t.Errorf("σ = %v, want 0.1", f.Sigma)
	}
	rep := &Report{Results: results, Scaling: sc}
	var md bytes.Buffer
	rep.Markdown(&md)
	if !strings.Contains(md.String(), "| default | C | 1: 1000, 2: 1818, 4: 3077 | 1000 | 0.1000 |") {
		t.Errorf("no scaling row:\n%s", md.String())
	}
}

func TestParseClusterLog(t *testing.T) {
	path := t.TempDir() + "/cluster.log"
	text := "---- starting corral[g=2] cluster ----\ncorral kv: sharded cluster of 2 RGs x 3 replicas on 3 nodes\n" +
		"kv node 1: pid 101 api 127.0.0.1:7001\nkv node 2: pid 102 api 127.0.0.1:7002\n" +
		"kv endpoints: 127.0.0.1:7001,127.0.0.1:7002\nconfiguration manager: 127.0.0.1:2181\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	eps, nodes := ParseClusterLog(path)
	if strings.Join(eps, ",") != "127.0.0.1:7001,127.0.0.1:7002" {
		t.Errorf("endpoints %q", eps)
	}
	if len(nodes) != 2 || nodes[1] != (ClusterNode{ID: 2, PID: 102, API: "127.0.0.1:7002"}) {
		t.Errorf("nodes %+v", nodes)
	}
}

func TestKeysStayBelowInserts(t *testing.T) {
	const records = 1000
	r := rand.New(rand.NewPCG(5, 6))
	for _, name := range []string{"A", "D", "E"} {
		w := workload(t, name)
		ins := ycsb.NewInserts(records)
		k := newKeys(w, records, ins)
		for i := range 20_000 {
			if i%100 == 0 {
				// An insert taken but not yet acknowledged must not be read.
				n := ins.Take()
				if got := k.next(r); got >= n || got < 0 {
					t.Fatalf("%s: key %d with insert %d in flight", name, got, n)
				}
				ins.Ack(n)
			}
			if got := k.next(r); got < 0 || got > ins.Last() {
				t.Fatalf("%s: key %d past the last insert %d", name, got, ins.Last())
			}
		}
	}
	// D's latest favours the newest records.
	ins := ycsb.NewInserts(records)
	k := newKeys(workload(t, "D"), records, ins)
	newest := 0
	for range 10_000 {
		if k.next(r) >= records-10 {
			newest++
		}
	}
	if newest < 1000 {
		t.Errorf("latest drew the 10 newest of %d records %d times in 10000", records, newest)
	}
}
