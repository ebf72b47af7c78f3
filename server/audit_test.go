package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/wire"
)

func TestAuditFormat(t *testing.T) {
	e := auditEvent{session: "0x1", user: "alice,127.0.0.1", ip: "127.0.0.1", op: auditSetACL, znode: "/a",
		acl:    auditACL([]wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "anyone"}}, {Perms: wire.PermRead | wire.PermWrite, ID: wire.Id{Scheme: "ip", ID: "10.0.0.1"}}}),
		result: auditFailure}
	want := "session=0x1\tuser=alice,127.0.0.1\tip=127.0.0.1\toperation=setAcl\tznode=/a\tacl=world:anyone:cdrwaip:10.0.0.1:rw\tresult=failure"
	if got := string(e.format(nil)); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	// ZooKeeper's order of a connection's ids (observed on 3.9.3: the
	// digest id before the ip one, whatever the order they were added in).
	ids := []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="}, {Scheme: "world", ID: "anyone"}}
	if got := auditUsers(ids); got != "alice,127.0.0.1" {
		t.Fatalf("users %q", got)
	}
	if auditUsers(nil) != "" || createMode(wire.ModePersistentSequentialWithTTL) != "persistent_sequential_with_ttl" {
		t.Fatal("empty users or create mode")
	}
}

func TestAuditFileAndRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zookeeper_audit.log")
	a, err := openAudit(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	a.now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC) }
	// Fill past the rotation size before the writer starts: the queue
	// holds the lines, the writer rotates while draining them.
	a.size = auditMaxSize - 10
	a.start()
	a.serverEvent(auditStart, auditSuccess)
	a.add(&auditEvent{session: "0x2", op: auditDelete, znode: "/x", result: auditFailure})
	a.close()
	a.add(&auditEvent{op: "after close"}) // dropped, no panic
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "2026-01-02 03:04:05,006 INFO o.a.z.a.Slf4jAuditLogger: user=" + a.user + "\toperation=serverStart\tresult=success\n" +
		"2026-01-02 03:04:05,006 ERROR o.a.z.a.Slf4jAuditLogger: session=0x2\toperation=delete\tznode=/x\tresult=failure\n"
	if string(b) != want {
		t.Fatalf("file:\n%q\nwant\n%q", b, want)
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Fatalf("no rotated file: %v", err)
	}
	if _, err := openAudit(filepath.Join(t.TempDir(), "missing", "dir", "a.log"), slog.New(slog.DiscardHandler)); err == nil ||
		!strings.Contains(err.Error(), "audit.enable") {
		t.Fatalf("unwritable audit log: err = %v", err)
	}
}
