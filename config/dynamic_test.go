package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseServerSpec(t *testing.T) {
	good := []struct {
		spec string
		want Server
	}{
		{"server.4=127.0.0.1:2891:3891:participant;127.0.0.1:2184",
			Server{ID: 4, Host: "127.0.0.1", QuorumPort: 2891, ElectionPort: 3891, ClientAddr: "127.0.0.1", ClientPort: 2184}},
		{"server.5=localhost:2892:3892:observer;2185",
			Server{ID: 5, Host: "localhost", QuorumPort: 2892, ElectionPort: 3892, Observer: true, ClientPort: 2185}},
		{" server.6 = [::1]:2893:3893;[::1]:2186",
			Server{ID: 6, Host: "::1", QuorumPort: 2893, ElectionPort: 3893, ClientAddr: "::1", ClientPort: 2186}},
		{"server.7=h:1:2", Server{ID: 7, Host: "h", QuorumPort: 1, ElectionPort: 2}},
		{"8=h:1:2;3", Server{ID: 8, Host: "h", QuorumPort: 1, ElectionPort: 2, ClientPort: 3}},
	}
	for _, g := range good {
		got, err := ParseServerSpec(g.spec)
		if err != nil {
			t.Errorf("%q: %v", g.spec, err)
			continue
		}
		if got != g.want {
			t.Errorf("%q: got %+v, want %+v", g.spec, got, g.want)
		}
	}
	bad := []string{
		"", "server.4", "server.x=h:1:2;3", "server.0=h:1:2;3", "server.4=h:1;3",
		"server.4=h:1:1;3", "server.4=h:1:2:leader;3", "server.4=h:1:2;0", "server.4=h:1:2;3=4",
		"server.4=:1:2;3", "server.4=h:1:2;a:b:c",
	}
	for _, spec := range bad {
		if _, err := ParseServerSpec(spec); !errors.Is(err, ErrServerSpec) {
			t.Errorf("%q: got %v, want ErrServerSpec", spec, err)
		}
	}
}

