package kv_test

import (
	"fmt"
	"strings"
	"testing"
)

func TestCommands(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) { testCommands(t, n) })
	}
}

func testCommands(t *testing.T, n int) {
	e := startEnsemble(t, n)
	must := func(want int, args ...string) string {
		t.Helper()
		out, code := kv(t, args...)
		if code != want {
			t.Fatalf("corral kv %v: exit %d, want %d (stdout %q)", args, code, want, out)
		}
		return out
	}
	must(0, "create-table", "-endpoints", e, "users", "cf", "meta")
	must(2, "create-table", "-endpoints", e, "users", "cf")
	must(0, "put", "-endpoints", e, "users", "alice", "cf:name=Alice", "cf:eq=a=b", "meta:=empty qualifier")
	must(0, "put", "-endpoints", e, "users", "bob", "cf:name=Bob")
	must(0, "put", "-endpoints", e, "users", "carol", "cf:name=Carol")

	if got, want := must(0, "get", "-endpoints", e, "users", "alice"), "cf:eq=a=b\ncf:name=Alice\nmeta:=empty qualifier\n"; got != want {
		t.Fatalf("get row: %q, want %q", got, want)
	}
	if got, want := must(0, "get", "-endpoints", e, "users", "alice", "cf:name"), "cf:name=Alice\n"; got != want {
		t.Fatalf("get column: %q, want %q", got, want)
	}
	if got, want := must(0, "get", "-endpoints", e, "users", "alice", "meta"), "meta:=empty qualifier\n"; got != want {
		t.Fatalf("get family: %q, want %q", got, want)
	}
	if got := must(1, "get", "-endpoints", e, "users", "nobody"); got != "" {
		t.Fatalf("not-found get printed %q", got)
	}
	must(1, "get", "-endpoints", e, "users", "bob", "meta")

	if got, want := must(0, "scan", "-endpoints", e, "users", "-from", "b", "-limit", "5"), "bob cf:name=Bob\ncarol cf:name=Carol\n"; got != want {
		t.Fatalf("scan: %q, want %q", got, want)
	}
	if got, want := must(0, "scan", "-endpoints", e, "-to", "bob", "users"), "alice cf:eq=a=b\nalice cf:name=Alice\nalice meta:=empty qualifier\n"; got != want {
		t.Fatalf("scan -to: %q, want %q", got, want)
	}
	if got := must(0, "scan", "-endpoints", e, "users", "-limit", "2"); strings.Count(got, "\n") != 4 || strings.Contains(got, "carol") {
		t.Fatalf("scan -limit 2: %q", got)
	}

	must(0, "delete", "-endpoints", e, "users", "alice", "cf:eq")
	if got, want := must(0, "get", "-endpoints", e, "users", "alice", "cf"), "cf:name=Alice\n"; got != want {
		t.Fatalf("after column delete: %q, want %q", got, want)
	}
	must(0, "delete", "-endpoints", e, "users", "alice")
	must(1, "get", "-endpoints", e, "users", "alice")

	// Errors exit 2.
	must(2, "get", "-endpoints", e, "nosuchtable", "alice")
	must(2, "put", "-endpoints", e, "users", "x", "nosuchfamily:q=v")
	must(2, "put", "-endpoints", e, "users", "x", "novalue")
	must(2, "get", "-endpoints", e, "users")
	must(2, "get", "users", "x") // no endpoints
	must(2, "put", "-endpoints", e, "users", strings.Repeat("k", 5000), "cf:q=v")
	must(2, "nosuchcommand")
}
