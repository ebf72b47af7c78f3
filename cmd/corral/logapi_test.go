package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// freePortRange finds n consecutive ports free on loopback now.
func freePortRange(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		base := 20000 + rand.IntN(40000-n)
		ok := true
		for p := base; p < base+n && ok; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// TestLogCommandsOnEnsemble starts `corral ensemble` (logs under /logs by
// default), takes the API endpoints from its "api endpoints:" line, runs
// the same `corral log` script as against a logs-only member, and then
// reads the logs it left with go-zookeeper: the API's logs are the tree's
// znodes.
func TestLogCommandsOnEnsemble(t *testing.T) {
	bin := buildCorral(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := freePortRange(t, 12)
	ens := exec.CommandContext(ctx, bin, "ensemble", "-n", "3", "-port", fmt.Sprint(base),
		"-dir", t.TempDir(), "-log-level", "warn")
	ens.Cancel = func() error { return ens.Process.Signal(syscall.SIGTERM) }
	stdout, err := ens.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ens.Stderr = os.Stderr
	if err := ens.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ens.Process.Signal(syscall.SIGTERM)
		ens.Wait()
	}()
	var connect, ep string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && (connect == "" || ep == "") {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "connect string: "); ok {
			connect = v
		}
		if v, ok := strings.CutPrefix(line, "api endpoints: "); ok {
			ep = v
		}
	}
	if connect == "" || ep == "" {
		t.Fatalf("ensemble printed no connect string or api endpoints (%q, %q)", connect, ep)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if n := len(strings.Split(ep, ",")); n != 3 {
		t.Fatalf("api endpoints %q: want 3", ep)
	}
	logScript(t, ctx, bin, ep)
	var e bytes.Buffer
	bad := exec.CommandContext(ctx, bin, "log", "stat", "-endpoints", ep, "no/such")
	bad.Stderr = &e
	if err := bad.Run(); err == nil || !strings.Contains(e.String(), "bad request") {
		t.Fatalf("stat of a bad name: %v, stderr %q", err, e.String())
	}
	// An append above the limit (the server's 1 MiB request size less the
	// multi around it) is refused with the limit.
	e.Reset()
	huge := exec.CommandContext(ctx, bin, "log", "append", "-endpoints", ep, "kept")
	huge.Stdin, huge.Stderr = bytes.NewReader(make([]byte, 1<<20)), &e
	if err := huge.Run(); err == nil || !strings.Contains(e.String(), "too large") || !strings.Contains(e.String(), "1032192") {
		t.Fatalf("append of 1 MiB: %v, stderr %q", err, e.String())
	}

	// The same state through ZooKeeper: log "kept" is a znode with its
	// control record, its entries children named by offset; "events" is
	// gone (deleted by the script).
	c, _, err := zk.Connect(strings.Split(connect, ","), 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data, _, err := c.Get("/logs/kept")
	if err != nil || string(data) != "zkrl1 start=0 end=3006 sealed=false" {
		t.Fatalf("getData /logs/kept: %q, %v", data, err)
	}
	kids, _, err := c.Children("/logs/kept")
	if err != nil || strings.Join(kids, ",") != "00000000000000000000,00000000000000000006" && strings.Join(kids, ",") != "00000000000000000006,00000000000000000000" {
		t.Fatalf("children of /logs/kept: %v, %v", kids, err)
	}
	big, st, err := c.Get("/logs/kept/00000000000000000006")
	if err != nil || !bytes.Equal(big, bytes.Repeat([]byte("x"), 3000)) || st.DataLength != 3000 {
		t.Fatalf("getData of the large entry: %d bytes, dataLength %d, %v", len(big), st.DataLength, err)
	}
	if ok, _, err := c.Exists("/logs/events"); ok || err != nil {
		t.Fatalf("deleted log events: exists=%v, %v", ok, err)
	}

	// A ZooKeeper client appends with the encoding rlog.md gives (a
	// multi: the control record advanced with its version, the entry
	// named by the old end), and the API reads it.
	_, st, err = c.Get("/logs/kept")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Multi(
		&zk.SetDataRequest{Path: "/logs/kept", Data: []byte("zkrl1 start=0 end=3009 sealed=false"), Version: st.Version},
		&zk.CreateRequest{Path: "/logs/kept/00000000000000003006", Data: []byte("zk\n"), Acl: zk.WorldACL(zk.PermAll)},
	); err != nil {
		t.Fatalf("append by multi: %v", err)
	}
	out, err := exec.CommandContext(ctx, bin, "log", "read", "-endpoints", ep, "-offset", "3004", "kept").Output()
	if err != nil || string(out) != "xxzk\n" {
		t.Fatalf("read after a ZooKeeper append: %q, %v", out, err)
	}
	// What would break the log's offsets is refused, whoever sends it.
	_, st, err = c.Get("/logs/kept")
	if err != nil {
		t.Fatal(err)
	}
	acl := zk.WorldACL(zk.PermAll)
	for what, err := range map[string]error{
		"a sequential create": func() error {
			_, err := c.Create("/logs/kept/e-", []byte("x"), zk.FlagSequence, acl)
			return err
		}(),
		"a create at the end without the record": func() error {
			_, err := c.Create("/logs/kept/00000000000000003009", []byte("x"), 0, acl)
			return err
		}(),
		"the start moved down": func() error {
			_, err := c.Set("/logs/kept", []byte("zkrl1 start=0 end=3009 sealed=false"), -1)
			if err != nil {
				return err
			}
			_, err = c.Set("/logs/kept", []byte("zkrl1 start=0 end=3009 sealed=false"), -1) // no change is fine
			if err != nil {
				return err
			}
			_, err = c.Set("/logs/kept", []byte("zkrl1 start=3 end=3009 sealed=false"), -1)
			if err != nil {
				return err
			}
			_, err = c.Set("/logs/kept", []byte("zkrl1 start=2 end=3009 sealed=false"), -1)
			return err
		}(),
		"the end moved alone": func() error {
			_, err := c.Set("/logs/kept", []byte("zkrl1 start=3 end=3010 sealed=false"), -1)
			return err
		}(),
		"an entry above the start deleted": c.Delete("/logs/kept/00000000000000000000", -1),
		"an append of the wrong size": func() error {
			_, err := c.Multi(
				&zk.SetDataRequest{Path: "/logs/kept", Data: []byte("zkrl1 start=3 end=3019 sealed=false"), Version: -1},
				&zk.CreateRequest{Path: "/logs/kept/00000000000000003009", Data: []byte("short"), Acl: acl},
			)
			return err
		}(),
		"an ephemeral entry": func() error {
			_, err := c.Multi(
				&zk.SetDataRequest{Path: "/logs/kept", Data: []byte("zkrl1 start=3 end=3010 sealed=false"), Version: -1},
				&zk.CreateRequest{Path: "/logs/kept/00000000000000003009", Data: []byte("e"), Acl: acl, Flags: zk.FlagEphemeral},
			)
			return err
		}(),
		"the record replaced": func() error {
			_, err := c.Set("/logs/kept", []byte("mine"), -1)
			return err
		}(),
	} {
		if err != zk.ErrBadArguments {
			t.Errorf("%s: %v, want bad arguments", what, err)
		}
	}
	if out, err := exec.CommandContext(ctx, bin, "log", "stat", "-endpoints", ep, "kept").Output(); err != nil || string(out) != "start=3 end=3009 committed=3009 sealed=false\n" {
		t.Fatalf("stat after the refusals: %q, %v", out, err)
	}

	// A log a ZooKeeper client created empty takes API appends: the first
	// sets its control record.
	if _, err := c.Create("/logs/plain", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	app := exec.CommandContext(ctx, bin, "log", "append", "-endpoints", ep, "plain")
	app.Stdin = strings.NewReader("first")
	if out, err := app.Output(); err != nil || string(out) != "0\n" {
		t.Fatalf("append to a log created empty: %q, %v", out, err)
	}
	// The append went through the API's own session, perhaps at another
	// member: this session syncs before it reads, as ZooKeeper asks.
	if _, err := c.Sync("/logs/plain"); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get("/logs/plain"); err != nil || string(data) != "zkrl1 start=0 end=5 sealed=false" {
		t.Fatalf("getData /logs/plain: %q, %v", data, err)
	}

	// The same multi again (a stale version) fails as a whole.
	if _, err := c.Multi(
		&zk.SetDataRequest{Path: "/logs/kept", Data: []byte("zkrl1 start=0 end=3012 sealed=false"), Version: st.Version},
		&zk.CreateRequest{Path: "/logs/kept/00000000000000003009", Data: []byte("no\n"), Acl: zk.WorldACL(zk.PermAll)},
	); err != zk.ErrBadVersion {
		t.Fatalf("stale append by multi: %v, want bad version", err)
	}
}
