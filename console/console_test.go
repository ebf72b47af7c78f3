package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/corral-db/corral/internal/fakezk"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/server/flw"
)

func TestPageNames(t *testing.T) {
	var names []string
	for i := 1199; i >= 0; i-- { // unsorted, as a server may return them
		names = append(names, fmt.Sprintf("n%04d", i))
	}
	page, total, next := pageNames(slices.Clone(names), "", "", 500)
	if total != 1200 || len(page) != 500 || page[0] != "n0000" || next != "n0499" {
		t.Fatalf("first page: total %d, %d names from %s, next %q", total, len(page), page[0], next)
	}
	page, _, next = pageNames(slices.Clone(names), "", next, 500)
	if page[0] != "n0500" || next != "n0999" {
		t.Fatalf("second page from %s, next %q", page[0], next)
	}
	page, _, next = pageNames(slices.Clone(names), "", next, 500)
	if len(page) != 200 || next != "" {
		t.Fatalf("last page: %d names, next %q", len(page), next)
	}
	// A cursor that is no longer a child (deleted meanwhile) still pages on.
	page, _, _ = pageNames(slices.Clone(names), "", "n0499x", 2)
	if !slices.Equal(page, []string{"n0500", "n0501"}) {
		t.Fatalf("after a vanished cursor: %v", page)
	}
	page, total, next = pageNames(slices.Clone(names), "n01", "", 500)
	if total != 100 || len(page) != 100 || next != "" {
		t.Fatalf("prefix: total %d, %d names, next %q", total, len(page), next)
	}
	page, total, next = pageNames(nil, "", "", 500)
	if total != 0 || len(page) != 0 || next != "" {
		t.Fatalf("no children: %v %d %q", page, total, next)
	}
}

