package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/metric"
	"github.com/corral-db/corral/server"
	"github.com/corral-db/corral/server/flw"
	"github.com/corral-db/corral/zab"
)

// fakeServer is a CommandSource with fixed answers.
type fakeServer struct {
	fakeSource
	serving      bool
	resets       int
	authzFor     string // the digest auth that is authorized
	snapshotData string
	transferTo   uint64 // the last TransferLeadership target
	transferErr  error
	restored     []string // the bodies RestoreSnapshot was given
	restoreErr   error
}

func (f *fakeServer) RestoreSnapshot(r io.Reader) (int64, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	f.restored = append(f.restored, string(b))
	if f.restoreErr != nil {
		return 0, f.restoreErr
	}
	return 0x100000003, nil
}

func (f *fakeServer) TransferLeadership(to uint64) error {
	f.transferTo = to
	return f.transferErr
}

func (f *fakeServer) FourLetterState(word string) *flw.State {
	return &flw.State{Version: "3.9.3-corral", Mode: "standalone", NodeCount: 5,
		Watches: flw.WatchInfo{BySession: map[int64][]string{7: {"/a", "/b"}, 9: {"/a"}}}}
}
func (f *fakeServer) Serving() bool               { return f.serving }
func (f *fakeServer) ResetStats()                 { f.resets++ }
func (f *fakeServer) ResetConnectionStats()       { f.resets++ }
func (f *fakeServer) Zab() (server.ZabView, bool) { return server.ZabView{}, false }
func (f *fakeServer) LastZxid() int64             { return 0x100000002 }
func (f *fakeServer) LastSnapshot() (int64, time.Time, bool) {
	return 0x100000002, time.Unix(1700000000, 0), true
}
func (f *fakeServer) AdminAuthorized(scheme, auth, ip, path string, perm int32) (bool, bool) {
	if scheme != "digest" && scheme != "ip" {
		return false, false
	}
	return true, scheme == "digest" && auth == f.authzFor
}
func (f *fakeServer) WriteSnapshotFile(dir string) (string, int64, error) {
	p := filepath.Join(dir, "snap.tmp")
	return p, 0x100000002, os.WriteFile(p, []byte(f.snapshotData), 0o644)
}

func newTestAdmin(t *testing.T, mutate func(*config.Config)) (*fakeServer, *httptest.Server, *time.Time) {
	t.Helper()
	src := &fakeServer{fakeSource: fakeSource{reg: metric.NewRegistry(nil)}, serving: true,
		authzFor: "super:test", snapshotData: "SNAPSHOT"}
	cfg := config.Default()
	cfg.DataDir, cfg.DataLogDir = "/d", "/d"
	if mutate != nil {
		mutate(cfg)
	}
	now := time.Unix(1000, 0)
	a := NewAdminServer(src, AdminOptions{Config: cfg, InitialConfig: "tickTime=2000\n", SnapshotDir: t.TempDir(),
		Now: func() time.Time { return now }})
	h := NewHTTPServer("AdminServer", 0, nil)
	a.Mount(h)
	srv := httptest.NewServer(h.srv.Handler)
	t.Cleanup(srv.Close)
	return src, srv, &now
}

func call(t *testing.T, method, url, auth string, body []byte) (int, http.Header, map[string]any, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: bad JSON %v\n%s", method, url, err, raw)
		}
	}
	return resp.StatusCode, resp.Header, m, raw
}