func TestParseDynamicRoundTrip(t *testing.T) {
	text := "server.2=127.0.0.1:2889:3889:participant;0.0.0.0:2182\n" +
		"server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n" +
		"server.3=127.0.0.1:2890:3890:observer\n" +
		"version=10000000a"
	servers, version, hasVersion, err := ParseDynamic(text)
	if err != nil {
		t.Fatal(err)
	}
	if !hasVersion || version != 0x10000000a || len(servers) != 3 || servers[0].ID != 1 {
		t.Fatalf("got %+v version %x %v", servers, version, hasVersion)
	}
	want := "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n" +
		"server.2=127.0.0.1:2889:3889:participant;0.0.0.0:2182\n" +
		"server.3=127.0.0.1:2890:3890:observer\n" +
		"version=10000000a"
	if got := FormatQuorumConfig(servers, version); got != want {
		t.Fatalf("formatted\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{
		"server.1=h:1:2\nserver.1=h:3:4", "server.1=h:1:2\nversion=xyz", "server.1=h:1:2\nclientPort=5",
		"server.1=h:1:2\ngroup.1=1", "server.a=h:1:2",
	} {
		if _, _, _, err := ParseDynamic(bad); !errors.Is(err, ErrServerSpec) {
			t.Errorf("%q: got %v, want ErrServerSpec", bad, err)
		}
	}
}

func TestCheckAddresses(t *testing.T) {
	a := Server{ID: 1, Host: "h", QuorumPort: 1, ElectionPort: 2}
	b := Server{ID: 2, Host: "h", QuorumPort: 3, ElectionPort: 1}
	if err := CheckAddresses([]Server{a, b}); !errors.Is(err, ErrServerSpec) {
		t.Fatalf("shared port: got %v", err)
	}
	b.ElectionPort = 4
	if err := CheckAddresses([]Server{a, b}); err != nil {
		t.Fatal(err)
	}
}

// TestWriteDynamicConfig: the files a committed reconfiguration leaves
// read back as the new configuration.
func TestWriteDynamicConfig(t *testing.T) {
	dir := t.TempDir()
	static := filepath.Join(dir, "zoo.cfg")
	cfgText := "tickTime=2000\ndataDir=" + dir + "\ninitLimit=5\nsyncLimit=2\nclientPort=2181\nreconfigEnabled=true\n" +
		"server.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\nserver.3=127.0.0.1:2890:3890\n"
	if err := os.WriteFile(static, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	servers, _, _, err := ParseDynamic("server.1=127.0.0.1:2888:3888:participant;2181\nserver.2=127.0.0.1:2889:3889:participant;2182\n" +
		"server.4=127.0.0.1:2891:3891:observer;2184")
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := WriteDynamicConfig(static, servers, 0x200000003, true)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dyn) != "zoo.cfg.dynamic.200000003" {
		t.Fatalf("dynamic file %s", dyn)
	}
	st, _ := os.ReadFile(static)
	if strings.Contains(string(st), "server.") || strings.Contains(string(st), "clientPort") ||
		!strings.Contains(string(st), "dynamicConfigFile=") {
		t.Fatalf("static file:\n%s", st)
	}
	c, _, err := Parse(strings.NewReader(string(st)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.ConfigVersion != 0x200000003 || len(c.Servers) != 3 || !c.Servers[2].Observer || c.Servers[2].ID != 4 {
		t.Fatalf("read back: version %x servers %+v", c.ConfigVersion, c.Servers)
	}
	if got, want := c.QuorumConfig(), FormatQuorumConfig(servers, 0x200000003); got != want {
		t.Fatalf("QuorumConfig\n%s\nwant\n%s", got, want)
	}
}

// TestNextDynamicConfigAtLoad: Load reads zoo.cfg.dynamic.next beside a
// dynamicConfigFile when it is newer than the committed configuration,
// ignores it otherwise or without a dynamicConfigFile (as ZooKeeper's
// QuorumPeerConfig.parse), and refuses one that does not parse.
func TestNextDynamicConfigAtLoad(t *testing.T) {
	dir := t.TempDir()
	static := filepath.Join(dir, "zoo.cfg")
	base := "tickTime=2000\ndataDir=" + dir + "\ninitLimit=5\nsyncLimit=2\nreconfigEnabled=true\n"
	lines := "server.1=127.0.0.1:2888:3888:participant;2181\nserver.2=127.0.0.1:2889:3889:participant;2182\n"
	three, _, _, err := ParseDynamic(lines + "server.3=127.0.0.1:2890:3890:participant;2183")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, MyIDFile), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func() *Config {
		t.Helper()
		c, _, err := Load(static, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Servers in the static file: a .next is not read.
	if err := os.WriteFile(static, []byte(base+lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteNextDynamicConfig(static, three, 0x100000003); err != nil {
		t.Fatal(err)
	}
	if c := load(); c.NextConfigVersion != 0 || c.NextServers != nil {
		t.Fatalf("next read without a dynamicConfigFile: %x", c.NextConfigVersion)
	}
	// With a dynamic file at version 1:2, a .next at 1:3 is the last
	// proposed configuration; one at 1:2 or below is not.
	dyn := DynamicFileName(static, 0x100000002)
	if err := os.WriteFile(dyn, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(static, []byte(base+"dynamicConfigFile="+dyn+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := load(); c.ConfigVersion != 0x100000002 || c.NextConfigVersion != 0x100000003 || len(c.NextServers) != 3 {
		t.Fatalf("version %x next %x servers %d", c.ConfigVersion, c.NextConfigVersion, len(c.NextServers))
	}
	if err := WriteNextDynamicConfig(static, three, 0x100000002); err != nil {
		t.Fatal(err)
	}
	if c := load(); c.NextConfigVersion != 0 {
		t.Fatalf("a next no newer than the committed configuration was read: %x", c.NextConfigVersion)
	}
	if err := os.WriteFile(NextDynamicFileName(static), []byte("server.x=nonsense\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(static, nil); err == nil || !strings.Contains(err.Error(), "dynamic.next") {
		t.Fatalf("a .next that does not parse: err = %v", err)
	}
	if err := RemoveNextDynamicConfig(static); err != nil {
		t.Fatal(err)
	}
	if err := RemoveNextDynamicConfig(static); err != nil {
		t.Fatalf("removing an absent .next: %v", err)
	}
	load()
}

// TestBackupStaticConfig: zoo.cfg.bak is a copy of zoo.cfg.
func TestBackupStaticConfig(t *testing.T) {
	static := filepath.Join(t.TempDir(), "zoo.cfg")
	want := "tickTime=2000\nserver.1=127.0.0.1:2888:3888\n"
	if err := os.WriteFile(static, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := BackupStaticConfig(static); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(static + ".bak"); err != nil || string(got) != want {
		t.Fatalf("zoo.cfg.bak: %q, %v", got, err)
	}
	if err := BackupStaticConfig(filepath.Join(t.TempDir(), "absent.cfg")); err == nil {
		t.Fatal("backup of a missing file succeeded")
	}
}
