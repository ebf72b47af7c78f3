package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCfg writes content to dir/zoo.cfg and returns the path.
func writeCfg(t *testing.T, dir, content string) string {
	t.Helper()
	path := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeMyID(t *testing.T, dataDir, content string) {
	t.Helper()
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "myid"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const ensemble3 = "initLimit=5\nsyncLimit=2\n" +
	"server.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\nserver.3=127.0.0.1:2890:3890\n"

func TestLoadResolvesRelativeDirs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// The config file's own directory does not matter, as in ZooKeeper:
	// java.io.File resolves against the working directory.
	sub := filepath.Join(dir, "conf")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	path := writeCfg(t, sub, "dataDir=data\ndataLogDir=./logs/../txn\nclientPort=2181\n")
	c, _, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cwd, "data"); c.DataDir != want {
		t.Errorf("DataDir = %q, want %q", c.DataDir, want)
	}
	if want := filepath.Join(cwd, "txn"); c.DataLogDir != want {
		t.Errorf("DataLogDir = %q, want %q", c.DataLogDir, want)
	}

	c, _, err = Load(writeCfg(t, sub, "dataDir=data\nclientPort=2181\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cwd, "data"); c.DataLogDir != want {
		t.Errorf("default DataLogDir = %q, want dataDir %q", c.DataLogDir, want)
	}
}

func TestLoadMyID(t *testing.T) {
	tests := []struct {
		myid    string // "" means no file
		want    int64
		wantErr bool
	}{
		{"", 0, false},
		{"1", 1, false},
		{"2\n", 2, false},
		{"3\r\n", 3, false},
		{"255\nignored second line\n", 255, false},
		{"+4", 4, false},
		{"abc", 0, true},
		{"\n", 0, true},
		{"1 \n", 0, true}, // ZooKeeper does not trim either
		{" 1", 0, true},
		{"0", 0, true},
		{"256", 0, true},
		{"-1", 0, true},
		{"99999999999999999999", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.myid, func(t *testing.T) {
			dir := t.TempDir()
			dataDir := filepath.Join(dir, "data")
			if tc.myid != "" {
				writeMyID(t, dataDir, tc.myid)
			}
			c, _, err := Load(writeCfg(t, dir, "dataDir="+dataDir+"\nclientPort=2181\n"), nil)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "myid") || !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want a myid ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.MyID != tc.want {
				t.Errorf("MyID = %d, want %d", c.MyID, tc.want)
			}
		})
	}
}

func TestLoadMyIDDirectoryIsAbsent(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "myid"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, _, err := Load(writeCfg(t, dir, "dataDir="+dir+"\nclientPort=2181\n"), nil)
	if err != nil || c.MyID != 0 {
		t.Fatalf("Load = %+v, %v; want MyID 0", c, err)
	}
}

func TestLoadEnsemble(t *testing.T) {
	dir := t.TempDir()
	writeMyID(t, dir, "2\n")
	c, warnings, err := Load(writeCfg(t, dir, "dataDir="+dir+"\nclientPort=2182\n"+ensemble3), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	if !c.Distributed() || c.MyID != 2 || c.Self() == nil || c.Self().QuorumPort != 2889 {
		t.Errorf("Distributed = %v, MyID = %d, Self = %+v", c.Distributed(), c.MyID, c.Self())
	}
	if got := c.ClientListenAddr(); got != "127.0.0.1:2182" {
		t.Errorf("ClientListenAddr = %q", got)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, cfg, myid string
		want            string
	}{
		{"ensemble without myid", ensemble3, "", "myid file is missing"},
		{"myid not in server list", ensemble3, "4", "myid 4 has no server.4 line"},
		{"one-server ensemble without myid", "standaloneEnabled=false\ninitLimit=1\nsyncLimit=1\nserver.1=127.0.0.1:2888:3888\n", "", "myid file is missing"},
		{"extended types with id 255", "extendedTypesEnabled=true\n", "255", "extendedTypesEnabled"},
		{"own line without client port", "initLimit=5\nsyncLimit=2\nserver.1=a:1:2;2181\nserver.2=b:1:2\nserver.3=c:1:2;2181\n", "2", "clientPort: not set"},
		{"clientPort differs from own line", "clientPort=2181\ninitLimit=5\nsyncLimit=2\nserver.1=a:1:2;2182\nserver.2=b:1:2\nserver.3=c:1:2\n", "1", "differs from server.1"},
		{"clientPortAddress differs from own line", "clientPort=2181\nclientPortAddress=127.0.0.1\ninitLimit=5\nsyncLimit=2\nserver.1=a:1:2;10.0.0.1:2181\nserver.2=b:1:2\nserver.3=c:1:2\n", "1", "differs from server.1"},
		{"specific clientPortAddress vs wildcard line", "clientPort=2181\nclientPortAddress=127.0.0.1\ninitLimit=5\nsyncLimit=2\nserver.1=a:1:2;2181\nserver.2=b:1:2\nserver.3=c:1:2\n", "1", "differs from server.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.myid != "" {
				writeMyID(t, dir, tc.myid)
			}
			cfg := "dataDir=" + dir + "\n" + tc.cfg
			if !strings.Contains(cfg, "clientPort") && !strings.Contains(cfg, ";2181") {
				cfg += "clientPort=2181\n"
			}
			path := writeCfg(t, dir, cfg)
			_, _, err := Load(path, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) || !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid naming %q and %q", err, path, tc.want)
			}
		})
	}
}