// The parsers read what server/flw renders, so they are tested against it.
func TestParseFourLetterWords(t *testing.T) {
	st := &flw.State{
		Version: "3.9.3-corral", Mode: "leader", Serving: true,
		LatencyMin: 1, LatencyAvg: 2.5, LatencyMax: 9, Received: 100, Sent: 99, Outstanding: 3,
		Zxid: 0x300000007, NodeCount: 12,
		Connections: []flw.ConnInfo{{
			Remote: "127.0.0.1:5000", InterestOps: 1, Queued: 1, Received: 7, Sent: 6,
			HasSession: true, SessionID: 0x1234, LastOp: "GETD", Timeout: 30000, LastZxid: 5,
			LastLatency: 2, MinLatency: 1, AvgLatency: 2, MaxLatency: 4, Established: 1700000000000,
		}},
		Watches: flw.WatchInfo{BySession: map[int64][]string{0x1234: {"/a", "/b"}, 0x99: {"/a"}}},
		Metrics: []flw.Metric{{Name: "znode_count", Value: 12}, {Name: "avg_latency", Value: 2.5}},
	}
	all := map[string]bool{"srvr": true, "cons": true, "wchs": true, "wchc": true, "mntr": true}
	s, err := parseSrvr(string(flw.Render("srvr", st, all)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != "leader" || s.Zxid != 0x300000007 || s.NodeCount != 12 || s.Outstanding != 3 || s.LatencyAvg != 2.5 || s.Connections != 1 {
		t.Errorf("srvr: %+v", s)
	}
	conns, err := parseCons(string(flw.Render("cons", st, all)))
	if err != nil || len(conns) != 1 {
		t.Fatalf("cons: %v %v", conns, err)
	}
	c := conns[0]
	if c.Remote != "127.0.0.1:5000" || c.SessionID != "0x1234" || c.LastOp != "GETD" || c.Timeout != 30000 || c.MaxLatency != 4 || c.Queued != 1 {
		t.Errorf("cons: %+v", c)
	}
	nc, np, nt, err := parseWchs(string(flw.Render("wchs", st, all)))
	if err != nil || nc != 2 || np != 2 || nt != 3 {
		t.Errorf("wchs: %d %d %d %v", nc, np, nt, err)
	}
	ws, trunc, err := parseWchc(string(flw.Render("wchc", st, all)), 2)
	if err != nil || len(ws) != 2 || !trunc {
		t.Fatalf("wchc: %+v truncated=%v %v", ws, trunc, err)
	}
	if ws[1].SessionID != "0x1234" || ws[1].Count != 2 || len(ws[1].Paths) != 1 {
		t.Errorf("wchc with 2 paths kept: %+v", ws)
	}
	m := parseMntr(string(flw.Render("mntr", st, all)))
	if m["znode_count"] != "12" || m["avg_latency"] != "2.5" {
		t.Errorf("mntr: %v", m)
	}
	st.Serving = false
	if _, err := parseSrvr(string(flw.Render("srvr", st, all))); err != errNotServing {
		t.Errorf("srvr of a member not serving: %v", err)
	}
}

func TestToPoint(t *testing.T) {
	prev := map[string]float64{"packets_received": 100, "cnt_fsynctime": 10, "sum_fsynctime": 50}
	cur := map[string]float64{"packets_received": 300, "cnt_fsynctime": 14, "sum_fsynctime": 62, "znode_count": 7}
	p := toPoint(cur, prev, 2)
	if !p.Up || p.Rps != 100 || p.FsyncAvg == nil || *p.FsyncAvg != 3 || p.Znodes != 7 {
		t.Errorf("point %+v", p)
	}
	// A counter that went backwards (member restarted) gives no rate.
	if p := toPoint(prev, cur, 2); p.Rps != 0 || p.FsyncAvg != nil {
		t.Errorf("after a reset: %+v", p)
	}
	if p := toPoint(nil, prev, 1); p.Up {
		t.Error("a member without metrics is up")
	}
}

// fakeSource counts samples and returns a growing packet counter.
type fakeSource struct{ n atomic.Int64 }

func (f *fakeSource) Sample(_ context.Context, id int, _ string) (map[string]float64, error) {
	k := f.n.Add(1)
	if id == 2 {
		return nil, fmt.Errorf("member 2 is down")
	}
	return map[string]float64{"packets_received": float64(100 * k), "znode_count": 5}, nil
}

func newTestConsole(t *testing.T, cfg Config) (*Console, *httptest.Server) {
	t.Helper()
	if cfg.Servers == nil {
		cfg.Servers = []string{"127.0.0.1:1", "127.0.0.1:2"}
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/console/", http.StripPrefix("/console", c))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		c.Close()
	})
	return c, srv
}

func get(t *testing.T, url string, guard bool) (int, map[string]any) {
	t.Helper()
	return do(t, "GET", url, "", guard)
}

func do(t *testing.T, method, url, body string, guard bool) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if guard {
		req.Header.Set("X-Console", "1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// TestSamplerRunsOnlyWhileWatched: the sampler starts with the first
// poll of api/metrics, samples every SampleInterval while polled, stops
// by itself once IdleStop has passed without a poll, and the next poll
// starts it again. Its subject is the sampler's timers: it runs in a
// synctest bubble, whose clock moves only when every goroutine in it
// waits, and calls the console's handler directly (a bubble's clock does
// not move while a goroutine waits on the network).
func TestSamplerRunsOnlyWhileWatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			interval = 10 * time.Millisecond
			idle     = 50 * time.Millisecond
		)
		src := &fakeSource{}
		c, err := New(Config{Servers: []string{"127.0.0.1:1", "127.0.0.1:2"},
			Metrics: src, SampleInterval: interval, IdleStop: idle})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		poll := func(since int64) []any {
			t.Helper()
			req := httptest.NewRequest("GET", fmt.Sprintf("/api/metrics?since=%d", since), nil)
			req.Header.Set("X-Console", "1")
			rec := httptest.NewRecorder()
			c.ServeHTTP(rec, req)
			var out map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &out); rec.Code != 200 || err != nil {
				t.Fatalf("metrics: %d %s", rec.Code, rec.Body)
			}
			samples, _ := out["samples"].([]any)
			return samples
		}
		if running, runs := c.sampler.state(); running || runs != 0 || src.n.Load() != 0 {
			t.Fatal("the sampler ran before anyone asked for metrics")
		}
		poll(0)
		// Polled at 0 and 25 ms: samples at 0, 10 and 20 ms.
		time.Sleep(2*interval + interval/2)
		samples := poll(0)
		if len(samples) != 3 {
			t.Fatalf("%d samples in 2.5 intervals of polling, want 3", len(samples))
		}
		last := samples[len(samples)-1].(map[string]any)
		points := last["points"].([]any)
		if up := points[0].(map[string]any)["up"]; up != true {
			t.Errorf("member 1 not up: %v", points[0])
		}
		if up := points[1].(map[string]any)["up"]; up != false {
			t.Errorf("member 2 (down) shown up: %v", points[1])
		}
		// Nobody polls: the sampler runs on until IdleStop has passed,
		// stops at the next tick, and samples no more.
		time.Sleep(idle - time.Millisecond)
		synctest.Wait()
		if running, _ := c.sampler.state(); !running {
			t.Fatal("the sampler stopped before IdleStop passed without a poll")
		}
		time.Sleep(interval + time.Millisecond)
		synctest.Wait()
		if running, _ := c.sampler.state(); running {
			t.Fatal("the sampler still runs a tick after IdleStop passed without a poll")
		}
		n := src.n.Load()
		time.Sleep(time.Minute)
		if src.n.Load() != n {
			t.Error("sampled after stopping")
		}
		// A new poll starts it again, and since= returns only newer samples.
		t0 := int64(last["t"].(float64))
		poll(t0)
		time.Sleep(interval / 2)
		for _, s := range poll(t0) {
			if int64(s.(map[string]any)["t"].(float64)) <= t0 {
				t.Errorf("since=%d returned a sample at %v", t0, s)
			}
		}
		if running, runs := c.sampler.state(); !running || runs != 2 {
			t.Errorf("after a poll of the stopped sampler: running %v, runs %d, want 2", running, runs)
		}
	})
}

