// Package audit runs one client script against Apache ZooKeeper 3.9.3 and
// corral, both with audit.enable=true, and compares their audit logs line
// by line (session ids and times aside).
package audit

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

var zkEnv, corralEnv *harness.Env

func TestMain(m *testing.M) {
	target := os.Getenv(harness.EnvTarget)
	os.Setenv(harness.EnvTarget, string(harness.ZooKeeper))
	zkEnv, _ = harness.NewEnv()
	os.Setenv(harness.EnvTarget, string(harness.Corral))
	var cleanup func()
	corralEnv, cleanup = harness.NewEnv()
	os.Setenv(harness.EnvTarget, target)
	code := m.Run()
	cleanup()
	os.Exit(code)
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func connect(t *testing.T, s *harness.Server, auth string) *zk.Conn {
	t.Helper()
	c, ev, err := zk.Connect([]string{s.Addr()}, 10*time.Second, zk.WithLogger(quiet{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for c.State() != zk.StateHasSession {
		select {
		case <-ev:
		case <-deadline:
			t.Fatal("no session")
		}
	}
	if auth != "" {
		if err := c.AddAuth("digest", []byte(auth)); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// script is the workload: every audited kind of write, successful and
// failed, and the ephemeral cleanup of a closed session.
func script(t *testing.T, s *harness.Server) {
	world := zk.WorldACL(zk.PermAll)
	c := connect(t, s, "alice:secret")
	step := func(what string, err error, wantErr error) {
		t.Helper()
		if err != wantErr {
			t.Fatalf("%s: err %v, want %v", what, err, wantErr)
		}
	}
	_, err := c.Create("/a", []byte("x"), 0, world)
	step("create /a", err, nil)
	_, err = c.Create("/a", nil, 0, world)
	step("create /a again", err, zk.ErrNodeExists)
	_, err = c.Create("/a/s-", nil, zk.FlagSequence, world)
	step("create sequential", err, nil)
	_, err = c.CreateContainer("/c", nil, zk.FlagContainer, world)
	step("create container", err, nil)
	_, err = c.Set("/a", []byte("y"), 0)
	step("setData", err, nil)
	_, err = c.Set("/a", []byte("z"), 7)
	step("setData bad version", err, zk.ErrBadVersion)
	_, err = c.SetACL("/a", append(zk.DigestACL(zk.PermAll, "alice", "secret"), zk.WorldACL(zk.PermRead)...), -1)
	step("setAcl", err, nil)
	_, err = c.Multi(
		&zk.CreateRequest{Path: "/m", Data: []byte("1"), Acl: world},
		&zk.CreateRequest{Path: "/m/q-", Acl: world, Flags: zk.FlagSequence},
		&zk.SetDataRequest{Path: "/m", Data: []byte("2"), Version: -1},
		&zk.DeleteRequest{Path: "/c", Version: -1},
	)
	step("multi", err, nil)
	_, err = c.Multi(
		&zk.CreateRequest{Path: "/n", Acl: world},
		&zk.DeleteRequest{Path: "/nope", Version: -1},
	)
	if err == nil {
		t.Fatal("failing multi succeeded")
	}
	step("delete missing", c.Delete("/nope", -1), zk.ErrNoNode)
	step("delete /a/s-0000000000", c.Delete("/a/s-0000000000", -1), nil)

	e := connect(t, s, "")
	_, err = e.Create("/e", nil, zk.FlagEphemeral, world)
	step("create ephemeral", err, nil)
	_, err = e.Create("/e2", []byte("x"), zk.FlagEphemeral, world)
	step("create ephemeral 2", err, nil)
	e.Close()
	// The close is applied before this reply: its audit lines precede.
	testutil.Eventually(t, 30*time.Second, "/e gone after its session closed", func() bool {
		ok, _, err := c.Exists("/e")
		if err != nil {
			t.Fatal(err)
		}
		return !ok
	})
	c.Close()
}

var (
	// The message after the logger name, in ZooKeeper's console pattern
	// ("... o.a.z.a.Slf4jAuditLogger - msg") or the audit appender's
	// ("... o.a.z.a.Slf4jAuditLogger: msg").
	auditLine = regexp.MustCompile(`(INFO|ERROR) .*Slf4jAuditLogger(?: -|:) (.*)$`)
	sessionRe = regexp.MustCompile(`session=0x[0-9a-f]+`)
)

// events extracts the audit events of a log, level first, with session
// ids numbered in order of appearance.
func events(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		m := auditLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		msg := sessionRe.ReplaceAllStringFunc(m[2], func(s string) string {
			if _, ok := ids[s]; !ok {
				ids[s] = "session=S" + string(rune('0'+len(ids)))
			}
			return ids[s]
		})
		out = append(out, m[1]+" "+msg)
	}
	// The ephemerals of one closed session are deleted in an order
	// ZooKeeper leaves to its HashSet; compare each run as a set.
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && strings.Contains(out[j], "operation=ephemeralZNodeDeletion") {
			j++
		}
		if j > i {
			sort.Strings(out[i:j])
			i = j
		} else {
			i++
		}
	}
	return out
}

func TestAuditLogMatchesZooKeeper(t *testing.T) {
	extra := []string{"audit.enable=true"}
	zks := zkEnv.StartWith(t, harness.Config{Extra: extra})
	script(t, zks)
	zks.Stop()
	want := events(t, zks.LogPath)

	auditFile := filepath.Join(t.TempDir(), "audit", "corral_audit.log")
	os.MkdirAll(filepath.Dir(auditFile), 0o755)
	cs := corralEnv.StartWith(t, harness.Config{Extra: append(extra, "audit.logFile="+auditFile)})
	script(t, cs)
	cs.Stop()
	got := events(t, auditFile)

	if len(want) < 10 {
		t.Fatalf("ZooKeeper logged %d audit events; the reference run did not audit:\n%s", len(want), strings.Join(want, "\n"))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit logs differ\nZooKeeper:\n%s\n\ncorral:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	t.Logf("%d audit events identical:\n%s", len(got), strings.Join(got, "\n"))
	// The file's own lines have ZooKeeper's appender layout.
	b, _ := os.ReadFile(auditFile)
	first := strings.SplitN(string(b), "\n", 2)[0]
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO o\.a\.z\.a\.Slf4jAuditLogger: user=\S+\toperation=serverStart\tresult=success$`).MatchString(first) {
		t.Errorf("first line %q: not ZooKeeper's layout", first)
	}
}
