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
