package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-db/corral/tests/harness"
)

// step is one one-shot run and everything it must print and return
// (after normalize). The expectations are zkCli 3.9.3's texts, except
// that "Created" goes to stdout and usage errors exit 2.
type step struct {
	args     string
	out, err string
	code     int
}

func runSteps(t *testing.T, addr string, steps []step) {
	t.Helper()
	for _, s := range steps {
		r := runCLI(t, addr, "", strings.Fields(s.args)...)
		if got := normalize(r.out); got != s.out || r.err != s.err || r.code != s.code {
			t.Errorf("corral cli %s\n got: code %d\n  stdout %q\n  stderr %q\nwant: code %d\n  stdout %q\n  stderr %q",
				s.args, r.code, got, r.err, s.code, s.out, s.err)
		}
	}
}

// TestE2E runs every end-to-end test against one server.
func TestE2E(t *testing.T) {
	srv := start(t)
	addr := srv.Addr()
	t.Run("Nodes", func(t *testing.T) { testNodes(t, addr) })
	t.Run("Data", func(t *testing.T) { testData(t, addr) })
	t.Run("ACL", func(t *testing.T) { testACL(t, addr) })
	t.Run("Tree", func(t *testing.T) { testTree(t, addr) })
	t.Run("Modes", func(t *testing.T) { testModes(t, addr) })
	t.Run("Usage", func(t *testing.T) { testUsage(t, addr) })
	t.Run("Shell", func(t *testing.T) { testShell(t, addr) })
	t.Run("ShellSessions", func(t *testing.T) { testShellSessions(t, addr) })
	t.Run("Terminal", func(t *testing.T) { testTerminal(t, addr) })
	t.Run("Binary", func(t *testing.T) { testBinary(t, addr) })
}

func testNodes(t *testing.T, addr string) {
	runSteps(t, addr, []step{
		{args: "create /n", out: "Created /n\n"},
		{args: "create /n x", err: "Node already exists: /n\n", code: 1},
		{args: "create /n/a hello", out: "Created /n/a\n"},
		{args: "create -s /n/s- d", out: "Created /n/s-0000000001\n"},
		{args: "ls /n", out: "[a, s-0000000001]\n"},
		{args: "ls -s /n", out: "[a, s-0000000001]\n" + stat(2, 0, 0, "0x0", 0, 2)},
		{args: "ls /n/nope", err: "Node does not exist: /n/nope\n", code: 1},
		{args: "get /n/a", out: "hello\n"},
		{args: "get /n", out: "null\n"},
		{args: "get -s /n/a", out: "hello\n" + stat(0, 0, 0, "0x0", 5, 0)},
		{args: "get /n/nope", err: "Node does not exist: /n/nope\n", code: 1},
		{args: "stat /n/a", out: stat(0, 0, 0, "0x0", 5, 0)},
		{args: "stat /n/nope", err: "Node does not exist: /n/nope\n", code: 1},
		{args: "set -s /n/a world", out: stat(0, 1, 0, "0x0", 5, 0)},
		{args: "set -v 0 /n/a x", err: "version No is not valid : /n/a\n", code: 1},
		{args: "set /n/a xy -v 1"},
		{args: "get /n/a", out: "xy\n"},
		{args: "delete /n", err: "Node not empty: /n\n", code: 1},
		{args: "delete -v 5 /n/a", err: "version No is not valid : /n/a\n", code: 1},
		{args: "delete /n/a 2", err: "'delete path [version]' has been deprecated. Please use 'delete [-v version] path' instead.\n"},
		{args: "delete /n/a", err: "Node does not exist: /n/a\n", code: 1},
		{args: "getAllChildrenNumber /n", out: "1\n"},
		{args: "getAllChildrenNumber /n/nope", err: "Node does not exist: /n/nope\n", code: 1},
		{args: "sync /n", out: "Sync is OK\n"},
		{args: "whoami", out: "Auth scheme: User\nip: 127.0.0.1\n"},
		{args: "removewatches /n", err: "KeeperErrorCode = No such watcher for /n\n", code: 1},
		// An ephemeral node lives as long as the one-shot session.
		{args: "create -e /n/e", out: "Created /n/e\n"},
		{args: "ls /n", out: "[s-0000000001]\n"},
		{args: "getEphemerals", out: "[]\n"},
		{args: "deleteall /n"},
		{args: "ls /n", err: "Node does not exist: /n\n", code: 1},
		{args: "deleteall /n", err: "Node does not exist: /n\n", code: 1},
	})
}

