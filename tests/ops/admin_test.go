package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/tests/harness"
)

// adminCommands are ZooKeeper 3.9.3's AdminServer commands
// (Commands.java): primary name, then aliases.
var adminCommands = [][]string{
	{"configuration", "conf", "config"},
	{"connection_stat_reset", "crst"},
	{"connections", "cons"},
	{"dirs"},
	{"dump"},
	{"environment", "env", "envi"},
	{"get_trace_mask", "gtmk"},
	{"hash"},
	{"initial_configuration", "icfg"},
	{"is_read_only", "isro"},
	{"last_snapshot", "lsnp"},
	{"leader", "lead"},
	{"monitor", "mntr"},
	{"observer_connection_stat_reset", "orst"},
	{"observers", "obsr"},
	{"restore", "rest"},
	{"ruok"},
	{"server_stats", "srvr"},
	{"set_trace_mask", "stmk"},
	{"snapshot", "snap"},
	{"stat_reset", "srst"},
	{"stats", "stat"},
	{"system_properties", "sysp"},
	{"voting_view"},
	{"watch_summary", "wchs"},
	{"watches", "wchc"},
	{"watches_by_path", "wchp"},
	{"zabstate"},
}

// adminTarget is one server with its AdminServer.
type adminTarget struct {
	name string
	srv  *harness.Server
	base string // http://host:port/commands
}

func startWithAdmin(t *testing.T, e *harness.Env, name string) *adminTarget {
	t.Helper()
	port := testport.Free(t)
	srv := e.StartWith(t, harness.Config{Extra: []string{
		"admin.enableServer=true",
		"admin.serverAddress=127.0.0.1",
		"admin.serverPort=" + strconv.Itoa(port),
	}})
	return &adminTarget{name: name, srv: srv, base: fmt.Sprintf("http://127.0.0.1:%d/commands", port)}
}

func (a *adminTarget) get(t *testing.T, path string, header http.Header) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: GET %s: %v", a.name, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: GET %s: %v", a.name, path, err)
	}
	return resp.StatusCode, resp.Header, body
}

// zooKeeperWithAdmin is an Env for Apache ZooKeeper 3.9.3 with Jetty on
// its classpath; it skips (fails under CI) when ZooKeeper cannot run.
func zooKeeperWithAdmin(t *testing.T) *harness.Env {
	t.Helper()
	t.Setenv(harness.EnvTarget, string(harness.ZooKeeper))
	zkEnv, cleanup := harness.NewEnv()
	t.Cleanup(cleanup)
	zkEnv.Require(t)
	cmd := exec.Command("bash", filepath.Join(zkEnv.Root, "tests", "zookeeper-admin-classpath.sh"))
	cmd.Dir = zkEnv.Root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ci := os.Getenv(harness.EnvCI); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("ZooKeeper's AdminServer jars unavailable (CI is set, so this fails): %v\n%s", err, stderr.String())
		}
		t.Skipf("ZooKeeper's AdminServer jars unavailable: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	zkEnv.AddZooKeeperClasspath(lines[len(lines)-1])
	return zkEnv
}

// sameState gives a server ZooKeeper's and corral's common state for the
// comparison: a session with an ephemeral and a data watch.
func sameState(t *testing.T, addr string) {
	t.Helper()
	c := connect(t, addr)
	if _, err := c.Create("/app", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/app/e", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.GetW("/app"); err != nil {
		t.Fatal(err)
	}
}