func TestCommandsAnswerWithZooKeeperEnvelope(t *testing.T) {
	src, srv, _ := newTestAdmin(t, nil)
	u := srv.URL + "/commands"
	st, _, m, _ := call(t, "GET", u+"/ruok", "", nil)
	if st != 200 || m["command"] != "ruok" || m["error"] != nil || len(m) != 2 {
		t.Errorf("ruok: %d %v", st, m)
	}
	_, _, m, _ = call(t, "GET", u+"/wchs", "", nil)
	if m["command"] != "watch_summary" || m["num_connections"] != 2.0 || m["num_paths"] != 2.0 || m["num_total_watches"] != 3.0 {
		t.Errorf("wchs: %v", m)
	}
	_, _, m, _ = call(t, "GET", u+"/wchp", "", nil)
	if p := m["path_to_session_ids"].(map[string]any); len(p["/a"].([]any)) != 2 {
		t.Errorf("wchp: %v", m)
	}
	_, _, m, _ = call(t, "GET", u+"/lsnp", "", nil)
	if m["zxid"] != "100000002" || m["timestamp"] != 1700000000.0 {
		t.Errorf("lsnp: %v", m)
	}
	_, _, m, _ = call(t, "GET", u+"/leader", "", nil)
	if m["error"] != "server is not initialized" {
		t.Errorf("leader on a standalone server: %v", m)
	}
	_, _, m, _ = call(t, "GET", u+"/stmk?traceMask=x", "", nil)
	if !strings.Contains(m["error"].(string), "got x") {
		t.Errorf("stmk with garbage: %v", m)
	}
	_, _, m, _ = call(t, "GET", u+"/stmk?traceMask=99", "", nil)
	if m["tracemask"] != 99.0 {
		t.Errorf("stmk: %v", m)
	}
	if _, _, m, _ = call(t, "GET", u+"/gtmk", "", nil); m["tracemask"] != 99.0 {
		t.Errorf("gtmk after stmk: %v", m)
	}
	call(t, "GET", u+"/srst", "", nil)
	call(t, "GET", u+"/crst", "", nil)
	if src.resets != 2 {
		t.Errorf("resets = %d", src.resets)
	}
	st, _, m, _ = call(t, "GET", u+"/nope", "", nil)
	if st != 200 || m["error"] != "Unknown command: nope" {
		t.Errorf("unknown: %d %v", st, m)
	}
	_, _, _, raw := call(t, "GET", u, "", nil)
	if !strings.Contains(string(raw), `<a href="/commands/zabstate">zabstate</a>`) || strings.Count(string(raw), "<a ") != len(commandTable) {
		t.Errorf("listing:\n%s", raw)
	}
	src.serving = false
	_, _, m, _ = call(t, "GET", u+"/ruok", "", nil)
	if m["error"] != "This ZooKeeper instance is not currently serving requests" {
		t.Errorf("ruok while not serving: %v", m)
	}
	if _, _, m, _ = call(t, "GET", u+"/monitor", "", nil); m["error"] != nil {
		t.Errorf("monitor needs no serving server: %v", m)
	}
}

func TestSnapshotAuthAndRateLimit(t *testing.T) {
	_, srv, now := newTestAdmin(t, nil)
	u := srv.URL + "/commands/snapshot"
	for _, tc := range []struct {
		auth   string
		status int
		err    string
	}{
		{"", 401, "Auth info is missing for the command"},
		{"sasl x", 401, "Not authenticated"},
		{"digest a b c", 401, "Not authenticated"},
		{"digest bob:pw", 403, "Not authorized"},
	} {
		st, _, m, _ := call(t, "GET", u, tc.auth, nil)
		if st != tc.status || m["error"] != tc.err {
			t.Errorf("auth %q: %d %v, want %d %q", tc.auth, st, m, tc.status, tc.err)
		}
	}
	st, h, _, raw := call(t, "GET", u, "digest super:test", nil)
	if st != 200 || string(raw) != "SNAPSHOT" || h.Get("snapshot_size") != "8" || h.Get("last_zxid") != "0x100000002" {
		t.Errorf("snapshot: %d %v %q", st, h, raw)
	}
	if st, _, _, _ := call(t, "GET", u, "digest super:test", nil); st != 429 {
		t.Errorf("second snapshot at once: %d, want 429", st)
	}
	*now = now.Add(5 * time.Minute)
	st, h, m, _ := call(t, "GET", u+"?streaming=false", "digest super:test", nil)
	if st != 200 || h.Get("snapshot_size") != "8" || m["command"] != "snapshot" {
		t.Errorf("snapshot without streaming: %d %v %v", st, h, m)
	}
}