func TestRingKeepsTheWindow(t *testing.T) {
	c, err := New(Config{Servers: []string{"127.0.0.1:1"}, SampleInterval: time.Second, Window: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := c.sampler
	for i := 1; i <= 6; i++ {
		s.ring[s.next] = sample{T: int64(i)}
		s.next = (s.next + 1) % len(s.ring)
		if s.next == 0 {
			s.full = true
		}
	}
	var ts []int64
	for _, smp := range s.since(0) {
		ts = append(ts, smp.T)
	}
	if !slices.Equal(ts, []int64{3, 4, 5, 6}) {
		t.Errorf("ring holds %v, want the last 4 in order", ts)
	}
}

func TestAPIGuards(t *testing.T) {
	_, srv := newTestConsole(t, Config{Writable: false})
	base := srv.URL + "/console"

	// The page itself.
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "corral <span>console</span>") {
		t.Fatalf("index: %d", resp.StatusCode)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	for _, f := range []string{"/app.js", "/style.css"} {
		resp, err := http.Get(base + f)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", f, resp.StatusCode, err)
		}
		resp.Body.Close()
	}

	// No X-Console header: refused before anything else (CSRF guard).
	if code, out := get(t, base+"/api/info", false); code != 403 || errCode(out) != "FORBIDDEN" {
		t.Errorf("without the guard header: %d %v", code, out)
	}
	code, out := get(t, base+"/api/info", true)
	if code != 200 || out["writable"] != false {
		t.Errorf("info: %d %v", code, out)
	}
	// Read-only: every write is refused by the console itself.
	for _, op := range []string{"create", "set", "delete"} {
		code, out := do(t, "POST", base+"/api/"+op, `{"path":"/x"}`, true)
		if code != 403 || errCode(out) != "READONLY" {
			t.Errorf("%s on a read-only console: %d %v", op, code, out)
		}
		if code, _ := do(t, "GET", base+"/api/"+op, "", true); code < 400 {
			t.Errorf("GET %s: %d", op, code)
		}
	}
	// Bad input gets a clear error.
	req, _ := http.NewRequest("GET", base+"/api/node?path=/x", nil)
	req.Header.Set("X-Console", "1")
	req.Header.Set("X-Console-Auth", "not base64!")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("bad credentials header: %d", resp.StatusCode)
	}
	for _, q := range []string{"path=x", "path=/a/", "path=/a//b"} {
		if code, out := get(t, base+"/api/children?"+q, true); code != 400 || errCode(out) != "BADREQUEST" {
			t.Errorf("children?%s: %d %v", q, code, out)
		}
	}
	if code, _ := get(t, base+"/api/sessions?member=3", true); code != 400 {
		t.Errorf("member out of range: %d", code)
	}
}

