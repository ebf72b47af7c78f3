package cli

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

func TestSplitLine(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{"ls /", []string{"ls", "/"}},
		{"  ls   -s\t/a  ", []string{"ls", "-s", "/a"}},
		{`set /a "hello world"`, []string{"set", "/a", "hello world"}},
		{`create /r/q 'a b' "x"`, []string{"create", "/r/q", "a b", "x"}},
		{`create /e ""`, []string{"create", "/e", ""}},
		{`set /a it's`, []string{"set", "/a", "it's"}},                 // a quote inside a word is a character
		{`set /a "unclosed x`, []string{"set", "/a", "unclosed", "x"}}, // an unmatched quote is dropped
		{`set /a 'x'y`, []string{"set", "/a", "x", "y"}},
		{`set /a "it's"`, []string{"set", "/a", "it's"}},
		{"", nil},
	}
	for _, c := range cases {
		if got := splitLine(c.line); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitLine(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

func TestParseOpts(t *testing.T) {
	spec := optSpec{flags: "sw", valued: "v"}
	cases := []struct {
		args    []string
		set     string
		values  map[byte]string
		pos     []string
		wantErr string
	}{
		{args: []string{"/a"}, pos: []string{"/a"}},
		{args: []string{"-s", "-w", "/a"}, set: "sw", pos: []string{"/a"}},
		{args: []string{"-sw", "/a"}, set: "sw", pos: []string{"/a"}},
		{args: []string{"/a", "data", "-s", "-v", "3"}, set: "sv", values: map[byte]string{'v': "3"}, pos: []string{"/a", "data"}},
		{args: []string{"-v3", "/a"}, set: "v", values: map[byte]string{'v': "3"}, pos: []string{"/a"}},
		{args: []string{"-sv", "-1", "/a"}, set: "sv", values: map[byte]string{'v': "-1"}, pos: []string{"/a"}},
		{args: []string{"--", "/a", "-s"}, pos: []string{"/a", "-s"}},
		{args: []string{"/a", "-"}, pos: []string{"/a", "-"}},
		{args: []string{"-z", "/a"}, wantErr: "Unrecognized option: -z"},
		{args: []string{"-sz", "/a"}, wantErr: "Unrecognized option: -z"},
		{args: []string{"/a", "-v"}, wantErr: "Missing argument for option: v"},
	}
	for _, c := range cases {
		o, err := parseOpts(c.args, spec)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr || exitStatus(err) != ExitUsage {
				t.Errorf("parseOpts(%q) err = %v, want usage error %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseOpts(%q): %v", c.args, err)
			continue
		}
		for _, f := range []byte("swv") {
			if o.has(f) != contains(c.set, f) {
				t.Errorf("parseOpts(%q): has(%c) = %v", c.args, f, o.has(f))
			}
		}
		if c.values == nil {
			c.values = map[byte]string{}
		}
		if !reflect.DeepEqual(o.values, c.values) || !reflect.DeepEqual(o.args, c.pos) {
			t.Errorf("parseOpts(%q) = values %q args %q, want %q %q", c.args, o.values, o.args, c.values, c.pos)
		}
	}
}

func TestIntValue(t *testing.T) {
	o, _ := parseOpts([]string{"-v", "x"}, optSpec{valued: "v"})
	if _, err := o.intValue('v', -1, "-v argument must be an int value"); err == nil || exitStatus(err) != ExitUsage {
		t.Fatalf("intValue(x) err = %v, want a usage error", err)
	}
	o, _ = parseOpts([]string{"-v", "7"}, optSpec{valued: "v"})
	if n, err := o.intValue('v', -1, ""); n != 7 || err != nil {
		t.Fatalf("intValue(7) = %d, %v", n, err)
	}
	if n, err := o.intValue('b', 1000, ""); n != 1000 || err != nil {
		t.Fatalf("absent intValue = %d, %v, want the default", n, err)
	}
}

// Messages as zkCli prints them for the same paths.
func TestValidatePath(t *testing.T) {
	cases := []struct {
		path string
		seq  bool
		want string
	}{
		{"/", false, ""},
		{"/a/b", false, ""},
		{"/a/", true, ""},
		{"/a/.b", false, ""},
		{"/a/b..", false, ""},
		{"foo", false, "Path must start with / character"},
		{"", false, "Path length must be > 0"},
		{"/a/", false, "Path must not end with / character"},
		{"/a//b", false, `Invalid path string "/a//b" caused by empty node name specified @3`},
		{"/a/../b", false, `Invalid path string "/a/../b" caused by relative paths not allowed @4`},
		{"/a/.", false, `Invalid path string "/a/." caused by relative paths not allowed @3`},
		{"/a/b\tx", false, `Invalid path string "/a/b` + "\t" + `x" caused by invalid character @4`},
		{"/a\x00", false, `Invalid path string "/a` + "\x00" + `" caused by null character not allowed @2`},
		{"/\U0001F600", false, `Invalid path string "/` + "\U0001F600" + `" caused by invalid character @1`},
		{"/\xff", false, `Invalid path string "/` + "\xff" + `" caused by invalid character @1`},
	}
	for _, c := range cases {
		err := validatePath(c.path, c.seq)
		got := ""
		if err != nil {
			got = err.Error()
			if exitStatus(err) != ExitUsage {
				t.Errorf("validatePath(%q) is not a usage error", c.path)
			}
		}
		if got != c.want {
			t.Errorf("validatePath(%q, %v) = %q, want %q", c.path, c.seq, got, c.want)
		}
	}
}

func TestParseACL(t *testing.T) {
	got, err := parseACL("world:anyone:cdrwa,digest:user:c2VjcmV0:rw,auth::cdrwa,ip:10.0.0.0/8:r,sasl:bob:")
	if err != nil {
		t.Fatal(err)
	}
	want := []client.ACL{
		{Perms: wire.PermAll, ID: client.ID{Scheme: "world", ID: "anyone"}},
		{Perms: wire.PermRead | wire.PermWrite, ID: client.ID{Scheme: "digest", ID: "user:c2VjcmV0"}},
		{Perms: wire.PermAll, ID: client.ID{Scheme: "auth", ID: ""}},
		{Perms: wire.PermRead, ID: client.ID{Scheme: "ip", ID: "10.0.0.0/8"}},
		{Perms: 0, ID: client.ID{Scheme: "sasl", ID: "bob"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseACL = %+v, want %+v", got, want)
	}
	for acl, msg := range map[string]string{
		"foo:bar":                 "foo:bar does not have the form scheme:id:perm",
		"x":                       "x does not have the form scheme:id:perm",
		"world:anyone:rz":         "Unknown perm type: z",
		"world:anyone:r,ip:1.2.3": "ip:1.2.3 does not have the form scheme:id:perm",
	} {
		if _, err := parseACL(acl); err == nil || err.Error() != msg || exitStatus(err) != ExitUsage {
			t.Errorf("parseACL(%q) err = %v, want usage error %q", acl, err, msg)
		}
	}
}

func TestCompleteCommand(t *testing.T) {
	cases := []struct {
		line    string
		pos     int
		want    string
		wantPos int
		ok      bool
	}{
		{"getA", 4, "getA", 4, true},                 // getAcl, getAllChildrenNumber: common prefix only
		{"getAc", 5, "getAcl ", 7, true},             // unique: completed with a space
		{"remo /x", 4, "removewatches /x", 13, true}, // completes in the middle of a line
		{"zz", 2, "", 0, false},
		{"ls /a", 5, "", 0, false}, // arguments are not completed
	}
	for _, c := range cases {
		line, pos, ok := completeCommand(c.line, c.pos, '\t')
		if ok != c.ok || line != c.want || pos != c.wantPos {
			t.Errorf("complete(%q, %d) = %q, %d, %v; want %q, %d, %v", c.line, c.pos, line, pos, ok, c.want, c.wantPos, c.ok)
		}
	}
	if _, _, ok := completeCommand("ls", 2, 'x'); ok {
		t.Error("a key other than Tab completed")
	}
}

// The terminal reader edits lines (here: Tab completion, a backspace, a
// history recall with the up arrow) and echoes the prompt.
func TestTermReader(t *testing.T) {
	in := strings.NewReader("getAc\t/x\x7fy\r\x1b[A\r")
	var out bytes.Buffer
	r := newTermReader(in, &out, -1)
	line, err := r.ReadLine("[zk: test(CONNECTED) 0] ")
	if err != nil || line != "getAcl /y" {
		t.Fatalf("ReadLine = %q, %v; want %q", line, err, "getAcl /y")
	}
	line, err = r.ReadLine("> ")
	if err != nil || line != "getAcl /y" {
		t.Fatalf("second ReadLine (up arrow) = %q, %v; want the previous line", line, err)
	}
	if _, err := r.ReadLine("> "); err != io.EOF {
		t.Fatalf("ReadLine at end of input: err = %v, want io.EOF", err)
	}
	if !strings.Contains(out.String(), "[zk: test(CONNECTED) 0] ") {
		t.Fatalf("prompt not shown; terminal output %q", out.String())
	}
}

// TestReconfigOptions: reconfig's single-dash long options and the
// checks zkCli's ReconfigCommand makes before calling the server.
func TestReconfigOptions(t *testing.T) {
	cmd, _ := lookup("reconfig")
	o, err := parseOpts([]string{"-s", "-v", "10000000a", "-add", "server.4=h:1:2;3,server.5=h:4:5;6", "-remove", "1,2"}, cmd.spec)
	if err != nil {
		t.Fatal(err)
	}
	if !o.has('s') || o.values['v'] != "10000000a" || o.longs["add"] != "server.4=h:1:2;3,server.5=h:4:5;6" || o.longs["remove"] != "1,2" {
		t.Fatalf("parsed %+v", o)
	}
	if _, err := parseOpts([]string{"-add"}, cmd.spec); err == nil {
		t.Fatal("-add without a value accepted")
	}
	for _, args := range [][]string{{}, {"-members", "server.1=h:1:2;3", "-remove", "1"}, {"-v", "xyz", "-remove", "1"}} {
		o, err := parseOpts(args, cmd.spec)
		if err != nil {
			t.Fatal(err)
		}
		var u *usageError
		if err := cmdReconfig(nil, nil, o, io.Discard); !errors.As(err, &u) {
			t.Errorf("%q: got %v, want a usage error", args, err)
		}
	}
	if got, want := clientConfigString("server.1=h:1:2:participant;127.0.0.1:2181\nserver.2=h:3:4:observer;2182\nversion=1a"),
		"1a 127.0.0.1:2181,0.0.0.0:2182"; got != want {
		t.Fatalf("config -c: %q, want %q", got, want)
	}
}