// TestRestore: authentication and authorization first, then POST only,
// a body, one restore per interval; the answer is last_zxid, and a failed
// restore says why with ZooKeeper's 500 (an ensemble member's refusal 409)
// and counts in restore_error_count.
func TestRestore(t *testing.T) {
	src, srv, now := newTestAdmin(t, nil)
	u := srv.URL + "/commands/restore"
	if st, _, m, _ := call(t, "POST", u, "", []byte("x")); st != 401 || m["error"] != "Auth info is missing for the command" {
		t.Errorf("restore without auth: %d %v", st, m)
	}
	if st, _, _, _ := call(t, "POST", u, "digest someone:else", []byte("x")); st != 403 {
		t.Errorf("restore by an unauthorized user: %d", st)
	}
	if st, _, _, _ := call(t, "POST", u, "sasl x", []byte("x")); st != 401 {
		t.Errorf("restore with an unknown scheme: %d", st)
	}
	if st, _, _, _ := call(t, "GET", u, "digest super:test", nil); st != http.StatusMethodNotAllowed {
		t.Errorf("GET restore: %d", st)
	}
	if st, _, m, _ := call(t, "POST", u, "digest super:test", nil); st != 400 || m["error"] == nil {
		t.Errorf("restore without a body: %d %v", st, m)
	}
	if len(src.restored) != 0 {
		t.Fatalf("refused requests reached the server: %q", src.restored)
	}
	st, _, m, _ := call(t, "POST", u, "digest super:test", []byte("SNAPSHOT"))
	if st != 200 || m["command"] != "restore" || m["error"] != nil || m["last_zxid"] != float64(0x100000003) || len(m) != 3 {
		t.Errorf("restore: %d %v", st, m)
	}
	if len(src.restored) != 1 || src.restored[0] != "SNAPSHOT" {
		t.Errorf("the server was given %q", src.restored)
	}
	if st, _, _, _ := call(t, "POST", srv.URL+"/commands/rest", "digest super:test", []byte("SNAPSHOT")); st != 429 {
		t.Errorf("restore again at once: %d, want 429", st)
	}
	if c := src.reg.Counter("restore_rate_limited_count", "").Load(); c != 1 {
		t.Errorf("restore_rate_limited_count %d", c)
	}

	*now = now.Add(5 * time.Minute)
	src.restoreErr = fmt.Errorf("%w: truncated", server.ErrBadSnapshot)
	st, _, m, _ = call(t, "POST", u, "digest super:test", []byte("SNAP"))
	if e, _ := m["error"].(string); st != 500 || !strings.Contains(e, "truncated") || m["last_zxid"] != nil {
		t.Errorf("bad stream: %d %v", st, m)
	}
	*now = now.Add(5 * time.Minute)
	src.restoreErr = server.ErrRestoreEnsemble
	st, _, m, _ = call(t, "POST", u, "digest super:test", []byte("SNAP"))
	if e, _ := m["error"].(string); st != 409 || !strings.Contains(e, "ensemble") {
		t.Errorf("ensemble member: %d %v", st, m)
	}
	if c := src.reg.Counter("restore_error_count", "").Load(); c != 2 {
		t.Errorf("restore_error_count %d, want 2", c)
	}
}

func TestSnapshotAndRestoreSwitches(t *testing.T) {
	_, srv, _ := newTestAdmin(t, func(c *config.Config) {
		c.Admin.SnapshotEnabled, c.Admin.RestoreEnabled, c.Admin.CommandURL = false, false, "/cmds"
	})
	if st, _, _, _ := call(t, "GET", srv.URL+"/cmds/snapshot", "digest super:test", nil); st != 503 {
		t.Errorf("disabled snapshot: %d", st)
	}
	if st, _, _, _ := call(t, "POST", srv.URL+"/cmds/restore", "digest super:test", []byte("x")); st != 503 {
		t.Errorf("disabled restore: %d", st)
	}
	if st, _, m, _ := call(t, "GET", srv.URL+"/cmds/ruok", "", nil); st != 200 || m["command"] != "ruok" {
		t.Errorf("ruok under admin.commandURL=/cmds: %d %v", st, m)
	}
}

func TestTransferLeadership(t *testing.T) {
	src, srv, _ := newTestAdmin(t, nil)
	u := srv.URL + "/commands/transfer_leadership?to=2"
	if st, _, _, _ := call(t, "POST", u, "", nil); st != 401 {
		t.Errorf("transfer without auth: %d, want 401", st)
	}
	if st, _, _, _ := call(t, "GET", u, "digest super:test", nil); st != http.StatusMethodNotAllowed {
		t.Errorf("GET transfer: %d, want 405", st)
	}
	if src.transferTo != 0 {
		t.Fatalf("refused requests reached the server: to=%d", src.transferTo)
	}
	if st, _, _, _ := call(t, "POST", srv.URL+"/commands/tlead?to=x", "digest super:test", nil); st != 400 {
		t.Errorf("transfer to=x: %d, want 400", st)
	}
	st, _, m, _ := call(t, "POST", u, "digest super:test", nil)
	if st != 200 || m["transfer_to"] != float64(2) || src.transferTo != 2 {
		t.Errorf("transfer: %d %v (server saw to=%d)", st, m, src.transferTo)
	}
	src.transferErr = zab.ErrNotLeader
	if st, _, m, _ := call(t, "POST", u, "digest super:test", nil); st != http.StatusConflict || m["error"] == nil {
		t.Errorf("transfer on a follower: %d %v, want 409 with an error", st, m)
	}
	src.transferErr = zab.ErrTransferTarget
	if st, _, _, _ := call(t, "POST", u, "digest super:test", nil); st != 400 {
		t.Errorf("transfer to an observer: %d, want 400", st)
	}
}