// TestAdminServerMatchesZooKeeper starts Apache ZooKeeper 3.9.3 and corral
// with the same state and compares every AdminServer command: the status,
// the command name each alias resolves to, and the JSON shape (field
// names and value types, recursively).
func TestAdminServerMatchesZooKeeper(t *testing.T) {
	if env.Kind != harness.Corral {
		t.Skip("compares corral with ZooKeeper")
	}
	env.Require(t)
	zkEnv := zooKeeperWithAdmin(t)
	ref := startWithAdmin(t, zkEnv, "zookeeper")
	got := startWithAdmin(t, env, "corral")
	sameState(t, ref.srv.Addr())
	sameState(t, got.srv.Addr())

	// The listing names the same commands.
	_, _, rl := ref.get(t, "", nil)
	_, _, gl := got.get(t, "", nil)
	// corral's own commands (transfer_leadership) come on top of
	// ZooKeeper's.
	var gls []string
	for _, l := range links(gl) {
		if !strings.Contains(l, "transfer_leadership") {
			gls = append(gls, l)
		}
	}
	if a, b := links(rl), gls; !slices.Equal(a, b) {
		t.Errorf("command listing differs:\nzookeeper %v\ncorral    %v", a, b)
	}

	for _, names := range adminCommands {
		primary := names[0]
		t.Run(primary, func(t *testing.T) {
			rs, _, rb := ref.get(t, "/"+primary, nil)
			gs, _, gb := got.get(t, "/"+primary, nil)
			if rs != gs {
				t.Errorf("status: zookeeper %d, corral %d", rs, gs)
			}
			rj, gj := decode(t, "zookeeper", rb), decode(t, "corral", gb)
			compareCommand(t, primary, rj, gj)
			for _, alias := range names[1:] {
				_, _, ab := got.get(t, "/"+alias, nil)
				if c := decode(t, "corral", ab)["command"]; c != primary {
					t.Errorf("alias %s answered as %v", alias, c)
				}
			}
		})
	}

	t.Run("unknown", func(t *testing.T) {
		rs, _, rb := ref.get(t, "/no_such_command", nil)
		gs, _, gb := got.get(t, "/no_such_command", nil)
		rj, gj := decode(t, "zookeeper", rb), decode(t, "corral", gb)
		if rs != gs || rj["error"] != gj["error"] {
			t.Errorf("zookeeper %d %v; corral %d %v", rs, rj["error"], gs, gj["error"])
		}
	})

	auth := http.Header{"Authorization": {"digest " + harness.SuperUser + ":" + harness.SuperPassword}}
	var zkSnapshot []byte // ZooKeeper's snapshot stream, for restore
	t.Run("snapshot", func(t *testing.T) {
		for _, tgt := range []*adminTarget{ref, got} {
			status, h, body := tgt.get(t, "/snapshot?streaming=true", auth)
			if status != http.StatusOK {
				t.Fatalf("%s: snapshot status %d: %s", tgt.name, status, body)
			}
			if tgt == ref {
				zkSnapshot = body
			}
			size, err := strconv.Atoi(h.Get("snapshot_size"))
			if err != nil || size != len(body) || size == 0 {
				t.Errorf("%s: snapshot_size %q, body %d bytes", tgt.name, h.Get("snapshot_size"), len(body))
			}
			if !regexp.MustCompile(`^0x[0-9a-f]+$`).MatchString(h.Get("last_zxid")) {
				t.Errorf("%s: last_zxid header %q", tgt.name, h.Get("last_zxid"))
			}
		}
		// corral limits snapshots to one per admin.rateLimiterIntervalInMS.
		if status, _, _ := got.get(t, "/snapshot", auth); status != http.StatusTooManyRequests {
			t.Errorf("corral: a second snapshot at once answered %d, want 429", status)
		}
		if status, _, _ := got.get(t, "/snapshot", http.Header{"Authorization": {"sasl whatever"}}); status != http.StatusUnauthorized {
			t.Errorf("corral: an unknown scheme answered %d, want 401", status)
		}
	})

	// restore: ZooKeeper's own snapshot stream posted to both. corral
	// reads ZooKeeper's format too, so the same stream replaces corral's
	// tree (a node only corral had is gone) and both answer the same
	// fields.
	t.Run("restore_stream", func(t *testing.T) {
		if zkSnapshot == nil {
			t.Skip("no snapshot from ZooKeeper")
		}
		if _, err := connect(t, got.srv.Addr()).Create("/only-corral", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/restore", "/rest"} {
			rs, rb := ref.post(t, path, http.Header{}, zkSnapshot)
			gs, gb := got.post(t, path, http.Header{}, zkSnapshot)
			if rs != gs || rs != http.StatusUnauthorized {
				t.Errorf("%s without auth: zookeeper %d, corral %d", path, rs, gs)
			}
			compareCommand(t, "restore", decode(t, "zookeeper", rb), decode(t, "corral", gb))
		}
		rs, rb := ref.post(t, "/restore", auth, zkSnapshot)
		gs, gb := got.post(t, "/restore", auth, zkSnapshot)
		if rs != http.StatusOK || gs != http.StatusOK {
			t.Fatalf("restore: zookeeper %d %s; corral %d %s", rs, rb, gs, gb)
		}
		rj, gj := decode(t, "zookeeper", rb), decode(t, "corral", gb)
		compareCommand(t, "restore", rj, gj)
		if rj["last_zxid"] == nil {
			t.Errorf("zookeeper's answer has no last_zxid: %v", rj)
		}
		c := connect(t, got.srv.Addr())
		if ok, _, err := c.Exists("/only-corral"); err != nil || ok {
			t.Errorf("corral after restoring ZooKeeper's snapshot: /only-corral exists=%v err=%v", ok, err)
		}
		if data, _, err := c.Get("/app"); err != nil || string(data) != "v" {
			t.Errorf("corral after restore: /app = %q, %v", data, err)
		}
		// One restore per interval, in both.
		rs, _ = ref.post(t, "/restore", auth, zkSnapshot)
		gs, _ = got.post(t, "/restore", auth, zkSnapshot)
		if rs != http.StatusTooManyRequests || gs != rs {
			t.Errorf("second restore at once: zookeeper %d, corral %d, want 429", rs, gs)
		}
	})
}

// post sends body to the command at path.
func (a *adminTarget) post(t *testing.T, path string, header http.Header, body []byte) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: POST %s: %v", a.name, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: POST %s: %v", a.name, path, err)
	}
	return resp.StatusCode, out
}

func decode(t *testing.T, who string, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%s: not a JSON object: %v\n%s", who, err, b)
	}
	return m
}