func TestLoadClientAddressAgreement(t *testing.T) {
	tests := []struct{ static, line, want string }{
		{"clientPort=2181\n", ";2181", "127.0.0.1:2181"},
		{"clientPort=2181\n", ";10.0.0.1:2181", "10.0.0.1:2181"},
		{"clientPort=2181\nclientPortAddress=0.0.0.0\n", ";10.0.0.1:2181", "10.0.0.1:2181"},
		{"clientPort=2181\nclientPortAddress=10.0.0.1\n", ";10.0.0.1:2181", "10.0.0.1:2181"},
		{"clientPort=2181\nclientPortAddress=10.0.0.1\n", "", "10.0.0.1:2181"},
		{"", ";2181", "127.0.0.1:2181"},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		writeMyID(t, dir, "1")
		cfg := "dataDir=" + dir + "\n" + tc.static + "initLimit=5\nsyncLimit=2\n" +
			"server.1=a:1:2" + tc.line + "\nserver.2=b:1:2\nserver.3=c:1:2\n"
		c, _, err := Load(writeCfg(t, dir, cfg), nil)
		if err != nil {
			t.Errorf("%q %q: %v", tc.static, tc.line, err)
			continue
		}
		if got := c.ClientListenAddr(); got != tc.want {
			t.Errorf("%q %q: ClientListenAddr = %q, want %q", tc.static, tc.line, got, tc.want)
		}
	}
}

func TestLoadExtendedTypesID254(t *testing.T) {
	dir := t.TempDir()
	writeMyID(t, dir, "254")
	if _, _, err := Load(writeCfg(t, dir, "dataDir="+dir+"\nclientPort=2181\nextendedTypesEnabled=true\n"), nil); err != nil {
		t.Fatal(err)
	}
}

func TestLoadPeerTypeMismatchWarns(t *testing.T) {
	dir := t.TempDir()
	writeMyID(t, dir, "1")
	_, warnings, err := Load(writeCfg(t, dir, "dataDir="+dir+"\nclientPort=2181\npeerType=observer\n"+ensemble3), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "peerType=observer does not match server.1 (participant)") {
		t.Errorf("warnings = %q", warnings)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, _, err := Load(filepath.Join(t.TempDir(), "nope.cfg"), nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want ErrNotExist", err)
	}
}

func TestLoadDynamicConfigFile(t *testing.T) {
	dir := t.TempDir()
	writeMyID(t, dir, "3")
	dyn := filepath.Join(dir, "zoo.cfg.dynamic.100000000")
	// What ZooKeeper writes after its first start with reconfigEnabled.
	if err := os.WriteFile(dyn, []byte(
		"server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\n"+
			"server.2=127.0.0.1:2889:3889:participant;0.0.0.0:2182\n"+
			"server.3=127.0.0.1:2890:3890:participant;0.0.0.0:2183\n"+
			"version=100000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _, err := Load(writeCfg(t, dir, "dataDir="+dir+"\ninitLimit=5\nsyncLimit=2\nreconfigEnabled=true\ndynamicConfigFile="+dyn+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Servers) != 3 || c.ClientListenAddr() != "0.0.0.0:2183" {
		t.Errorf("Servers = %+v, ClientListenAddr = %q", c.Servers, c.ClientListenAddr())
	}

	// Static server lines next to a dynamic file are refused, as by ZooKeeper.
	_, _, err = Load(writeCfg(t, dir, "dataDir="+dir+"\ninitLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888;2181\ndynamicConfigFile="+dyn+"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "server.1") {
		t.Errorf("static server lines with dynamicConfigFile: err = %v", err)
	}

	// Only server.N and version may appear in the dynamic file.
	if err := os.WriteFile(dyn, []byte("server.1=127.0.0.1:2888:3888;2181\ntickTime=100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(writeCfg(t, dir, "dataDir="+dir+"\ndynamicConfigFile="+dyn+"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "tickTime") || !strings.Contains(err.Error(), dyn) {
		t.Errorf("bad dynamic file: err = %v", err)
	}
}

func TestWriteMyID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	c := Default()
	c.DataDir, c.MyID = dir, 7
	if err := c.WriteMyID(); err != nil {
		t.Fatal(err)
	}
	if id, err := readMyID(filepath.Join(dir, MyIDFile)); err != nil || id != 7 {
		t.Errorf("readMyID = %d, %v", id, err)
	}
	c.MyID = 0
	if err := c.WriteMyID(); !errors.Is(err, ErrInvalid) {
		t.Errorf("WriteMyID without id: %v", err)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