func testData(t *testing.T, addr string) {
	hex := "         +-------------------------------------------------+\n" +
		"         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n" +
		"+--------+-------------------------------------------------+----------------+\n" +
		"|00000000| 00 01 02 ff 74 65 73 74                         |....test        |\n" +
		"+--------+-------------------------------------------------+----------------+\n"
	runSteps(t, addr, []step{
		{args: "create /d", out: "Created /d\n"},
		{args: "get -b /d", out: "bnVsbA==\n"}, // zkCli encodes null data as "null"
		{args: "set -b /d AAEC/3Rlc3Q="},
		{args: "get -x /d", out: hex},
		{args: "get -b /d", out: "AAEC/3Rlc3Q=\n"},
		{args: "set -b /d !!!", err: "data is not valid base64: illegal base64 data at input byte 0\n", code: 2},
		{args: "deleteall /d"},
	})
	// Arguments with spaces, and empty data, as a shell passes them.
	for _, s := range []struct {
		args []string
		out  string
	}{
		{[]string{"create", "/d2", "hello world"}, "Created /d2\n"},
		{[]string{"get", "/d2"}, "hello world\n"},
		{[]string{"set", "/d2", ""}, ""},
		{[]string{"get", "/d2"}, "\n"},
		{[]string{"delete", "/d2"}, ""},
	} {
		if r := runCLI(t, addr, "", s.args...); r.out != s.out || r.err != "" || r.code != 0 {
			t.Errorf("%q: got %+v, want stdout %q", s.args, r, s.out)
		}
	}
}

func testACL(t *testing.T, addr string) {
	runSteps(t, addr, []step{
		{args: "create /acl x world:anyone:cdra,ip:127.0.0.1:r,digest:u:h:rw", out: "Created /acl\n"},
		{args: "getAcl /acl", out: "'world,'anyone\n: cdra\n'ip,'127.0.0.1\n: r\n'digest,'u:h\n: rw\n"},
		{args: "set /acl y", err: "Insufficient permission : /acl\n", code: 1},
		{args: "setAcl -v 5 /acl world:anyone:cdrwa", err: "version No is not valid : /acl\n", code: 1},
		{args: "setAcl -s -v 0 /acl world:anyone:cdrwa", out: stat(0, 0, 1, "0x0", 1, 0)},
		{args: "getAcl -s /acl", out: "'world,'anyone\n: cdrwa\n" + stat(0, 0, 1, "0x0", 1, 0)},
		{args: "setAcl /acl foo:bar", err: "foo:bar does not have the form scheme:id:perm\n", code: 2},
		{args: "setAcl /acl world:anyone:rz", err: "Unknown perm type: z\n", code: 2},
		// auth: needs a credential in the session; a one-shot run has none.
		{args: "create /acl/f x auth::cdrwa", err: "KeeperErrorCode = InvalidACL for /acl/f\nAcl is not valid : /acl/f\n", code: 1},
		{args: "getAcl /acl/nope", err: "Node does not exist: /acl/nope\n", code: 1},
		{args: "create /acl/c", out: "Created /acl/c\n"},
		{args: "setAcl -R /acl world:anyone:cdra"},
		{args: "getAcl /acl/c", out: "'world,'anyone\n: cdra\n"},
		{args: "deleteall /acl"},
	})
}

// testTree checks ls -R's order (zkCli's, not sorted depth-first) and a
// deleteall that needs several batches in flight.
func testTree(t *testing.T, addr string) {
	var script strings.Builder
	for _, p := range []string{"/t", "/t/a", "/t/b", "/t/c", "/t/a/x", "/t/a/x/y", "/t/b/z"} {
		fmt.Fprintf(&script, "create %s\n", p)
	}
	for i := range 30 {
		fmt.Fprintf(&script, "create /t/c/n%02d\n", i)
	}
	if r := runCLI(t, addr, script.String()); r.code != 0 || r.err != "" {
		t.Fatalf("building the tree: %+v", r)
	}
	r := runCLI(t, addr, "", "ls", "-R", "/t")
	want := "/t\n/t/a\n/t/b\n/t/c\n/t/a/x\n/t/a/x/y\n/t/b/z\n"
	for i := range 30 {
		want += fmt.Sprintf("/t/c/n%02d\n", i)
	}
	if r.out != want || r.code != 0 {
		t.Fatalf("ls -R /t = %+v, want\n%s", r, want)
	}
	runSteps(t, addr, []step{
		{args: "ls -R /t/a/x/y", out: "/t/a/x/y\n"},
		{args: "ls -R /t/nope", err: "Node does not exist: /t/nope\n", code: 1},
		{args: "getAllChildrenNumber /t", out: "36\n"},
		{args: "deleteall /t -b x", err: "-b argument must be an int value\n", code: 2},
		{args: "deleteall -b 3 /t"},
		{args: "stat /t", err: "Node does not exist: /t\n", code: 1},
	})
}

