package cli_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/cli"
)

// event is how the shell prints a watch event (after normalize).
func event(state, typ, path string, zxid string) string {
	return "\nWATCHER::\n\nWatchedEvent state:" + state + " type:" + typ + " path:" + path + " zxid: " + zxid + "\n"
}

var (
	connected = event("SyncConnected", "None", "null", "-1")
	closed    = event("Closed", "None", "null", "-1")
)

// testShell drives the shell through a pipe: watches of every kind, with
// each event printed before the output of the command whose reply
// followed it; history and redo; printwatches; quit. The exit status is
// that of the last command before quit.
func testShell(t *testing.T, addr string) {
	script := `create /sh x
create -e /sh/e1
getEphemerals /sh
get -w /sh
set /sh y
ls -w /sh
create /sh/k
stat -w /sh
delete /sh/k
addWatch /sh
create /sh/z

removewatches /sh
history
redo 4
bogus
printwatches off
get -w /sh
set /sh q
printwatches
printwatches on
ls /sh
get /nope
quit
ls /
`
	r := runCLI(t, addr, script)
	want := "Connecting to ADDR\n" + connected +
		"Created /sh\n" +
		"Created /sh/e1\n" +
		"[/sh/e1]\n" +
		"x\n" +
		event("SyncConnected", "NodeDataChanged", "/sh", "Z") + // set /sh y
		"[e1]\n" +
		event("SyncConnected", "NodeChildrenChanged", "/sh", "Z") + // create /sh/k
		"Created /sh/k\n" +
		stat(2, 1, 0, "0x0", 1, 2) +
		event("SyncConnected", "NodeCreated", "/sh/z", "Z") + // the persistent recursive watch
		"Created /sh/z\n" +
		event("SyncConnected", "DataWatchRemoved", "/sh", "-1") + // stat -w's
		event("SyncConnected", "PersistentWatchRemoved", "/sh", "-1") +
		"2 - getEphemerals /sh\n3 - get -w /sh\n4 - set /sh y\n5 - ls -w /sh\n6 - create /sh/k\n" +
		"7 - stat -w /sh\n8 - delete /sh/k\n9 - addWatch /sh\n10 - create /sh/z\n11 - removewatches /sh\n12 - history\n" +
		"y\n" + // redo 4 set it again
		"printwatches is off\n" +
		"[e1, z]\n" +
		closed
	if got := normalize(r.out); got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
	}
	if !strings.HasSuffix(r.err, "Command not found: bogus\nNode does not exist: /nope\n") {
		t.Errorf("stderr: %q", r.err)
	}
	if r.code != 1 {
		t.Errorf("exit status %d, want 1 (get /nope, the command before quit)", r.code)
	}
	if r := runCLI(t, addr, "", "deleteall", "/sh"); r.code != 0 {
		t.Errorf("cleanup: %+v", r)
	}
}

// testShellSessions checks connect, close and addauth: ephemeral nodes
// end with their session, credentials are per session, commands without
// a session fail with status 1, and the shell ends (at the end of input)
// with the last command's status.
func testShellSessions(t *testing.T, addr string) {
	script := strings.ReplaceAll(`create -e /ss
getEphemerals
connect ADDR
getEphemerals
stat /ss
close
ls /ss
connect
addauth digest u:p
whoami
create /ss2 x auth::cdrwa
getAcl /ss2
connect
get /ss2
addauth digest u:p
get /ss2
delete /ss2
`, "ADDR", addr)
	r := runCLI(t, addr, script)
	want := "Connecting to ADDR\n" + connected +
		"Created /ss\n" +
		"[/ss]\n" +
		closed + "Connecting to ADDR\n" + connected +
		"[]\n" +
		closed +
		"Connecting to ADDR\n" + connected +
		"Auth scheme: User\nip: 127.0.0.1\ndigest: u\n" +
		"Created /ss2\n" +
		"'digest,'u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ=\n: cdrwa\n" +
		closed + "Connecting to ADDR\n" + connected +
		"x\n"
	if got := normalize(r.out); got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
	}
	wantErr := "Node does not exist: /ss\nNot connected\nInsufficient permission : /ss2\n"
	if r.err != wantErr || r.code != 0 {
		t.Errorf("stderr %q, exit %d; want %q, 0", r.err, r.code, wantErr)
	}

	// No server there: one-shot fails with status 1 after -timeout; the
	// shell starts anyway and its commands fail.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	r = runCLI(t, dead, "", "-timeout", "500", "ls", "/")
	if r.code != 1 || !strings.HasPrefix(r.err, "Unable to connect to "+dead) {
		t.Errorf("one-shot without a server: %+v", r)
	}
	// Ctrl-C gives up connecting (the timeout here is far beyond the
	// test's own).
	interrupts := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case interrupts <- os.Interrupt:
			case <-done:
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	var errb bytes.Buffer
	code := cli.Main(context.Background(), cli.Config{
		Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &errb,
		TerminalFd: -1, Interrupts: interrupts,
	}, []string{"-server", dead, "-timeout", "3600000", "ls", "/"})
	close(done)
	if code != 1 || !strings.Contains(errb.String(), "Unable to connect to "+dead) {
		t.Errorf("interrupted connect: exit %d, stderr %q", code, errb.String())
	}
	r = runCLI(t, dead, "ls /\nversion\n", "-timeout", "500")
	if r.code != 0 || !strings.Contains(r.err, "Not connected\n") || !strings.HasSuffix(r.out, "ZooKeeper CLI version: corral test\n") {
		t.Errorf("shell without a server: %+v", r)
	}
}

// testTerminal drives the line editor (as on a terminal, minus raw
// mode): the prompt shows the server, state and command number, and
// edited lines run (backspace; Ctrl-A then Tab completing the command
// name in front of its argument).
func testTerminal(t *testing.T, addr string) {
	var out, errb bytes.Buffer
	cfg := cli.Config{
		Stdin:      strings.NewReader("ls /zoo\x7f\x7f\x7fzookeeper\r/zookeeper/quota\x01getAc\t\r"),
		Stdout:     &out,
		Stderr:     &errb,
		Terminal:   true,
		TerminalFd: -1,
		Location:   time.UTC,
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := cli.Main(ctx, cfg, []string{"-server", addr, "-timeout", "10000"})
	got := normalize(out.String())
	for _, want := range []string{
		"[zk: ADDR(CONNECTED) 0] ",
		"[config, quota]\n",
		"[zk: ADDR(CONNECTED) 1] ",
		"'world,'anyone\n: cdrwa\n",
		"[zk: ADDR(CONNECTED) 2] ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, got)
		}
	}
	if code != 0 || errb.Len() != 0 {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}