// compareCommand compares one command's answers. Most must have the same
// shape; a few carry JVM- or workload-specific key sets.
func compareCommand(t *testing.T, name string, ref, got map[string]any) {
	t.Helper()
	switch name {
	case "environment":
		if a, b := keys(ref), keys(got); !slices.Equal(a, b) {
			t.Errorf("keys differ:\nzookeeper %v\ncorral    %v", a, b)
		}
		return
	case "system_properties":
		// JVM properties: only the form (a flat object of strings) and
		// the keys both have (java.*, os.*, user.* stand-ins) compare.
		for k, v := range got {
			if _, isStr := v.(string); !isStr && k != "error" {
				t.Errorf("%s = %v is not a string", k, v)
			}
		}
		for _, k := range []string{"java.version", "os.name", "os.arch", "user.name", "file.separator", "line.separator"} {
			if _, ok := got[k]; !ok {
				t.Errorf("missing %s", k)
			}
		}
		return
	case "hash":
		// ZooKeeper's digest log is empty until its first 128
		// transactions; corral lists the current digest at once.
		for _, d := range got["digests"].([]any) {
			if s := shape(d); s != "{digest:int,digestVersion:int,zxid:int}" {
				t.Errorf("digest entry %s", s)
			}
		}
		delete(ref, "digests")
		delete(got, "digests")
	case "monitor":
		// ZooKeeper prints every metric its pipeline has; corral those it
		// has an equivalent of. Shared keys must have the same type, and
		// the ones dashboards and alerts use must be there.
		for k, v := range got {
			if rv, ok := ref[k]; ok && shape(rv) != shape(v) {
				t.Errorf("%s: zookeeper %s, corral %s", k, shape(rv), shape(v))
			}
		}
		for _, k := range []string{"znode_count", "watch_count", "ephemerals_count", "approximate_data_size",
			"num_alive_connections", "outstanding_requests", "avg_latency", "min_latency", "max_latency",
			"avg_readlatency", "p99_readlatency", "cnt_updatelatency", "avg_fsynctime", "cnt_snapshottime",
			"cnt_election_time", "looking_count", "commit_count", "avg_proposal_latency", "avg_quorum_ack_latency",
			"open_file_descriptor_count", "max_file_descriptor_count", "uptime", "server_state", "version"} {
			if _, ok := ref[k]; !ok {
				t.Errorf("test error: zookeeper has no %s", k)
			}
			if _, ok := got[k]; !ok {
				t.Errorf("corral has no %s", k)
			}
		}
		return
	}
	if a, b := shape(ref), shape(got); a != b {
		t.Errorf("JSON shape differs:\nzookeeper %s\ncorral    %s", a, b)
	}
}

// shape renders a JSON value's structure: objects by sorted keys (objects
// keyed by ids or paths, whose keys are data, by their values' merged
// shape), arrays by their elements' merged shape, scalars by type.
func shape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		if dataKeyed(x) {
			return "{*:" + merged(values(x)) + "}"
		}
		var parts []string
		for _, k := range keys(x) {
			parts = append(parts, k+":"+shape(x[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		return "[" + merged(x) + "]"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "float"
		}
		return "int"
	case string:
		return "string"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// merged is the shape of the elements of a list: "" when empty (an empty
// list matches any), else the one shape they share (or a list of them).
func merged(xs []any) string {
	seen := map[string]bool{}
	for _, x := range xs {
		seen[shape(x)] = true
	}
	if len(seen) > 1 { // an empty list or object takes the others' shape
		delete(seen, "[]")
		delete(seen, "{}")
	}
	var out []string
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, "|")
}

var dataKey = regexp.MustCompile(`^(/.*|-?\d+)$`)

// dataKeyed reports whether an object's keys are data (session ids,
// times, paths) rather than field names.
func dataKeyed(m map[string]any) bool {
	if len(m) == 0 {
		return false
	}
	for k := range m {
		if !dataKey.MatchString(k) {
			return false
		}
	}
	return true
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func values(m map[string]any) []any {
	out := make([]any, 0, len(m))
	for _, k := range keys(m) {
		out = append(out, m[k])
	}
	return out
}

func links(b []byte) []string {
	var out []string
	for _, m := range regexp.MustCompile(`href="[^"]*/([a-z_]+)"`).FindAllSubmatch(b, -1) {
		out = append(out, string(m[1]))
	}
	sort.Strings(out)
	return out
}

// TestAdminPortBusyStillServes: when the AdminServer's port cannot be
// bound, corral logs a warning and serves clients, as ZooKeeper does.
func TestAdminPortBusyStillServes(t *testing.T) {
	if env.Kind != harness.Corral {
		t.Skip("corral's start-up")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	srv := env.StartWith(t, harness.Config{Extra: []string{
		"admin.enableServer=true", "admin.serverAddress=127.0.0.1", "admin.serverPort=" + strconv.Itoa(port),
	}})
	if got := srv.MustFourLetter("ruok"); got != "imok" {
		t.Errorf("ruok = %q", got)
	}
	log, err := os.ReadFile(srv.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "AdminServer not started") {
		t.Errorf("no warning about the AdminServer in the log:\n%s", log)
	}
}