func testModes(t *testing.T, addr string) {
	runSteps(t, addr, []step{
		{args: "create -c /m", out: "Created /m\n"},
		{args: "create -t 60000 /mt", out: "Created /mt\n"},
		{args: "create -t 0 /mt2", err: "ttl must be positive and cannot be larger than: 1099511627775\n", code: 2},
		{args: "create -t abc /mt2", err: "-t argument must be a long value\n", code: 2},
		{args: "create -t 1000 -e /mt2", err: "TTLs cannot be used with Ephemeral znodes\n", code: 2},
		{args: "create -t 1000 -c /mt2", err: "TTLs cannot be used with Container znodes\n", code: 2},
		{args: "create -e -c /mt2", err: "-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.\n", code: 2},
		{args: "create -s /m/", out: "Created /m/0000000000\n"},
		{args: "create -s -t 60000 /mt/q-", out: "Created /mt/q-0000000000\n"},
		{args: "deleteall /mt"},
		{args: "deleteall /m"},
	})
}

func testUsage(t *testing.T, addr string) {
	getUsage := "get [-s] [-w] [-b] [-x] path\n -b   Output data in base64 format\n -s   Print znode stats additionally\n" +
		" -w   Watch for changes on the znode\n -x   Output data in hexdump format\n"
	runSteps(t, addr, []step{
		{args: "ls", err: "ls [-s] [-w] [-R] path\n", code: 2},
		{args: "get", err: getUsage, code: 2},
		{args: "ls -z /", err: "Unrecognized option: -z\n", code: 2},
		{args: "ls foo", err: "Path must start with / character\n", code: 2},
		{args: "get /a//b", err: "Invalid path string \"/a//b\" caused by empty node name specified @3\n", code: 2},
		{args: "set -v x /a y", err: "-v argument must be an int value\n", code: 2},
		{args: "addWatch -m FOO /", err: "addWatch [-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE\n", code: 2},
		{args: "version", out: "ZooKeeper CLI version: corral test\n"},
		{args: "quit"},
		{args: "ls /zookeeper extra", out: "[config, quota]\n", err: "'ls path [watch]' has been deprecated. Please use 'ls [-w] path' instead.\n"},
	})
	r := runCLI(t, addr, "", "bogus", "/x")
	if r.code != 2 || !strings.Contains(r.err, "\tls [-s] [-w] [-R] path\n") || !strings.HasSuffix(r.err, "Command not found: bogus\n") {
		t.Errorf("unknown command: %+v", r)
	}
	r = runCLI(t, addr, "", "help")
	if r.code != 0 || !strings.Contains(r.out, "\tcreate [-s] [-e] [-c] [-t ttl] path [data] [acl]\n") {
		t.Errorf("help: %+v", r)
	}
	// Flags of the CLI itself.
	r = runCLI(t, addr, "", "-timeout", "soon", "ls", "/")
	if r.code != 2 {
		t.Errorf("bad -timeout: %+v", r)
	}
}

func testBinary(t *testing.T, addr string) {
	bin := os.Getenv(harness.EnvCorralBin)
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "corral")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/corral")
		cmd.Dir = env.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/corral: %v\n%s", err, out)
		}
	}
	for _, c := range []struct {
		args []string
		out  string
		code int
	}{
		{[]string{"ls", "/"}, "[zookeeper]\n", 0},
		{[]string{"get", "/nope"}, "", 1},
		{[]string{"ls"}, "", 2},
		{[]string{"bogus"}, "", 2},
	} {
		cmd := exec.Command(bin, append([]string{"cli", "-server", addr}, c.args...)...)
		var stdout strings.Builder
		cmd.Stdout = &stdout
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || stdout.String() != c.out {
			t.Errorf("corral cli %q: exit %d, stdout %q; want %d, %q", c.args, code, stdout.String(), c.code, c.out)
		}
	}
	// The shell reads a piped script (not a terminal: no prompt).
	cmd := exec.Command(bin, "cli", "-server", addr)
	cmd.Stdin = strings.NewReader("create /bin x\nget /bin\ndelete /bin\nget /bin\n")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("shell ending with a failed command: err %v, want exit status 1", err)
	}
	if got := normalize(string(out)); !strings.HasSuffix(got, "Created /bin\nx\n") || strings.Contains(got, "[zk:") {
		t.Errorf("shell output %q", got)
	}
}