func TestWritableChecksBody(t *testing.T) {
	_, srv := newTestConsole(t, Config{Writable: true})
	base := srv.URL + "/console/api/"
	for _, tc := range []struct{ op, body, want string }{
		{"create", `{"path":"/a","unknown":1}`, "BADREQUEST"},
		{"create", `{"path":"/a","data":"%%%"}`, "BADREQUEST"},
		{"create", `{"path":"/a","mode":"ephemeral"}`, "BADREQUEST"},
		{"create", `{"path":"/a","acl":[{"scheme":"world","id":"anyone","perms":"rx"}]}`, "BADREQUEST"},
		{"create", `{"path":"/"}`, "BADREQUEST"},
		{"delete", `{"path":"/"}`, "BADREQUEST"},
		{"set", `not json`, "BADREQUEST"},
	} {
		if code, out := do(t, "POST", base+tc.op, tc.body, true); code != 400 || errCode(out) != tc.want {
			t.Errorf("%s %s: %d %v", tc.op, tc.body, code, out)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, servers := range [][]string{nil, {""}, {"a:1,b:2"}} {
		if _, err := New(Config{Servers: servers}); err == nil {
			t.Errorf("New accepted servers %q", servers)
		}
	}
	for _, cfg := range []Config{
		{Servers: []string{"a:1"}, IDs: []int64{1, 2}},
		{Servers: []string{"a:1"}, AdminAddrs: []string{"a:2", "b:2"}},
		{Servers: []string{"a:1"}, AdminAddrs: []string{"no port"}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New accepted %+v", cfg)
		}
	}
}

func TestCloseStopsEverything(t *testing.T) {
	c, srv := newTestConsole(t, Config{Metrics: &fakeSource{}, SampleInterval: 10 * time.Millisecond})
	get(t, srv.URL+"/console/api/metrics", true)
	c.Close()
	if running, _ := c.sampler.state(); running {
		t.Error("sampler running after Close")
	}
	if code, _ := get(t, srv.URL+"/console/api/info", true); code != http.StatusServiceUnavailable {
		t.Errorf("after Close: %d", code)
	}
}

func TestSessionsCloseWhenIdle(t *testing.T) {
	// Nothing listens on port 1, so the connect fails; the entry is kept
	// until idle all the same, and the janitor exits once none is left.
	c, srv := newTestConsole(t, Config{
		Servers: []string{"127.0.0.1:1"}, ConnIdle: time.Millisecond, // raised to 2×RequestTimeout
		RequestTimeout: 500 * time.Millisecond,
	})
	code, out := get(t, srv.URL+"/console/api/node?path=/", true)
	if code < 500 {
		t.Fatalf("node with no server: %d %v", code, out)
	}
	if c.sessions.open() != 1 {
		t.Fatalf("%d sessions cached, want 1", c.sessions.open())
	}
	testutil.Eventually(t, 10*time.Second, "idle sessions closed and the janitor stopped", func() bool {
		c.sessions.mu.Lock()
		defer c.sessions.mu.Unlock()
		return len(c.sessions.entries) == 0 && !c.sessions.janitorLive
	})
}

// flwFake answers every four-letter word with srvr's text for mode, as
// server/flw renders it; it stops with the test.
func flwFake(t *testing.T, mode string) string {
	t.Helper()
	st := &flw.State{Version: "3.9.3-corral", Mode: mode, Serving: true, Zxid: 0x100000001}
	return fakezk.FourLetter(t, string(flw.Render("srvr", st, map[string]bool{"srvr": true})))
}

// TestTransferAsksTheLeadersAdminServer: api/transfer finds the leader by
// srvr and posts transfer_leadership to its AdminServer with the user's
// credentials and the target's server id, and maps the answers.
func TestTransferAsksTheLeadersAdminServer(t *testing.T) {
	var gotAuth, gotTo atomic.Value
	status := atomic.Int64{}
	status.Store(200)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/commands/transfer_leadership" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, 404)
			return
		}
		gotAuth.Store(r.Header.Get("Authorization"))
		gotTo.Store(r.URL.Query().Get("to"))
		w.WriteHeader(int(status.Load()))
		fmt.Fprint(w, `{"command":"transfer_leadership","error":"this server is not the leader"}`)
	}))
	t.Cleanup(admin.Close)
	servers := []string{flwFake(t, "follower"), flwFake(t, "leader"), flwFake(t, "follower")}
	cfg := Config{Servers: servers, IDs: []int64{11, 12, 13}, AdminAddrs: []string{"", strings.TrimPrefix(admin.URL, "http://")}, Writable: true}
	_, srv := newTestConsole(t, cfg)
	url := srv.URL + "/console/api/transfer"
	post := func(body, auth string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("X-Console", "1")
		if auth != "" {
			req.Header.Set("X-Console-Auth", base64.StdEncoding.EncodeToString([]byte(auth)))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}

	if code, out := post(`{"to":3}`, ""); code != 403 || errCode(out) != "NOAUTH" {
		t.Errorf("anonymous: %d %v", code, out)
	}
	for _, body := range []string{`{"to":0}`, `{"to":4}`, `{"to":"x"}`, `{"member":1}`} {
		if code, out := post(body, "super:pw"); code != 400 || errCode(out) != "BADREQUEST" {
			t.Errorf("%s: %d %v", body, code, out)
		}
	}
	if code, out := post(`{"to":2}`, "super:pw"); code != 409 || errCode(out) != "ISLEADER" {
		t.Errorf("to the leader: %d %v", code, out)
	}
	if gotAuth.Load() != nil {
		t.Fatal("the AdminServer was asked before a valid request")
	}
	code, out := post(`{"to":3}`, "super:pw")
	if code != 200 || out["from"] != float64(12) || out["to"] != float64(13) {
		t.Errorf("transfer: %d %v", code, out)
	}
	if gotAuth.Load() != "digest super:pw" || gotTo.Load() != "13" {
		t.Errorf("AdminServer got Authorization %q, to=%q", gotAuth.Load(), gotTo.Load())
	}
	for st, want := range map[int64]string{401: "AUTHFAILED", 403: "NOAUTH", 409: "NOTLEADER", 503: "ADMIN503"} {
		status.Store(st)
		if code, out := post(`{"to":1}`, "super:pw"); errCode(out) != want || code < 400 {
			t.Errorf("AdminServer answering %d: %d %v, want %s", st, code, out, want)
		}
	}

	// The leader's AdminServer address unknown: refused, nothing asked.
	cfg.AdminAddrs = []string{strings.TrimPrefix(admin.URL, "http://")}
	_, srv2 := newTestConsole(t, cfg)
	url = srv2.URL + "/console/api/transfer"
	if code, out := post(`{"to":1}`, "super:pw"); code != 409 || errCode(out) != "NOADMIN" {
		t.Errorf("leader's admin address unknown: %d %v", code, out)
	}
	// Read-only console: refused by the console.
	cfg.Writable = false
	_, srv3 := newTestConsole(t, cfg)
	url = srv3.URL + "/console/api/transfer"
	if code, out := post(`{"to":1}`, "super:pw"); code != 403 || errCode(out) != "READONLY" {
		t.Errorf("read-only: %d %v", code, out)
	}
}

func TestToPointPercentiles(t *testing.T) {
	p := toPoint(map[string]float64{"p50_readlatency": 1, "p99_readlatency": 7, "p50_updatelatency": 2, "p99_updatelatency": 9}, nil, 1)
	if p.ReadP50 == nil || *p.ReadP50 != 1 || *p.ReadP99 != 7 || *p.UpdateP50 != 2 || *p.UpdateP99 != 9 {
		t.Errorf("percentiles: %+v", p)
	}
	if p := toPoint(map[string]float64{"znode_count": 1}, nil, 1); p.ReadP50 != nil || p.UpdateP99 != nil {
		t.Errorf("percentiles of a member that reports none: %+v", p)
	}
}
